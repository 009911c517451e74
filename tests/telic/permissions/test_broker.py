"""``broker_decision``: our three-layer decision answered in the original Telic's broker shape."""

from __future__ import annotations

from telic.permissions import Grant, Layer, broker_decision, policy_names

from .conftest import FAKE_ROOT, fake_resolve

REF = "artifact://run-1/envelope"
MODE = Layer.for_mode("analyze_only")
RUN = Layer("authorization", allow=(Grant("repository.read", ("**",)), Grant("shell.inspect")))
PHASE_NONE = Layer("phase")
PHASE_READ = Layer("phase", allow=(Grant("repository.read", ("src/**",)),))


def _decide(capability: str, target: str | None, phase: Layer = PHASE_READ) -> dict[str, object]:
    return broker_decision(
        capability,  # type: ignore[arg-type]
        target,
        (MODE, RUN, phase),
        names=policy_names("analyze_only"),
        policy_ref=REF,
        repository_root=FAKE_ROOT,
        resolve=fake_resolve,
    ).to_wire()


def test_an_allow_counts_every_policy_and_cites_the_envelope() -> None:
    answer = _decide("repository.read", "src/a.py")
    assert answer["allowed"] is True
    assert answer["reasonCode"] == "allowed"
    assert answer["summary"] == "Allowed by all 3 policies."
    assert answer["permissionDecision"] == {
        "decision": "allow",
        "capability": "repository.read",
        "scope": "src/a.py",
        "policyRefs": [REF],
        "rationaleSummary": "Allowed by all 3 policies.",
    }
    assert answer["code"] == "allowed"


def test_a_deny_names_every_policy_that_refuses_alone() -> None:
    answer = _decide("repository.write", "src/a.py")
    assert answer["reasonCode"] == "policy_denied"
    assert answer["summary"] == (
        "Denied by permission intersection: intent_mode:analyze_only, run_envelope, "
        "phase_permissions."
    )
    assert answer["decidingLayer"] == "mode"  # ours: the first that decided


def test_the_phase_layer_still_refuses_what_the_originals_two_policies_allow() -> None:
    """Never looser than ours: the original ignores phase permissions, this answer does not."""
    answer = _decide("repository.read", "src/a.py", PHASE_NONE)
    assert answer["allowed"] is False
    assert answer["summary"] == "Denied by permission intersection: phase_permissions."
    outside = _decide("repository.read", "docs/a.md")
    assert outside["summary"] == "Denied by permission intersection: phase_permissions."


def test_a_refused_target_is_refused_by_every_policy_and_without_target_scope_is_unknown() -> None:
    escaping = _decide("repository.read", "../etc/passwd")
    assert escaping["allowed"] is False
    assert escaping["summary"] == (
        "Denied by permission intersection: intent_mode:analyze_only, run_envelope, "
        "phase_permissions."
    )
    untargeted = _decide("repository.read", None)
    assert untargeted["permissionDecision"]["scope"] == "unknown"  # type: ignore[index]
    assert untargeted["code"] == "target_required"
