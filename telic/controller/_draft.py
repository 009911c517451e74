"""The draft beside a phase NextAction: the required artifact with every derivable field filled.

A host model knows only what Telic tells it; values the rules demand exactly (the contract's
copy of the frame, the PromptReview coverage map, the review's criterion and requirement ids,
the audit's lineage, the report's claims and references, …) are derived here from the frozen
``RunState`` by the same ``_derive`` functions the rules compare against, so a draft and the
rule that checks it can never disagree. What only the model can author is listed in ``fill``:
one JSON pointer (RFC 6901) per field, each with one line saying what belongs there. At each
fill path the body holds a value of the right JSON type (``""``, ``[]``, the first legal enum
value or a legal example), so a client sees the type.

Choices: a fill entry may offer ``choices``; the body already holds the first one, and each
choice lists the other paths it ``set``\\ s (and any extra ``fill`` it needs), so whichever legal
choice the model takes, the rest of the draft is still accepted. Work in the execute phase cites
Evidence: the draft lists it under ``before`` (Evidence drafts with the ids the WorkResult
already cites) to be submitted first; an Evidence already stored under such an id is left out.
In the framing phase, ``instead`` holds a ClarificationRequest draft, the one alternative output.

Pure: no I/O, no clock; the same state always gives the same draft. ``docs/protocol.md`` §2.1.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, get_args

from telic.controller._authority import run_authorization
from telic.controller._derive import (
    assigned_criteria,
    breaches,
    completion_capabilities,
    contract_context_refs,
    contract_rule_refs,
    controlling_order,
    corrected_fields,
    criterion_evidence,
    current_results,
    every_uri,
    is_unlocked,
    pending_node,
    permissions_honored,
    plan_completed,
    prompt_coverage,
    report_anchor,
    report_change_refs,
    report_verification_refs,
    results_of,
    stage_criteria,
    stage_verifications,
    supported_claims,
    trace_ref,
    verification_evidence,
)
from telic.controller._phases import EXECUTING_MODES, PHASES
from telic.controller._refs import pending_answer
from telic.controller._state import RunState, StoredArtifact, artifact_uri
from telic.controller._statements import field_statements
from telic.controller._topology import RECEIPT, asked_topology, receipt_gap, serial_plan
from telic.controller._work import mutation_allowed
from telic.permissions import MUTATING_REPOSITORY, capability_backed, intersect, plan_ceiling
from telic.protocol import (
    CAPABILITIES,
    CorrectableField,
    DimensionScores,
    PermissionSet,
    json_schema,
)

JSON = dict[str, Any]

_NODE_CALLS: Final = 10


@dataclass(frozen=True, slots=True)
class Fill:
    """One field the model must author: where, what belongs there, and any choices."""

    path: str
    what: str
    choices: tuple[Mapping[str, Any], ...] = ()
    """``{value, what, set?, fill?}``: the value, what it leads to, the other paths it sets (a
    JSON pointer → value map) and the extra fields it needs authored."""
    item: Any = None
    """For an array the model may extend: one template entry (``""`` for text, ``a|b`` for an
    enum's values: pick one), built from the schema by ``Draft``; None otherwise."""
    extend: bool = False
    """The builder's ask: give this array fill entry its ``item``."""

    def to_wire(self) -> JSON:
        """Return ``{path, what, choices?, item?}``."""
        wire: JSON = {"path": self.path, "what": self.what}
        if self.choices:
            wire["choices"] = [dict(choice) for choice in self.choices]
        if self.item is not None:
            wire["item"] = self.item
        return wire


@dataclass(frozen=True, slots=True)
class Draft:
    """A draft artifact: its type, body, the fields to author, and what goes before or instead."""

    type: str
    body: Mapping[str, Any]
    fill: tuple[Fill, ...]
    source_refs: tuple[str, ...] = ()
    """The ``source_refs`` argument the submission must carry (a resumed clarification)."""
    before: tuple[Draft, ...] = ()
    instead: tuple[Draft, ...] = ()
    topology_rules: bool = field(default=True, repr=False)
    """Whether the fill lines state the ``TP-*`` rules: only a run that asked for a topology
    meets them, so a 1.0 run's drafts leave them out."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "fill", _complete(self))

    @property
    def covered(self) -> frozenset[str]:
        """The artifact types this draft writes out: its own, and those before and instead."""
        nested = (d.covered for d in (*self.before, *self.instead))
        return frozenset({self.type}).union(*nested)

    def to_wire(self) -> JSON:
        """Return ``{type, body, fill, sourceRefs?, before?, instead?}``."""
        wire: JSON = {
            "type": self.type,
            "body": self.body,
            "fill": [f.to_wire() for f in self.fill],
        }
        if self.source_refs:
            wire["sourceRefs"] = list(self.source_refs)
        if self.before:
            wire["before"] = [d.to_wire() for d in self.before]
        if self.instead:
            wire["instead"] = [d.to_wire() for d in self.instead]
        return wire


def draft_for(state: RunState) -> Draft | None:
    """Return the draft of the artifact the run's NextAction requires, or None.

    None when the run has ended, waits for its user, or its next step is the controller's own
    (grounding context).
    """
    run = state.run
    if run.terminal or run.status == "awaiting_clarification":
        return None
    if run.phase == "agent_2_revise":
        return _revision(state)
    builder = _BUILDERS.get(PHASES[run.phase].primary)
    return None if builder is None else builder(state)


# ------------------------------------------------------------------ helpers


def _uri(state: RunState, artifact_id: str) -> str:
    return artifact_uri(state.run.run_id, artifact_id)


def _fresh_id(state: RunState, prefix: str) -> str:
    """The first ``prefix-N`` no artifact of the run uses, N counting from 1."""
    n = 1
    while state.by_id(f"{prefix}-{n}") is not None:
        n += 1
    return f"{prefix}-{n}"


def _base(state: RunState, artifact_id: str) -> JSON:
    return {"schemaVersion": "1.0", "id": artifact_id, "runId": state.run.run_id}


def _no_children(permissions: PermissionSet) -> PermissionSet:
    sub = permissions.subagents.model_copy(
        update={"spawn": False, "maximum_children": 0, "maximum_depth": 0}
    )
    return permissions.model_copy(update={"subagents": sub})


def _example_path(globs: Sequence[str]) -> str:
    """A path inside the first glob of a scope, as an example of the format ("" if none)."""
    if not globs:
        return ""
    glob = globs[0]
    if not any(mark in glob for mark in "*?["):
        return glob  # an exact path is its own example
    head: str = glob.split("*", 1)[0].split("?", 1)[0].split("[", 1)[0].rstrip("/")
    return f"{head}/file" if head else "file"


_WHAT: Final = {
    "rationaleSummary": "Why.",
    "description": "What it checks, in one line.",
    "objective": "Its aim, in one line.",
    "claim": "The claim, in one line.",
}


def _empty_paths(value: Any, path: str = "") -> list[str]:
    """JSON pointers of every empty string in ``value`` (what the model still has to write)."""
    if value == "":
        return [path]
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in _empty_paths(v, f"{path}/{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _empty_paths(v, f"{path}/{i}")]
    return []


def _covered(path: str, listed: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in listed)


def _complete(draft: Draft) -> tuple[Fill, ...]:
    """``draft.fill``, the body's ``rationaleSummary`` when empty, an entry for every other empty
    string of the body it does not list yet, and each choice's ``fill`` plus the empty strings its
    ``set`` writes: nothing is left to guess. Each line then states the rules on its path
    (``_line``)."""

    def line(path: str, what: str, extend: bool = False) -> tuple[str, Any]:
        return _line(draft.type, path, what, extend, draft.topology_rules)

    authored = draft.body.get("rationaleSummary") == ""  # a revision keeps the old one
    listed = [f.path for f in draft.fill]
    fill = (*draft.fill, _SUMMARY) if authored and "/rationaleSummary" not in listed else draft.fill
    listed = [f.path for f in fill]
    # A path some choice replaces (the default's diagnosis gate, say) is authored only under the
    # choices that keep it, so no fill path ever points into a value a choice removed.
    replaced = [p for f in fill for c in f.choices for p in c.get("set") or {}]
    empty = [p for p in _empty_paths(draft.body) if not _covered(p, listed)]
    extra = [Fill(p, _what(p)) for p in empty if not _covered(p, replaced)]
    kept = [p for p in empty if _covered(p, replaced)]
    done: list[Fill] = []
    for entry in [*fill, *extra]:
        choices = []
        for choice in entry.choices:
            sets: Mapping[str, Any] = choice.get("set") or {}
            paths = [p for p in kept if not _covered(p, list(sets))]
            paths += [p for pointer, value in sets.items() for p in _empty_paths(value, pointer)]
            own = [*choice.get("fill", ()), *({"path": p, "what": _what(p)} for p in paths)]
            stated = [{**f, "what": line(f["path"], f["what"])[0]} for f in _unique(own)]
            choices.append({**choice, "fill": stated} if own else dict(choice))
        what, item = line(entry.path, entry.what, entry.extend)
        done.append(Fill(entry.path, what, tuple(choices), item))
    return tuple(done)


def _what(path: str) -> str:
    return _WHAT.get(path.rsplit("/", 1)[-1], "In your own words.")


def _unique(entries: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    first: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        first.setdefault(entry["path"], entry)
    return list(first.values())


_SUMMARY: Final = Fill("/rationaleSummary", "Why.")


# ------------------------------------------------------------------ what the type text says


def _resolved(schema: JSON, node: JSON) -> tuple[JSON, str | None]:
    """``node`` with its ``$ref`` and nullable ``anyOf`` resolved, and the ``$defs`` name."""
    name = None
    while True:
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            node = schema["$defs"][name]
            continue
        options = [o for o in node.get("anyOf", ()) if o.get("type") != "null"]
        if "anyOf" in node and len(options) == 1:
            node = options[0]
            continue
        return node, name


@functools.cache
def _located(artifact_type: str, pointer: str) -> tuple[str | None, JSON | None]:
    """The statement location (``name`` or ``Def.name``) of ``pointer`` and its schema node.

    The same locations ``telic.controller._statements`` keys its statements by and the server
    resolves in the schema: a root property, or a property of a ``$defs`` type.
    """
    schema = json_schema(artifact_type)
    node: JSON = schema
    where: str | None = None
    owner = ""
    for step, part in enumerate(pointer.split("/")[1:]):
        node, name = _resolved(schema, node)
        owner = name or ("" if step == 0 else "~")
        if node.get("type") == "array" and part.isdigit():
            node = node.get("items") or {}
            continue
        properties = node.get("properties") or {}
        if part not in properties:
            return None, None
        where = f"{owner}.{part}" if owner else part
        node = properties[part]
    return where, node


def _template(schema: JSON, node: JSON) -> Any:
    """One legal-shaped value of ``node``: "" for text, ``a|b`` for an enum, required keys."""
    if any(o.get("type") == "null" for o in node.get("anyOf", ())):
        return None
    node, _ = _resolved(schema, node)
    if "const" in node:
        return node["const"]
    values = node.get("enum")
    if values:
        return "|".join(map(str, values)) if len(values) > 1 else values[0]
    options = node.get("anyOf") or node.get("oneOf")
    if options:
        return _template(schema, options[0])
    kind = node.get("type")
    if kind == "object":
        required = node.get("required") or ()
        props = node.get("properties") or {}
        return {k: _template(schema, v) for k, v in props.items() if k in required}
    if kind == "array":  # as many entries as it needs
        return [_template(schema, node.get("items") or {})] * int(node.get("minItems", 0))
    defaults: dict[str, Any] = {"boolean": False, "null": None}
    if kind in ("integer", "number"):
        return node.get("minimum", 0)
    return defaults.get(str(kind), "")


_OBSERVED_KIND: Final = {"shell.execute": "test", "repository.read": "repository"}
"""The Evidence kind a draft proposes for what a read-only action observed, where one fits
better than ``tool_output``: a command the user granted is a test run, a read is the file."""

_ITEM_STATUS: Final = {
    ("WorkResult", "/observations"): "observed|user_reported",
    ("WorkResult", "/inferences"): "inferred|unverified",
}
"""Entry statuses a WorkResult list admits, narrower than the claim type's enum (its schema's
``observation_status`` and ``inference_status``): the item shows only what passes."""


@functools.lru_cache(maxsize=4096)
def _line(
    artifact_type: str, path: str, what: str, extend: bool = False, topology_rules: bool = True
) -> tuple[str, Any]:
    """A fill line's ``what`` with the statements on its path (and, for an array the model may
    extend, on its entry's fields) appended, and its ``item`` (None unless ``extend``).

    The item is built once per line and shared by every draft (as a draft's body is shared by
    its wire form): callers must not change it.
    """
    statements = field_statements(topology_rules)
    where, node = _located(artifact_type, path)  # the type text's words, at the same location
    said = [what, "" if where is None else statements.get((artifact_type, where), "")]
    if not extend:
        return " ".join(text for text in said if text), None
    if node is None:
        raise KeyError(f"{artifact_type} has no array at {path}")
    schema = json_schema(artifact_type)
    items, name = _resolved(schema, _resolved(schema, node)[0].get("items") or {})
    for field_name in items.get("properties") or {}:
        stated = statements.get((artifact_type, f"{name}.{field_name}"))
        if stated:
            said.append(f"{field_name}: {stated}")
    item = _template(schema, items)
    narrowed = _ITEM_STATUS.get((artifact_type, path))
    if narrowed is not None and isinstance(item, dict):
        item = {**item, "status": narrowed}
    return " ".join(text for text in said if text), item


def _grow(path: str, what: str) -> Fill:
    """A fill entry for an array the model may extend: the draft adds its ``item``."""
    return Fill(path, what, extend=True)


def _choice(value: Any, what: str, sets: JSON | None = None, *fill: tuple[str, str]) -> JSON:
    """One of ``Fill.choices``: ``{value, what, set?, fill?}``, ``fill`` as (path, what) pairs."""
    choice: JSON = {"value": value, "what": what}
    if sets is not None:
        choice["set"] = sets
    if fill:
        choice["fill"] = [{"path": path, "what": said} for path, said in fill]
    return choice


# ------------------------------------------------------------------ framing


_SHOWN: Final = {
    "repository.read": "the lines you read",
    "shell.execute": "the command and its output",
    "shell.inspect": "the inspection's output",
}
"""What an observation's Evidence holds, per capability (the draft's fill line)."""


def _stages(state: RunState) -> tuple[str, ...]:
    """The stages of a run's criteria and verifications: analyze_and_fix diagnoses first."""
    diagnoses = state.run.requested_mode == "analyze_and_fix"
    return ("diagnosis", "completion") if diagnoses else ("completion",)


def _frame(state: RunState) -> Draft:
    request = state.request.uri
    criteria = [
        {"id": f"AC-{i}", "stage": stage, "requirement": "", "evidenceRequired": ["test"]}
        for i, stage in enumerate(_stages(state), start=1)
    ]
    if state.run.topology == "micro":  # exactly one criterion (TP-MICRO-FRAME-CRITERIA)
        criteria = criteria[-1:]
    body = _base(state, _fresh_id(state, "frame")) | {
        "originalRequestRef": request,
        "intentMode": state.run.requested_mode,
        "goal": "",
        "knownFacts": [{"id": "F-1", "claim": "", "provenance": "user", "sourceRef": request}],
        "inferences": [],
        "unknowns": [],
        "scope": {"include": [], "exclude": []},
        "constraints": [],
        "nonGoals": [],
        "applicableRuleRefs": [],
        "draftAcceptanceCriteria": criteria,
        "clarification": {"required": False, "reason": None},
        "rationaleSummary": "",
    }
    fill = [
        Fill("/goal", "The user's goal in one sentence."),
        Fill("/knownFacts/0/claim", "What the user's request states."),
        _grow("/knownFacts", "More facts."),
        _grow("/inferences", "What follows from the facts."),
        _grow("/unknowns", "What stays open."),
        Fill("/scope/include", "Repository paths or globs the work may touch."),
        Fill("/scope/exclude", "Paths or globs it must not touch."),
        Fill("/constraints", "Limits the user set or the repository imposes."),
        Fill("/nonGoals", "What this run will deliberately not do."),
        *(
            Fill(
                f"/draftAcceptanceCriteria/{i}/requirement",
                f"A testable {c['stage']} criterion (keep its id and stage).",
            )
            for i, c in enumerate(criteria)
        ),
    ]
    answer = pending_answer(state)
    lineage = () if answer is None else (answer.source_refs[0], answer.uri)
    pausable = answer is None and state.latest("ClarificationRequest") is None
    return Draft(
        "ProblemFrame",
        body,
        tuple(fill),
        source_refs=lineage,
        instead=(_clarification(state),) if pausable else (),
        topology_rules=asked_topology(state) is not None,
    )


def _clarification(state: RunState) -> Draft:
    body = _base(state, _fresh_id(state, "clarification")) | {
        "question": "",
        "reason": "user_owned_materially_divergent",
        "divergence": "",
        "evidenceInspected": [state.request.uri],
        "blockedBoundary": "",
        "responseConstraints": "Choose one option.",
        "responseChoices": [
            {
                "id": "resume",
                "label": "Resume",
                "consequence": "The run goes on with this reading of the request.",
                "authorityEffect": "within_current_authority",
                "runEffect": "resume",
            },
            {
                "id": "cancel",
                "label": "Cancel",
                "consequence": "The run is cancelled without changes.",
                "authorityEffect": "within_current_authority",
                "runEffect": "cancel",
            },
        ],
        "permissionExpansionRequired": False,
        "rationaleSummary": "",
    }
    fill = (
        Fill("/question", "The one question the user must answer."),
        Fill(
            "/reason",
            "Why the run cannot go on without the user.",
            (
                _choice("user_owned_materially_divergent", "Readings diverge."),
                _choice(
                    "permission_expanding",
                    "A permission is missing: the user resumes without it, or ends the run for a "
                    "new one with it.",
                    {
                        "/permissionExpansionRequired": True,
                        "/responseChoices/1": {
                            "id": "new-run",
                            "label": "New run",
                            "consequence": "The run ends; a new run with the permission "
                            "follows it (telic_start_run prior_run_id).",
                            "authorityEffect": "requires_new_run",
                            "runEffect": "new_run",
                        },
                    },
                ),
            ),
        ),
        Fill("/divergence", "How the readings diverge, or which boundary is in the way."),
        Fill("/blockedBoundary", "The decision or permission that blocks progress."),
    )
    return Draft("ClarificationRequest", body, fill)


def _contract(state: RunState) -> Draft | None:
    frame = state.latest("ProblemFrame")
    if frame is None:
        return None
    body_frame = frame.body
    authorization = run_authorization(state)
    # A granted test command verifies by running it; without one, by reading the repository.
    verifier = "shell.execute" if authorization.shell.execute_allowlist else "repository.read"
    executing = state.run.requested_mode in EXECUTING_MODES
    verifications = [
        {
            "id": f"VR-{i}",
            "stage": stage,
            "description": "",
            "required": True,
            "capability": verifier,
            "fallback": None,
        }
        for i, stage in enumerate(_stages(state) if executing else (), start=1)
    ]
    body = _base(state, _fresh_id(state, "contract")) | {
        "version": 1,
        "originalRequestRef": state.request.uri,
        "problemFrameRef": frame.uri,
        "intentMode": state.run.requested_mode,
        "objective": body_frame.goal,
        "scope": body_frame.scope.to_wire(),
        "constraints": list(body_frame.constraints),
        "nonGoals": list(body_frame.non_goals),
        "contextRefs": list(contract_context_refs(state)),
        "ruleRefs": list(contract_rule_refs(state)),
        "permissions": authorization.to_wire(),
        "acceptanceCriteria": [c.to_wire() for c in body_frame.draft_acceptance_criteria],
        "requiredOutputs": [],
        "verificationRequirements": verifications,
        "stopConditions": [],
        "assumptions": [],
        "unresolvedQuestions": [],
        "rationaleSummary": "",
    }
    fill = [
        *(
            Fill(f"/verificationRequirements/{i}/description", f"How the {v['stage']} is verified.")
            for i, v in enumerate(verifications)
        ),
        Fill("/stopConditions", "When the work must stop and report instead of going on."),
        _grow("/assumptions", "What the contract assumes."),
    ]
    return Draft("TaskContract", body, tuple(fill))


def _prompt_review(state: RunState) -> Draft | None:
    contract = state.latest("TaskContract")
    if contract is None:
        return None
    request = state.request.uri
    scores = {str(f.alias): 90 for f in DimensionScores.model_fields.values()}
    body = _base(state, _fresh_id(state, "prompt-review")) | {
        "targetRef": contract.uri,
        "rubricId": "contract-readiness-v1",
        "revisionNumber": contract.body.version - 1,
        "coverage": [
            {"sourceRef": ref, "contractFields": list(fields), "status": "covered"}
            for ref, fields in prompt_coverage(state)
        ],
        "dimensionScores": scores,
        "overallScore": 90,
        "hardGates": [_hard_gate("G-1", request)],
        "findings": [],
        "decision": "pass",
        "rationaleSummary": "",
    }
    choices = [
        _choice("pass", "The contract is ready; planning follows."),
        _choice("block", "Unworkable: the run ends blocked.", {"/hardGates/0/passed": False}),
    ]
    if contract.body.version == 1 and state.run.prompt_revisions_remaining > 0:
        finding = {
            "id": "PF-1",
            "severity": "blocking",
            "claim": "",
            "sourceRefs": [contract.uri],
            "rubricDimension": None,
            "requiredCorrection": "",
            "preserveFields": [],
            "correctionFields": ["stopConditions"],
            "rationaleSummary": "",
        }
        revise = _choice(
            "revise",
            "The compiler corrects, once, the contract fields your finding names.",
            {"/findings": [finding]},
            ("/findings/0/claim", "What is wrong with the contract."),
            ("/findings/0/requiredCorrection", "What must change."),
            ("/findings/0/correctionFields", _CORRECTABLE),
        )
        choices.insert(1, revise)
    fill = (
        Fill("/hardGates/0/description", "A yes/no readiness condition you checked."),
        Fill("/hardGates/0/rationaleSummary", "Why it passed or failed."),
        Fill(
            "/dimensionScores",
            "Six 0–100 scores; overallScore is their weighted sum (0.30, 0.20, 0.15, 0.20, "
            "0.10, 0.05 in this order), rounded to 2 places; pass needs 80 or more.",
        ),
        Fill("/decision", "Your verdict.", tuple(choices)),
    )
    return Draft("PromptReview", body, fill)


_CORRECTABLE: Final = (
    f"The fields to correct, of {', '.join(get_args(CorrectableField))}; the revision changes "
    "exactly these (never permissions, scope, constraints or acceptance criteria)."
)


def _hard_gate(gate_id: str, ref: str) -> JSON:
    """A review's one hard gate, passed and citing ``ref``; what it checks is the model's."""
    return {
        "id": gate_id,
        "passed": True,
        "description": "",
        "evidenceRefs": [ref],
        "rationaleSummary": "",
    }


def _revision(state: RunState) -> Draft | None:
    contract, review = state.latest("TaskContract"), state.latest("PromptReview")
    if contract is None or review is None:
        return None
    fields = sorted(corrected_fields(review.body))
    body = contract.body.to_wire()
    # Only the corrected fields change (TC-REVISE-FIELDS): the rationale too stays, unless a
    # finding corrects it.
    body |= {"id": _fresh_id(state, "contract"), "version": 2}
    fill: list[Fill] = []
    for name in fields:
        current = body.get(name)
        if isinstance(current, list):
            # A correction adds to a list field, so the field changes whatever the host writes.
            body[name] = [*current, _added_entry(name, current)]
            fill.append(Fill(f"/{name}/{len(current)}", "The entry the finding asks to add."))
        else:
            body[name] = ""
            fill.append(Fill(f"/{name}", "Corrected as the review's blocking finding requires."))
    return Draft("TaskContract", body, tuple(fill), source_refs=(contract.uri, review.uri))


def _added_entry(name: str, current: Sequence[Any]) -> Any:
    """A new entry for the contract's list ``name``: ``""`` for text; for an object, its text
    blank and its other values the entry before's (stage, capability, …) or the schema's first."""
    _, item = _line("TaskContract", f"/{name}", "", extend=True)
    if not isinstance(item, dict):
        return item
    like: Mapping[str, Any] = current[-1] if current else {}
    entry: JSON = {}
    for key, value in item.items():
        if value == "":
            entry[key] = ""  # the model's words
        elif isinstance(value, str):  # an enum's values, a|b
            entry[key] = like.get(key, value.split("|", 1)[0])
        else:
            entry[key] = like.get(key, value)
    return entry


# ------------------------------------------------------------------ planning


def _plan(state: RunState) -> Draft | None:
    contract = state.latest("TaskContract")
    if contract is None:
        return None
    mode = state.run.requested_mode
    stages = {c.id: c.stage for c in contract.body.acceptance_criteria}
    order = controlling_order(state)
    if order is not None:  # a replan: the order's criteria, within its call ceiling
        criteria, ceiling = order.criterion_ids, order.maximum_tool_calls
    else:  # the active stage's criteria: diagnosis only before analyze_and_fix's unlock
        criteria, ceiling = stage_criteria(state), _NODE_CALLS
    staged = {stages[c] for c in criteria if c in stages}
    stage = staged.pop() if len(staged) == 1 else None  # the stage to verify
    unlocking = order is not None and order.source.body.decision == "proceed_to_fix"
    fixing = mutation_allowed(state) or (mode == "analyze_and_fix" and unlocking)
    permissions = _no_children(contract.body.permissions)
    permissions = intersect(permissions, plan_ceiling(mode, fix_unlocked=fixing))
    if order is not None:
        permissions = intersect(permissions, order.permissions)
    if mode in EXECUTING_MODES:
        tools = sorted(
            {
                v.capability
                for v in contract.body.verification_requirements
                if v.required and (stage is None or v.stage == stage)
            }
        )
        if fixing and permissions.repository.write:
            tools = ["repository.write", *[t for t in tools if t != "repository.write"]]
        if order is not None:
            tools = [t for t in tools if t in order.allowed_capabilities]
        calls = max(len(tools), min(_NODE_CALLS, ceiling))
        # Every capability the node's permissions back is allowed, not only the required ones:
        # the work reads, inspects and runs the user's exact commands where no verification
        # needs it (reproducing a failure, reading a diff back), and an action outside
        # allowedTools could only be recorded as unauthorized.
        allowed = list(tools) + [
            capability
            for capability in CAPABILITIES
            if capability not in tools
            and capability_backed(capability, permissions)
            and (order is None or capability in order.allowed_capabilities)
        ]
    else:
        tools, allowed, calls = [], [], 0
    node = {
        "id": "work",
        "logicalRole": "executor",
        "objective": "",
        "dependsOn": [],
        "inputRefs": [] if order is None else [order.source.uri],
        "contextRefs": [],
        "allowedTools": allowed,
        "requiredCapabilities": tools,
        "permissions": permissions.to_wire(),
        "outputType": "WorkResult",
        "acceptanceCriteria": list(criteria),
        "stopConditions": [],
        "budgets": {"maximumToolCalls": calls, "maximumChildren": 0},
    }
    body = _base(state, _fresh_id(state, "plan")) | serial_plan(contract.uri, node, "")
    fill = (
        Fill("/nodes/0/objective", "What this node does, in one sentence."),
        Fill("/nodes/0/stopConditions", "When the node must stop early."),
    )
    return Draft("WorkPlan", body, fill)


# ------------------------------------------------------------------ execution


def _evidence(state: RunState, artifact_id: str, kind: str, what: str) -> Draft:
    body = _base(state, artifact_id) | {
        "kind": kind,
        "capturedAt": state.run.updated_at,
        "summary": "",
        "contentType": "text/plain",
        "encoding": "utf8",
        "content": "",
        "sourceRefs": [],
        "redactions": [],
        "rationaleSummary": "",
    }
    fill = (
        Fill("/content", what),
        Fill("/summary", "What the content shows, in one line."),
        Fill("/capturedAt", "When you captured it (an ISO 8601 UTC timestamp)."),
    )
    return Draft("Evidence", body, fill)


def _result(state: RunState) -> Draft | None:
    plan = state.latest("WorkPlan")
    node = pending_node(state)
    if plan is None or node is None:
        return None
    prefix = f"{plan.body.id}.{node.id}"
    read, write = node.permissions.repository.read, node.permissions.repository.write
    commands = tuple(node.permissions.shell.execute_allowlist)
    actions: list[JSON] = []
    evidence: list[Draft] = []
    refs: list[str] = []
    fill: list[Fill] = []
    files: list[JSON] = []
    ordered = sorted(node.required_capabilities, key=lambda c: c not in MUTATING_REPOSITORY)
    for index, capability in enumerate(ordered):
        mutating = capability in MUTATING_REPOSITORY
        ev_id = f"{prefix}.{'diff' if mutating else 'out'}-{index + 1}"
        refs.append(_uri(state, ev_id))
        kind = "diff" if mutating else _OBSERVED_KIND.get(capability, "tool_output")
        what = (
            f"The unified diff of your {capability} change."
            if mutating
            else f"What {capability} showed you ({_SHOWN.get(capability, 'its output')})."
        )
        evidence.append(_evidence(state, ev_id, kind, what))
        runs = capability == "shell.execute" and bool(commands)
        if capability.startswith("repository."):
            target = _example_path(write if mutating else read)
        else:
            target = commands[0] if runs else ""  # a command runs only as granted, exactly
        actions.append(
            {
                "id": f"A-{index + 1}",
                "capability": capability,
                "target": target,
                "mutating": mutating,
                "status": "completed",
                "evidenceRefs": [refs[-1]],
                "rationaleSummary": "",
            }
        )
        if runs:
            ran = tuple(_choice(c, "A granted command, exactly.") for c in commands)
            fill.append(Fill(f"/actions/{index}/target", "The command you ran.", ran))
        else:
            fill.append(Fill(f"/actions/{index}/target", f"What the {capability} action acted on."))
        fill.append(Fill(f"/actions/{index}/rationaleSummary", "What it did and found."))
        if mutating and capability == "repository.write":
            files.append(
                {
                    "path": target,
                    "changeType": "modified",
                    "beforeHash": "sha256:" + "0" * 64,
                    "afterHash": "sha256:" + "1" * 64,
                    "diffRef": refs[-1],
                }
            )
            fill.append(
                Fill(
                    f"/filesChanged/{len(files) - 1}",
                    "The changed file: same path as the write action, sha256: of its bytes "
                    "before and after.",
                )
            )
    body = _base(state, _fresh_id(state, "result")) | {
        "workPlanRef": plan.uri,
        "nodeId": node.id,
        "status": "completed",
        "observations": [],
        "inferences": [],
        "actions": actions,
        "filesChanged": files,
        "toolEventRefs": [],
        "evidenceRefs": refs,
        "testResults": [],
        "acceptanceCoverage": [
            {"criterionId": c, "status": "pass", "evidenceRefs": refs, "rationaleSummary": ""}
            for c in node.acceptance_criteria
        ],
        "unresolvedIssues": [],
        "deviations": [],
        "rationaleSummary": "",
    }
    fill += [
        Fill(f"/acceptanceCoverage/{i}/rationaleSummary", f"How the evidence shows {c}.")
        for i, c in enumerate(node.acceptance_criteria)
    ]
    fill += [
        _grow("/observations", "What you observed."),
        _grow("/inferences", "What you conclude from it."),
    ]
    if node.permissions.shell.execute_allowlist:  # tests only where the node may run a command
        fill.append(_grow("/testResults", "Tests you ran."))
    failed = {
        f"/acceptanceCoverage/{i}/status": "fail" for i in range(len(node.acceptance_criteria))
    }
    fill.append(
        Fill(
            "/status",
            "How the node's work ended.",
            (
                _choice("completed", "Done as planned; the review follows."),
                _choice("failed", "It missed its criteria; the review decides.", failed),
            ),
        )
    )
    pending = tuple(d for d in evidence if state.by_id(d.body["id"]) is None)
    return Draft("WorkResult", body, tuple(fill), before=pending)


# ------------------------------------------------------------------ judgement


def _coverage_evidence(state: RunState, criterion: str) -> list[str] | None:
    """The evidence of the current work's first passing coverage entry for ``criterion``, else of
    the latest review that passed it (what QR-PASS-EXACT-COVERAGE-EVIDENCE accepts)."""
    allowed = criterion_evidence(state, criterion)
    if not allowed:
        return None
    return list(allowed[0] if criterion in assigned_criteria(state) else allowed[-1])


def _verdict(refs: Sequence[str] | None, **entry: str) -> JSON:
    """A review's result ``entry``: passed, citing ``refs``, when there are any; else unverified."""
    status = "pass" if refs else "unverified"
    return entry | {"status": status, "evidenceRefs": list(refs or ()), "rationaleSummary": ""}


def _quality_review(state: RunState) -> Draft | None:
    contract, plan = state.latest("TaskContract"), state.latest("WorkPlan")
    if contract is None or plan is None:
        return None
    executing = state.run.requested_mode in EXECUTING_MODES
    acceptance = [
        _verdict(_coverage_evidence(state, c) if executing else [plan.uri], criterionId=c)
        for c in stage_criteria(state)
    ]
    requirements = {v.id: v for v in contract.body.verification_requirements}
    checks = [
        _verdict(
            verification_evidence(state, v.id, v.capability, v.stage),
            requirementId=v.id,
            capability=v.capability,
        )
        for v in (requirements[vid] for vid in stage_verifications(state))
    ]
    finished = not executing or plan_completed(state)
    all_pass = finished and all(e["status"] == "pass" for e in (*acceptance, *checks))
    gated = state.run.requested_mode == "analyze_and_fix" and not is_unlocked(state)
    gate_refs = sorted({ref for a in acceptance for ref in a["evidenceRefs"]})
    seen = [ref for r in results_of(state, plan) for ref in r.body.evidence_refs]
    first_ref = (gate_refs or seen or [plan.uri])[0]
    body = _base(state, _fresh_id(state, "quality-review")) | {
        "taskContractRef": contract.uri,
        "workPlanRefs": [plan.uri],
        "workResultRefs": list(current_results(state)),
        "rubricId": "execution-quality-v1",
        "acceptanceResults": acceptance,
        "ruleCompliance": [],
        "regressionChecks": [],
        "verificationResults": checks,
        "findings": [],
        "hardGates": [_hard_gate("QG-1", first_ref)],
        "score": 90,
        "remainingRemediations": state.run.remediations_remaining,
        "decision": "pass",
        "diagnosisGate": None,
        "remediationWorkOrder": None,
        "rationaleSummary": "",
    }
    reverify = state.run.phase == "agent_3_evidence_reverify"
    if asked_topology(state) is not None:  # stored with it anyway; the reverify phase needs it
        body["reviewKind"] = "evidence_reverify" if reverify else "spot"
    choices: list[JSON] = []
    fixing = all_pass and gated and not reverify
    if fixing:
        body["decision"] = "proceed_to_fix"
        body["diagnosisGate"] = _gate(state, contract.body, gate_refs)
        choices.append(
            _choice(
                "proceed_to_fix",
                "The diagnosis holds; a fix plan follows within the correction order.",
                None,
                ("/diagnosisGate/rootCause", "The root cause, in one line."),
                ("/diagnosisGate/correctionWorkOrder/objective", "The fix."),
            )
        )
    elif all_pass:
        choices.append(_choice("pass", _PASS_LEADS.get(state.run.topology or "standard", _PASS)))
    else:
        body["decision"] = "partial"
    undo = {"/diagnosisGate": None} if fixing else {}
    partial = (
        "Only part is shown; the run continues on the standard path."
        if state.run.topology == "micro"
        else "Only part is done: audit, then a partial report."
    )
    choices.append(_choice("partial", partial, undo or None))
    if state.run.remediations_remaining == 1 and not reverify:
        order = _redo(state, "RWO-1", "objective", plan.uri)
        redo = undo | {"/remediationWorkOrder": order}
        choices.append(_choice("remediate", "Redo the stage's work once, under an order.", redo))
    block = undo | {"/hardGates/0/passed": False}
    choices.append(_choice("block", "It cannot meet the contract: blocked after the audit.", block))
    fill = (
        *(
            Fill(f"/acceptanceResults/{i}/rationaleSummary", f"Why {a['criterionId']} is met.")
            for i, a in enumerate(acceptance)
        ),
        Fill("/hardGates/0/description", "A yes/no quality condition you checked."),
        _grow("/findings", "Problems you found."),
        Fill("/decision", "Your verdict.", tuple(choices)),
    )
    return Draft("QualityReview", body, fill, topology_rules=asked_topology(state) is not None)


_PASS: Final = "It meets the contract; the audit follows."
_PASS_LEADS: Final = {
    "micro": "The answer meets its criterion; the report follows (with the controller's receipt).",
    "forensic": "The work meets the contract; a second, evidence re-verifying review follows.",
}


def _gate(state: RunState, contract: Any, refs: list[str]) -> JSON:
    completion = [c.id for c in contract.acceptance_criteria if c.stage == "completion"]
    permissions = _no_children(contract.permissions)
    # The fix reads and writes, and runs the completion's required verifications (a granted
    # test command): QR-CORRECTION-ORDER asks the order to allow what the next plan must run.
    # A granted shell.inspect stays too: git.diff is how the fix shows its change as Evidence.
    verifying = {c for c in completion_capabilities(contract) if capability_backed(c, permissions)}
    capabilities = sorted(
        {"repository.read"}
        | ({"repository.write"} if permissions.repository.write else set())
        | ({"shell.inspect"} if permissions.shell.inspect else set())
        | verifying
    )
    return {
        "id": "GATE-1",
        "status": "supported",
        "rootCause": "",
        "directEvidenceRefs": refs,
        "correctionWorkOrder": {
            "id": "CWO-1",
            "targetCriterionIds": completion,
            "objective": "",
            "allowedCapabilities": capabilities,
            "permissions": permissions.to_wire(),
            "sourceRefs": refs,
            "maximumToolCalls": 20,
            "rationaleSummary": "",
        },
        "withinApprovedScope": True,
        "permissionsSufficient": True,
        "rationaleSummary": "",
    }


def _redo(state: RunState, order_id: str, text: str, source: str, **more: str) -> JSON:
    """A review's remediation order or an audit's defect: the stage's work again, as planned."""
    plan = state.latest("WorkPlan")
    assert plan is not None
    return {
        "id": order_id,
        "failedCriterionIds": list(stage_criteria(state)),
        text: "",
        "allowedCapabilities": sorted({t for n in plan.body.nodes for t in n.allowed_tools}),
        "permissions": plan.body.nodes[0].permissions.to_wire(),
        "sourceRefs": [source],
        "maximumToolCalls": _NODE_CALLS,
        **more,
        "rationaleSummary": "",
    }


def _audit(state: RunState) -> Draft | None:
    review, contract = state.latest("QualityReview"), state.latest("TaskContract")
    if review is None or contract is None:
        return None
    refs = sorted({ref for r in review.body.acceptance_results for ref in r.evidence_refs})
    report_uri = _uri(state, _fresh_id(state, "report"))
    verdict = review.body.decision
    breached = bool(breaches(state))  # an action on record as unauthorized: no release
    body = _base(state, _fresh_id(state, "audit")) | {
        "originalRequestRef": state.request.uri,
        "taskContractRef": contract.uri,
        "workPlanRefs": list(every_uri(state, "WorkPlan")),
        "workResultRefs": list(every_uri(state, "WorkResult")),
        "qualityReviewRef": review.uri,
        "userFidelity": [
            {
                "id": "UF-1",
                "subjectRef": state.request.uri,
                "description": "",
                "status": "pass",
                "evidenceRefs": refs,
                "rationaleSummary": "",
            }
        ],
        "modeCompliance": "fail" if breached else "pass",
        "claimEvidenceMatrix": [
            {
                "claimId": "CL-1",
                "claim": "",
                "criterionIds": [c.id for c in contract.body.acceptance_criteria],
                "basis": "direct",
                "status": "supported",
                "evidenceRefs": refs,
                "rationaleSummary": "",
            }
        ],
        "unresolvedRisks": [],
        "findings": [],
        "remainingRemediations": state.run.remediations_remaining,
        "decision": "release",
        "remediationDefect": None,
        "userReportRef": report_uri,
        "rationaleSummary": "",
    }
    risk = ("/unresolvedRisks/0", "What stays undone or unproven.")
    partial = _choice("partial", "Report a partial outcome.", {"/unresolvedRisks": [""]}, risk)
    block = _choice("block", "Report the run blocked.", {"/unresolvedRisks": [""]}, risk)
    choices: list[JSON]
    if verdict == "block":
        body |= {"decision": "block", "unresolvedRisks": [""]}
        choices = [block]
    elif verdict == "pass" and not breached:
        choices = [_choice("release", "Release: a completed report follows."), partial, block]
    else:
        body |= {"decision": "partial", "unresolvedRisks": [""]}
        choices = [partial, block]
    if verdict != "block" and state.run.remediations_remaining == 1:
        defect = _redo(state, "DEF-1", "description", review.uri, returnToRole="quality_controller")
        choices.append(
            _choice(
                "remediate",
                "Send the work back once to fix a defect.",
                {"/userReportRef": None, "/remediationDefect": defect},
                ("/remediationDefect/description", "The defect."),
            )
        )
    fill = [
        Fill("/userFidelity/0/description", "How the outcome matches what the user asked."),
        Fill(
            "/claimEvidenceMatrix/0/claim",
            "What the run achieved, as one claim the evidence shows.",
        ),
    ]
    if body["unresolvedRisks"]:
        fill.append(Fill(*risk))
    fill += [
        _grow("/findings", "Problems you found."),
        Fill("/decision", "Your release decision.", tuple(choices)),
    ]
    return Draft("ReleaseAudit", body, tuple(fill))


_STATUS: Final = {"release": "completed", "partial": "partial", "block": "blocked"}


def _report(state: RunState) -> Draft:
    audit = state.latest("ReleaseAudit")
    report_id = _fresh_id(state, "report")
    claims: Iterable[Any] = ()  # claim-matrix entries, copied as the rules compare them
    findings: StoredArtifact | None
    if audit is not None:
        report_id = (audit.body.user_report_ref or "").rsplit("/", 1)[-1] or report_id
        status = _STATUS.get(audit.body.decision, "partial")
        findings = None if status == "completed" else audit
        claims = supported_claims(state).values() if status == "completed" else ()
        honored = bool(permissions_honored(state))
    elif state.run.topology == "micro":  # completed on the receipt of the latest review (§3.7)
        receipt, hint = state.by_id(RECEIPT), state.run.outcome_hint
        if receipt is None or receipt_gap(state) is not None or hint in ("blocked", "partial"):
            status, findings = hint or "blocked", report_anchor(state)
        else:
            status, findings, claims = "completed", None, receipt.body.claim_evidence_matrix
        honored = not breaches(state)
    else:
        status, findings, honored = "blocked", report_anchor(state), True
    body = _base(state, report_id) | {
        "terminalStatus": status,
        "summary": "",
        "completionClaims": [
            {
                "id": entry.claim_id,
                "text": entry.claim,
                "status": "user_reported" if entry.basis == "user_reported" else "observed",
                "evidenceRefs": list(entry.evidence_refs),
                "confidence": 1,
            }
            for entry in claims
        ],
        "findingRefs": [] if findings is None else [findings.uri],
        "changeRefs": list(report_change_refs(state)),
        "verificationRefs": list(report_verification_refs(state)) if status == "completed" else [],
        "unresolvedRisks": [],
        "permissionsHonored": honored,
        "nextActions": [],
        "traceRef": trace_ref(state),
        "rationaleSummary": "",
    }
    fill = (
        Fill("/summary", "What happened, for the user, in a few sentences."),
        Fill("/unresolvedRisks", "What the user should still know or check."),
    )
    return Draft("UserReport", body, fill, topology_rules=asked_topology(state) is not None)


_BUILDERS: Final[dict[str, Callable[[RunState], Draft | None]]] = {
    "ProblemFrame": _frame,
    "TaskContract": _contract,
    "PromptReview": _prompt_review,
    "WorkPlan": _plan,
    "WorkResult": _result,
    "QualityReview": _quality_review,
    "ReleaseAudit": _audit,
    "UserReport": _report,
}
