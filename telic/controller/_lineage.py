"""Run lineage, purely: may a run follow ``prior_run_id``, and which prior artifacts a
submission cites (docs/protocol.md §2 tool 1, "Run lineage"; §3.4 ``REF-LINKED-EVIDENCE``).

The driver does the reading: the prior run's row and a full ``verify_run`` before a linked run
is stored, and, before each step of a linked run, every prior artifact the submission cites
(each read re-verifies its digest and record). These functions decide from what it read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from telic._errors import Issue, LineageRefused
from telic.controller._state import RunState, body_refs, parse_artifact_uri
from telic.ledger import RunRecord, VerifyReport

MAX_LINKED_READS: Final = 256
"""Most prior-run artifacts one submission may cite (one verified read each)."""


def _refuse(rule: str, code: str, message: str) -> LineageRefused:
    return LineageRefused(message, issues=(Issue("prior_run_id", code, message, rule),))


def check_prior(
    prior_run_id: str,
    repository_root: str,
    prior: RunRecord | None,
    report: VerifyReport | None,
) -> None:
    """Refuse a ``prior_run_id`` the new run may not follow, in the original's order.

    ``prior`` is the prior run's row as read from this run's ledger (None: no such run);
    ``report`` is its ``verify_run`` (read only when the other checks pass).

    Raises:
        LineageRefused: the prior run is missing (``RUN-PRIOR-EXISTS``), works in another
            repository (``RUN-PRIOR-ROOT``), has not ended (``RUN-PRIOR-TERMINAL``) or does not
            verify (``RUN-PRIOR-INTACT``).
    """
    if prior is None:
        raise _refuse(
            "RUN-PRIOR-EXISTS",
            "prior_run_missing",
            f"Prior run {prior_run_id} does not exist in this repository's ledger: "
            "prior_run_id must name a run telic_list_runs lists",
        )
    if prior.repository_root != repository_root:
        raise _refuse(
            "RUN-PRIOR-ROOT",
            "prior_run_root",
            f"Prior run repository root mismatch: run {prior_run_id} worked in another "
            "repository; prior_run_id must name a run of this repository",
        )
    if not prior.terminal:
        raise _refuse(
            "RUN-PRIOR-TERMINAL",
            "prior_run_active",
            f"Prior run must be terminal before lineage link: run {prior_run_id} is "
            f"{prior.status}; finish or cancel it first (completed, partial, blocked or "
            "cancelled runs can be followed)",
        )
    if report is None or not report.ok:
        broken = None if report is None else report.first_broken
        where = "" if broken is None else f" at its {broken.kind} {broken.id}"
        raise _refuse(
            "RUN-PRIOR-INTACT",
            "prior_run_integrity",
            f"Artifact integrity check failed: prior run {prior_run_id} does not verify{where} "
            f"(telic verify {prior_run_id} shows why); only a run that verifies can be followed",
        )


def linked_uris(state: RunState, body: object, source_refs: Iterable[str]) -> tuple[str, ...]:
    """The prior-run artifact URIs a submission cites, each once, at most ``MAX_LINKED_READS``.

    Empty for a run without a prior: its cross-run references are refused without a read, as
    are references into any run but the prior. Beyond the limit a reference is not read, and
    ``REF-LINKED-EVIDENCE`` refuses it as unresolved.
    """
    prior = state.run.prior_run_id
    if prior is None:
        return ()
    found: dict[str, None] = {}
    uris = [uri for _, _, uri in body_refs(body)] + [u for u in source_refs if isinstance(u, str)]
    for uri in uris:
        parsed = parse_artifact_uri(uri)
        if parsed is not None and parsed[0] == prior:
            found.setdefault(uri)
            if len(found) == MAX_LINKED_READS:
                break
    return tuple(found)
