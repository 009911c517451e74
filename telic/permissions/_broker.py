"""The original Telic's broker answer (``decision: {allowed, reasonCode, summary,
permissionDecision}``) for a decision our layers make.

The original's broker evaluates two policies, the mode policy ``intent_mode:<mode>`` and the
run envelope ``run_envelope`` (mode ceiling ∩ granted ∖ denied), and ignores the current
phase's permissions. Ours evaluates the same two **and** the phase layer, always: the answer
in the original's shape is a view of that decision, never a second, looser one. So a host
speaking the original's dialect may be told ``policy_denied`` where the original would allow
(a read outside the phase's permissions), never the reverse.

A policy "refuses" exactly when ``authorize_action`` with that layer alone denies, which is how
the original lists every refusing policy in its summary (``Denied by permission intersection:
intent_mode:report_only, run_envelope.``) while ``authorize_action`` names only the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

from telic.permissions._decision import Decision, Layer, authorize_action, permission_record
from telic.permissions._paths import Resolver, resolve_real_path
from telic.protocol import Capability, Mode


def policy_names(mode: Mode) -> dict[str, str]:
    """Our layer names → the original's policy names (the phase layer has no counterpart)."""
    return {
        "mode": f"intent_mode:{mode}",
        "authorization": "run_envelope",
        "phase": "phase_permissions",
    }


@dataclass(frozen=True, slots=True)
class BrokerDecision:
    """Our ``Decision`` with the original's answer beside it."""

    decision: Decision
    reason_code: Literal["allowed", "policy_denied"]
    summary: str
    """``Allowed by all <n> policies.`` or ``Denied by permission intersection: <names>.``"""
    policy_ref: str
    """The run envelope's artifact reference (the original's ``policyRefs``)."""

    @property
    def allowed(self) -> bool:
        """Whether every layer allows the action."""
        return self.decision.allowed

    def permission_decision(self) -> dict[str, object]:
        """The original's ``permissionDecision`` (what a ``broker_decision`` event records)."""
        d = self.decision
        return permission_record(
            d.verdict, d.capability, d.scope or "unknown", self.summary, [self.policy_ref]
        )

    def to_wire(self) -> dict[str, object]:
        """The original's four keys, then ours (``Decision``'s fields, camelCase)."""
        d = self.decision
        return {
            "allowed": d.allowed,
            "reasonCode": self.reason_code,
            "summary": self.summary,
            "permissionDecision": self.permission_decision(),
            "capability": d.capability,
            "scope": d.scope,
            "decidingLayer": d.deciding_layer,
            "reason": d.reason,
            "code": d.code,
        }


def broker_decision(
    capability: Capability,
    target: str | None,
    layers: Sequence[Layer],
    *,
    names: Mapping[str, str],
    policy_ref: str,
    repository_root: str,
    resolve: Resolver = resolve_real_path,
    protected_granted: Sequence[str] = (),
) -> BrokerDecision:
    """Decide ``capability`` on ``target`` against every layer and answer in both shapes.

    Args:
        layers: every layer the decision needs (mode, authorization, phase), outermost first.
        names: layer name → the name the summary gives it (``policy_names``).
        policy_ref: the run envelope's artifact reference.
        repository_root, resolve, protected_granted: as for ``authorize_action``.
    """
    decide = partial(
        authorize_action,
        capability,
        target,
        repository_root=repository_root,
        resolve=resolve,
        protected_granted=protected_granted,
    )
    decision = decide(layers)
    if decision.allowed:
        summary = f"Allowed by all {len(layers)} policies."
        return BrokerDecision(decision, "allowed", summary, policy_ref)
    refusing = tuple(names.get(one.name, one.name) for one in layers if not decide((one,)).allowed)
    summary = f"Denied by permission intersection: {', '.join(refusing)}."
    return BrokerDecision(decision, "policy_denied", summary, policy_ref)
