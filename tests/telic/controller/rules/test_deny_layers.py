"""Every refused target of a WorkResult, at any permission layer, is one DENY record, once.

The layers are the mode (a mutation in a read-only mode, or before analyze_and_fix's diagnosis
gate), the run authorization (the user's grant ∩ the host's capabilities) and the node (which
the accepted plan holds inside the contract, so a target outside the contract is outside the
node too). The property runs the pure ``step`` on a run executing its first plan, in each mode,
with random attempted actions and file changes: a rejection carries exactly one DENY
``permission_checked`` note per distinct refused decision and nothing else; an acceptance
traces one decision per attempted action. The driver-level tests below check what reaches the
ledger: the DENY records, once, and nothing else.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from telic.controller import Accepted, Rejection, RunState, Token, step
from telic.controller._authority import run_authorization
from telic.controller._events import SubmitArtifact
from telic.controller._work import mutation_allowed
from telic.ledger import open_ledger
from telic.permissions import Layer, authorize_action, capability_is_mutating
from telic.protocol import CAPABILITIES
from tests.telic.controller.builders import JSON, Flow
from tests.telic.controller.rules.harness import DIFF_HASH, executing, refuse
from tests.telic.controller.rules.test_result import unsuccessful

MODES = ("analyze_only", "fix_only", "analyze_and_fix")
TARGETS = (
    "src/app.py",
    "src/fix.py",
    "docs/readme.md",
    "infra/prod.yml",
    "../outside.txt",
    "/etc/passwd",
    "git.status",
    "npm test",
    "localhost",
    "https://example.com/upload",
)
STATUSES = ("completed", "failed", "denied", "skipped")


@functools.cache
def _executing(mode: str) -> tuple[RunState, Token, Flow]:
    """A run of ``mode`` executing its first plan (built once; the state is frozen)."""

    async def build() -> tuple[RunState, Token, Flow]:
        async with open_ledger("memory://") as ledger:
            flow = await executing(ledger, mode, kind="diff")
            state = await flow.controller.load(flow.b.run_id)
            return state, Token(*flow.token()), flow

    return anyio.run(build)


_actions = st.lists(
    st.tuples(
        st.sampled_from(sorted(CAPABILITIES)),
        st.sampled_from(TARGETS),
        st.sampled_from(STATUSES),
        st.booleans(),
    ),
    min_size=1,
    max_size=6,
)
_changes = st.lists(
    st.tuples(st.sampled_from(TARGETS[:4]), st.sampled_from(("created", "deleted"))),
    max_size=3,
)


def _body(flow: Flow, node: str, actions: list[Any], changes: list[Any]) -> JSON:
    b = flow.b
    wire_actions = []
    for index, (capability, target, status, flag) in enumerate(actions):
        fixed = capability_is_mutating(capability)
        action = b.action(f"A-{index + 1}", capability, target, "evidence-1", status)
        wire_actions.append(action | {"mutating": flag if fixed is None else fixed})
    files = [
        {
            "path": path,
            "changeType": kind,
            "beforeHash": "sha256:" + "d" * 64 if kind == "deleted" else None,
            "afterHash": None if kind == "deleted" else DIFF_HASH,
            "diffRef": b.uri("evidence-1"),
        }
        for path, kind in changes
    ]
    body = b.result(node=node, actions=wire_actions, files=files)
    return body if all(a[2] == "completed" for a in actions) else unsuccessful(body, "partial")


def _refused(state: RunState, node: str, body: JSON) -> list[dict[str, Any]]:
    """The oracle: each attempted target some layer refuses, as its DENY decision, in order."""
    [permissions] = [n.permissions for n in state.latest("WorkPlan").body.nodes if n.id == node]
    layers = (
        Layer.for_mode(state.run.requested_mode),
        Layer.from_permissions("authorization", run_authorization(state)),
        Layer.from_permissions("node", permissions),
    )
    attempted = [
        ("repository.delete" if f["changeType"] == "deleted" else "repository.write", f["path"])
        for f in body["filesChanged"]
    ] + [
        (a["capability"], a["target"])
        for a in body["actions"]
        if a["status"] in ("completed", "failed", "denied")
    ]
    gated = set()
    if not mutation_allowed(state):
        gated = {(c, t) for c, t in attempted[: len(body["filesChanged"])]} | {
            (a["capability"], a["target"])
            for a in body["actions"]
            if a["mutating"] and a["status"] in ("completed", "failed")
        }
    gate = (
        "Mutation attempted before the diagnosis review gate"
        if state.run.requested_mode == "analyze_and_fix"
        else f"Mutation is not allowed in {state.run.requested_mode}"
    )
    expected: list[dict[str, Any]] = []
    for capability, target in attempted:
        decision = authorize_action(
            capability,  # type: ignore[arg-type]
            target,
            layers,
            repository_root=state.run.repository_root,
            resolve=lambda path: path,
        )
        if (capability, target) not in gated and decision.allowed:
            continue
        entry = {
            "decision": "deny",
            "capability": capability,
            "scope": decision.scope or capability,
            "policyRefs": [],
            "rationaleSummary": gate if (capability, target) in gated else decision.reason,
        }
        if entry not in expected:
            expected.append(entry)
    return expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mode=st.sampled_from(MODES), actions=_actions, changes=_changes)
def test_every_refused_target_at_any_layer_is_one_deny_note(
    mode: str, actions: list[Any], changes: list[Any]
) -> None:
    state, token, flow = _executing(mode)
    node = "diag" if mode == "analyze_and_fix" else "node-1"
    body = _body(flow, node, actions, changes)
    outcome = step(state, SubmitArtifact(token, "WorkResult", body, (), "2026-05-20T12:00:00.000Z"))
    event(f"{type(outcome).__name__} with {'records' if outcome.events else 'none'}")
    if isinstance(outcome, Accepted):
        traced = [n for n in outcome.events if n.event_type == "permission_checked"]
        attempted = [a for a in body["actions"] if a["status"] != "skipped"]
        assert len(traced) == len(attempted)
        return
    assert isinstance(outcome, Rejection)
    notes = [dict(note.permission_decision or {}) for note in outcome.events]
    assert all(note.event_type == "permission_checked" for note in outcome.events)
    assert notes == _refused(state, node, body)


@pytest.mark.anyio
@pytest.mark.rule("WR-ACTION-AUTHORIZED")
async def test_a_capability_the_run_was_not_granted_is_denied_once_and_nothing_else() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        b = flow.b
        actions = [
            b.action("A-1", "repository.read", "src/app.py", "evidence-1"),
            b.action("A-2", "network.read", "example.com", "evidence-1", "failed"),
        ]
        body = unsuccessful(b.result(actions=actions), "failed")
        await refuse(flow, "WorkResult", body, deny=1)
        await refuse(flow, "WorkResult", body, deny=0)  # the same refusal again: nothing new


@pytest.mark.anyio
@pytest.mark.rule("WR-FILE-CHANGE-AUTHORIZED")
async def test_a_write_outside_the_node_scope_is_denied_once_and_nothing_else() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger, "fix_only")
        b = flow.b
        actions = [b.action("A-1", "repository.write", "infra/prod.yml", "evidence-1")]
        files = [
            {
                "path": "infra/prod.yml",
                "changeType": "modified",
                "beforeHash": "sha256:" + "d" * 64,
                "afterHash": DIFF_HASH,
                "diffRef": b.uri("evidence-1"),
            }
        ]
        body = b.result(actions=actions, files=files)
        await refuse(flow, "WorkResult", body, deny=1)  # the change and its action: one decision
        trace = await flow.controller.get_trace(b.run_id, limit=500)
        [denial] = [e for e in trace.events if e.event_type == "permission_checked"]
        assert denial.permission_decision is not None
        assert denial.permission_decision.decision == "deny"
        assert denial.permission_decision.scope == "infra/prod.yml"
        await refuse(flow, "WorkResult", body, deny=0)
