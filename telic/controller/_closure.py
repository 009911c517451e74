"""The NextAction ``inputRefs`` closure (docs/protocol.md §3.2).

1. Seed with the latest artifact of each phase-eligible type (Evidence aside), the original
   request, and every eligible WorkPlan and WorkResult.
2. Close transitively over artifact references in body reference fields and in metadata
   sourceRefs, staying inside the run and the eligible types and skipping Evidence.
3. A closure over 256 references is an error — inputs are never silently truncated.
4. Fill what capacity is left with the most recent Evidence.
"""

from __future__ import annotations

from typing import Final

from telic._errors import LimitExceeded
from telic.controller._phases import PhaseSpec
from telic.controller._state import RunState, StoredArtifact

MAX_INPUT_REFS: Final = 256
_ALL_OF: Final = frozenset({"WorkPlan", "WorkResult"})


def _closure(state: RunState, spec: PhaseSpec) -> list[str]:
    eligible = spec.inputs - {"Evidence"}
    seed: dict[str, StoredArtifact] = {state.request.id: state.request}
    for artifact_type in sorted(eligible):
        if artifact_type in _ALL_OF:
            seed.update((a.id, a) for a in state.all(artifact_type))
        else:
            latest = state.latest(artifact_type)
            if latest is not None:
                seed[latest.id] = latest
    closed: dict[str, StoredArtifact] = {}
    frontier = list(seed.values())
    while frontier:
        artifact = frontier.pop()
        if artifact.id in closed:
            continue
        closed[artifact.id] = artifact
        for uri in artifact.refs:
            target = state.by_uri(uri)
            if target is not None and target.type in eligible and target.id not in closed:
                frontier.append(target)
    if len(closed) > MAX_INPUT_REFS:
        raise LimitExceeded(
            f"NextAction input reference closure exceeds {MAX_INPUT_REFS} references "
            f"({len(closed)}); refusing to truncate the inputs of {spec.protocol}"
        )
    return [a.uri for a in sorted(closed.values(), key=state.position)]


def _closures(state: RunState) -> dict[str, tuple[str, ...]]:
    """Phase → its NextAction's mandatory input closure, shared while only Evidence is added."""
    return {}


def input_refs(state: RunState, spec: PhaseSpec) -> tuple[str, ...]:
    """Return the inputRefs of ``spec``'s NextAction, in ledger order, Evidence last.

    Raises:
        LimitExceeded: the mandatory closure holds more than 256 references.
    """
    cache = state.carried(_closures)
    ordered = list(cache.get(spec.protocol) or _closure(state, spec))
    cache[spec.protocol] = tuple(ordered)
    room = MAX_INPUT_REFS - len(ordered)
    if "Evidence" in spec.inputs and room > 0:
        evidence = state.recent("Evidence", room)
        ordered.extend(e.uri for e in evidence)
    return tuple(ordered)
