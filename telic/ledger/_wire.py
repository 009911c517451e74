"""The wire shapes of a run: the types ``RunRecord.to_wire`` and ``summary_wire`` return.

Mypy checks ``to_wire`` against them (``summary_wire`` is ``to_wire`` less three keys, cast to
its type; the stdio snapshots pin its keys), and the server's result models use them as they are,
so a tool's ``outputSchema`` describes exactly what the serialiser writes. The ledger imports
this module for the type checker only (``typing_extensions`` is what pydantic needs of a
``TypedDict`` on Python 3.11, and the hook never needs either).
"""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict


class RunBudgetsWire(TypedDict):
    """What is left of the run's revision budgets."""

    promptRevisionsRemaining: int
    postExecutionRemediationsRemaining: int


class RunWire(TypedDict):
    """The Telic 1.0 RunRecord."""

    runId: str
    schemaVersion: str
    repositoryRoot: str
    requestedMode: str
    topology: NotRequired[str]
    """Beyond Telic 1.0, in a run started with topology_override or prior_run_id: the live
    topology: micro, standard or forensic."""
    status: str
    phase: str
    resumePhase: str | None
    version: int
    budgets: RunBudgetsWire
    outcomeHint: str | None
    priorRunId: NotRequired[str | None]
    """Beyond Telic 1.0, in the same runs: the ended run this one follows, or null."""
    escalationCount: NotRequired[int]
    """Beyond Telic 1.0, in the same runs: how many times the topology escalated (at most 2)."""
    createdAt: str
    updatedAt: str


class RunSummaryWire(TypedDict):
    """A run in a list: metadata only."""

    runId: str
    schemaVersion: str
    requestedMode: str
    topology: NotRequired[str]
    """Beyond Telic 1.0, in a run started with topology_override or prior_run_id: the live
    topology."""
    status: str
    phase: str
    resumePhase: str | None
    version: int
    outcomeHint: str | None
    createdAt: str
    updatedAt: str
    priorRunId: NotRequired[str | None]
    """Beyond Telic 1.0 (ours), in the same runs: the run this one follows."""


# The keys beyond 1.0 sit where the original's later releases put them, between 1.0's: the
# record's serialiser splices these in, so that mypy checks every key of its result.


class _Topology(TypedDict, total=False):
    """``topology``, in a run that asked for what came after 1.0."""

    topology: str


class _Lineage(TypedDict, total=False):
    """``priorRunId`` and ``escalationCount``, in the same runs (a run's record)."""

    priorRunId: str | None
    escalationCount: int
