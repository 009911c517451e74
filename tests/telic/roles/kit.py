"""A run driven through the ``Service``: builders, a fake grounder and a cast-ready run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from telic.controller import StartRequest
from telic.ledger import Ledger, open_ledger
from telic.protocol._context import ContextDocument, ContextManifest
from telic.roles import Service, open_service

from ..controller.builders import ALL_GRANTS, ROOT, SHA, Run, clock_from, ids_from, perms  # noqa: TID252

__all__ = [
    "BUDGET",
    "EXPLORE",
    "ROOT",
    "ROUTING",
    "SOURCE",
    "VERIFY_READ",
    "ManualClock",
    "ServiceFlow",
    "clock_from",
    "fake_grounder",
    "good_return",
    "ids_from",
    "serving",
    "spawn_perms",
    "start_wide_run",
]

SOURCE = "MAX_RETRIES = 5\n\ndef retry(fn):\n    for attempt in range(MAX_RETRIES):\n        fn()\n"
"""The text of the one grounded file, ``repo://src/retry.py``."""

EXPLORE = {
    "castType": "explore",
    "enabled": True,
    "ceilingTurns": 10,
    "ceilingTokens": 50_000,
    "readOnly": True,
    "allowedNeedCodes": ["locate", "diagnose", "review", "verify_claim"],
}
ROUTING = {
    "needCode": "locate",
    "text": "Find where the retry limit is defined",
    "expectedEvidence": ["file_state"],
}
BUDGET = {"maxTurns": 8, "maxTotalTokens": 20_000}
VERIFY_READ = {
    "id": "VR-1",
    "stage": "completion",
    "description": "Read it",
    "required": True,
    "capability": "repository.read",
    "fallback": None,
}


def spawn_perms(children: int = 3, depth: int = 1) -> dict[str, Any]:
    """Read permissions that may also cast children."""
    body = perms(read=["**"])
    body["subagents"] = {"spawn": True, "maximumChildren": children, "maximumDepth": depth}
    return body


class ManualClock:
    """A run clock that moves 1 ms per reading and jumps when told: wall caps without sleeping.

    ``sleep_until`` is the service's deadline sleeper on this clock: it returns once ``advance``
    (or a reading) has moved the clock to the instant, never by waiting on real time.
    """

    def __init__(self) -> None:
        self.ms = 0
        self._sleepers: list[tuple[float, anyio.Event]] = []

    def _instant(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(milliseconds=self.ms)

    def _wake(self) -> None:
        now = self._instant().timestamp()
        for instant, woken in self._sleepers:
            if instant <= now:
                woken.set()
        self._sleepers = [(i, w) for i, w in self._sleepers if not w.is_set()]

    def advance(self, ms: int) -> None:
        """Move the clock ``ms`` milliseconds forward."""
        self.ms += ms
        self._wake()

    def __call__(self) -> str:
        self.ms += 1
        self._wake()
        instant = self._instant()
        return instant.strftime("%Y-%m-%dT%H:%M:%S.") + f"{instant.microsecond // 1000:03d}Z"

    async def sleep_until(self, instant: float) -> None:
        """Return once the clock reads ``instant`` (POSIX seconds) or later."""
        if instant <= self._instant().timestamp():
            return
        woken = anyio.Event()
        self._sleepers.append((instant, woken))
        await woken.wait()


@dataclass
class FakeGrounding:
    """What the fake grounder returns: the shape of ``telic.grounding.GroundingResult``."""

    manifest: ContextManifest
    documents: Sequence[ContextDocument]


async def fake_grounder(*, run_id: str, **_: Any) -> FakeGrounding:
    """Ground one file, ``src/retry.py``, holding ``SOURCE``."""
    document = ContextDocument.from_wire(
        {
            "schemaVersion": "1.0",
            "id": "ctx-source-001",
            "runId": run_id,
            "repositoryRef": "repo://src/retry.py",
            "contentHash": SHA,
            "sizeBytes": len(SOURCE),
            "trustKind": "untrusted_repository_content",
            "instructionScope": ".",
            "content": SOURCE,
        }
    )
    manifest = ContextManifest.from_wire(
        {
            "schemaVersion": "1.0",
            "id": f"context-{run_id[-8:]}",
            "runId": run_id,
            "repositoryFingerprint": {"headCommit": None, "dirtyWorktreeHash": SHA},
            "pinnedRefs": [],
            "candidates": [
                {
                    "id": "candidate-0001",
                    "ref": "repo://src/retry.py",
                    "locations": [],
                    "contentHash": SHA,
                    "byteSize": len(SOURCE),
                    "decision": "selected",
                    "selectionReason": "matches the request",
                    "path": "src/retry.py",
                    "score": 100,
                    "pinned": False,
                }
            ],
            "derivedRefs": [f"artifact://{run_id}/ctx-source-001"],
            "excludedCandidateSummaries": [],
            "inventorySource": "filesystem",
            "warnings": [],
            "budget": {
                "maximumFiles": 256,
                "maximumFileBytes": 131072,
                "maximumTotalBytes": 16_777_216,
                "maximumInventoryFiles": 20000,
                "candidateFiles": 1,
                "selectedFiles": 1,
                "estimatedTokens": 1,
                "selectedBytes": len(SOURCE),
            },
        }
    )
    return FakeGrounding(manifest, [document])


class ServiceFlow:
    """Drives one run through a ``Service``, always presenting the current tokens."""

    def __init__(self, service: Service, last: Any, b: Run) -> None:
        self.service = service
        self.last = last
        self.b = b

    @classmethod
    async def start(
        cls, service: Service, mode: str = "analyze_only", **kwargs: Any
    ) -> ServiceFlow:
        """Start a run with every default grant (and subagent.spawn) on a native host."""
        kwargs.setdefault("host_capabilities", (*ALL_GRANTS, "subagent.spawn"))
        kwargs.setdefault("native_subagents", "available")
        kwargs.setdefault("authorization_granted", ("repository.read", "subagent.spawn"))
        cast_types = kwargs.pop("cast_types", None)
        request = StartRequest("Find the retry limit in src", mode, **kwargs)  # type: ignore[arg-type]
        started = await service.start_run(request, cast_types=cast_types)
        details = await service.get_run(started.run.run_id)
        b = Run(run_id=started.run.run_id, mode=mode)
        b._request_id = details.artifacts[0].artifact_id
        return cls(service, started, b)

    @property
    def version(self) -> int:
        """The run version after the last call."""
        return int(self.last.run.version)

    def token(self) -> tuple[str, int]:
        """The current (action_id, expected_run_version)."""
        return self.last.next_action.id, self.version

    async def ground(self) -> Any:
        """Ground through the service's (fake) grounder."""
        self.last = await self.service.ground(self.b.run_id, *self.token())
        return self.last

    async def submit(self, artifact_type: str, body: Any, refs: Sequence[str] = ()) -> Any:
        """Submit ``body`` with the current tokens."""
        self.last = await self.service.submit_artifact(
            self.b.run_id, *self.token(), artifact_type, body, list(refs)
        )
        return self.last

    async def to_execute(
        self,
        *,
        children: int = 3,
        nodes: int = 1,
        node_permissions: Any = None,
        depth: int = 1,
        spawn_tool: bool = True,
    ) -> None:
        """Drive the run to the execution of its first node, which may cast ``children``
        (and, with ``depth`` above 1, its children may cast grandchildren).

        ``spawn_tool`` lists subagent.spawn among the nodes' allowedTools when their
        permissions allow it (a cast is the node's spawn); false leaves it out."""
        b = self.b
        b.permissions = spawn_perms(children, depth)
        b.verifications = [VERIFY_READ]
        await self.ground()
        await self.submit("ProblemFrame", b.frame())
        await self.submit("TaskContract", b.contract())
        await self.submit("PromptReview", b.prompt_review())
        plan_nodes = []
        for index in range(nodes):
            node = b.node(
                f"node-{index + 1}", tools=["repository.read"], permissions=node_permissions
            )
            node["budgets"]["maximumChildren"] = children
            if spawn_tool and node["permissions"]["subagents"]["spawn"]:
                # A cast is a subagent.spawn of the node: allowed, never required.
                node["allowedTools"].append("subagent.spawn")
            plan_nodes.append(node)
        plan = b.plan(nodes=plan_nodes)
        plan["globalBudgets"]["maximumSubagentDepth"] = depth
        await self.submit("WorkPlan", plan)

    async def cast(self, **over: Any) -> Any:
        """Cast an explore child with a valid routing reason and budget."""
        arguments: dict[str, Any] = {
            "cast_type": "explore",
            "routing": ROUTING,
            "budget": BUDGET,
            "brief": "Find where the retry limit is defined; see the pointers.",
            "pointers": ["repo://src/retry.py"],
        }
        arguments.update(over)
        return await self.service.cast(self.b.run_id, **arguments)


def good_return(quote: str = "MAX_RETRIES = 5", **over: Any) -> dict[str, Any]:
    """A child return citing the grounded file."""
    body: dict[str, Any] = {
        "claim": "The retry limit is MAX_RETRIES = 5, set in src/retry.py",
        "evidence": [
            {"kind": "file_state", "source": "repo://src/retry.py", "locator": "L1", "quote": quote}
        ],
        "completed": [0],
    }
    body.update(over)
    return body


async def start_wide_run(
    service: Service,
    ledger: Any,
    *,
    workers: int,
    children: int,
    run_id: str = "wide-run",
    depth: int = 1,
    cast_types: Sequence[dict[str, Any]] = (),
) -> ServiceFlow:
    """Create a run whose envelope allows ``workers`` in parallel and ``children`` per node,
    and casts ``depth`` deep (with ``cast_types`` enabled by its user).

    ``start_run`` grants 3 children and 3 workers at most (the permission algebra's defaults);
    the schema allows 16 of each, so this writes such an envelope into the ledger directly and
    then drives the run through the service like any other.
    """
    from telic.controller import StepResult, open_run
    from telic.ledger import NewArtifact, NewTraceEvent, RunRecord

    now = "2025-12-31T00:00:00.000Z"
    request = StartRequest(
        "Find the retry limit in src",
        "analyze_only",
        native_subagents="available",
        host_capabilities=(*ALL_GRANTS, "subagent.spawn"),
        authorization_granted=("repository.read", "subagent.spawn"),
    )
    state, _ = open_run(
        request, run_id=run_id, message_id=f"{run_id}-request", now=now, repository_root=ROOT
    )
    request, envelope = state.artifacts
    body = envelope.body
    granted = body.authorization.granted
    widened = body.model_copy(
        update={
            "budgets": body.budgets.model_copy(
                update={"maximum_parallel_workers": workers, "maximum_subagent_depth": depth}
            ),
            "authorization": body.authorization.model_copy(
                update={
                    "granted": granted.model_copy(
                        update={
                            "subagents": granted.subagents.model_copy(
                                update={"maximum_children": children, "maximum_depth": depth}
                            )
                        }
                    )
                }
            ),
        }
    )
    run = state.run
    record = RunRecord(
        run_id=run.run_id,
        schema_version="1.0",
        repository_root=run.repository_root,
        requested_mode=run.requested_mode,
        status=run.status,
        phase=run.phase,
        resume_phase=None,
        version=run.version,
        prompt_revisions_remaining=run.prompt_revisions_remaining,
        remediations_remaining=run.remediations_remaining,
        outcome_hint=None,
        created_at=now,
        updated_at=now,
    )
    artifacts = [
        NewArtifact(
            artifact_id=a.id,
            type=a.type,
            schema_version="1.0",
            producer=a.producer,
            body=wire,
            source_refs=a.source_refs,
            created_at=now,
        )
        for a, wire in ((request, request.wire), (envelope, widened.to_wire()))
    ]
    started = NewTraceEvent(
        actor="controller",
        phase=run.phase,
        event_type="run_started",
        budget_snapshot={
            "promptRevisions": 1,
            "postExecutionRemediations": 1,
            "transportRetries": 0,
        },
        timestamp=now,
    )
    commit = await ledger.create_run(record, artifacts[0], artifacts[1], [started])
    if cast_types:
        policy = NewArtifact(
            artifact_id="cast-policy",
            type="CastPolicy",
            schema_version="1.0",
            producer="user",
            body={"castTypes": list(cast_types)},
            created_at=now,
        )
        commit = await ledger.store_supporting(run_id, policy, [])
    action = await service.get_next_action(run_id)
    b = Run(run_id=run_id, mode="analyze_only")
    b._request_id = request.id
    return ServiceFlow(service, StepResult(commit.run, action), b)


@asynccontextmanager
async def serving(state_dir: Path, **kwargs: Any) -> AsyncIterator[tuple[Service, Ledger]]:
    """Open a service (over a new memory ledger unless one is given), deterministic ids."""
    given = kwargs.pop("ledger", None)
    async with AsyncExitStack() as stack:
        ledger = given or await stack.enter_async_context(open_ledger("memory://"))
        kwargs.setdefault("clock", clock_from())
        if isinstance(kwargs["clock"], ManualClock):
            kwargs.setdefault("sleep_until", kwargs["clock"].sleep_until)
        kwargs.setdefault("new_id", ids_from("run"))
        kwargs.setdefault("grounder", fake_grounder)
        kwargs.setdefault("repository_root", ROOT)
        async with open_service(ledger=ledger, state_dir=state_dir, **kwargs) as service:
            yield service, ledger
