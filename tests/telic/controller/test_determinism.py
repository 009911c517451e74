"""Replaying the same submissions from the same start yields the same actions and trace."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings, strategies as st

from telic._errors import TelicError
from telic.ledger import open_ledger

from .builders import READ, Flow, clock_from, ids_from

VR = {
    "id": "VR-1",
    "stage": "completion",
    "description": "Read it",
    "required": True,
    "capability": "repository.read",
    "fallback": None,
}

STEPS = [
    "ground",
    "frame",
    "contract",
    "review",
    "plan",
    "evidence",
    "result",
    "qr",
    "audit",
    "report",
    "bogus",
    "cancel",
]


async def _apply(flow: Flow, name: str) -> None:
    b = flow.b
    bodies: dict[str, tuple[str, Any]] = {
        "frame": ("ProblemFrame", b.frame()),
        "contract": ("TaskContract", b.contract()),
        "review": ("PromptReview", b.prompt_review()),
        "plan": ("WorkPlan", b.plan(nodes=[b.node(tools=["repository.read"])])),
        "evidence": ("Evidence", b.evidence()),
        "result": ("WorkResult", b.result()),
        "qr": ("QualityReview", b.quality_review(verifications=["VR-1"])),
        "audit": ("ReleaseAudit", b.audit()),
        "report": ("UserReport", b.report(verifications=["evidence-1"])),
        "bogus": ("WorkResult", {"id": "x", "runId": b.run_id}),
    }
    if name == "ground":
        await flow.ground(documents=2)
    elif name == "cancel":
        await flow.cancel()
    else:
        await flow.submit(*bodies[name])


async def _replay(names: list[str]) -> list[Any]:
    observed: list[Any] = []
    async with open_ledger("memory://", clock=clock_from(500)) as ledger:
        flow = await Flow.start(ledger, "analyze_only", clock=clock_from(), new_id=ids_from())
        flow.b.permissions, flow.b.verifications = READ, [VR]
        for name in names:
            try:
                await _apply(flow, name)
                observed.append(("ok", flow.action.model_dump(mode="json")))
            except TelicError as error:
                observed.append(("refused", type(error).__name__, error.rules))
        trace = await flow.controller.get_trace(flow.b.run_id, limit=500)
        observed.append([event.to_wire() for event in trace.events])
    return observed


@settings(max_examples=20, deadline=None)
@given(st.lists(st.sampled_from(STEPS), max_size=12))
def test_replaying_the_same_submissions_yields_identical_actions_and_traces(
    tail: list[str],
) -> None:
    names = ["ground", "frame", "contract", "review", "plan", "evidence", *tail]
    first = anyio.run(_replay, names)
    second = anyio.run(_replay, names, backend="trio")
    assert first == second
