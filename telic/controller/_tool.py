"""The permission layers a host's native action is decided against, computed from a run state.

``telic_check_tool_action`` (through the RunActor) and ``telic hook`` (from a fresh process per
host tool call) both decide with ``telic.permissions.authorize_action`` over exactly these three
layers, so the two can never disagree: the mode policy, the run authorization (the mode ceiling
∩ what the user granted ∖ what they denied) and the current phase's effective permissions (what
the NextAction carries: the pending work node's permissions while executing, the authorized
reads while grounding, nothing in any other phase).
"""

from __future__ import annotations

from telic.controller._next import next_action
from telic.controller._state import RunState
from telic.permissions import Layer, effective_authorization
from telic.protocol import PermissionSet

__all__ = ["tool_layers"]


def tool_layers(state: RunState) -> tuple[Layer, Layer, Layer]:
    """Return the mode, authorization and phase layers of ``state``, outermost first.

    Raises:
        PermissionDenied: the pending work node's permissions exceed the run authorization (the
            NextAction itself cannot be generated, so nothing may be allowed).
    """
    action = next_action(state)
    phase = getattr(action, "effective_permissions", None) or PermissionSet.empty()
    granted = state.envelope.authorization
    return (
        Layer.for_mode(state.run.mode),
        Layer.from_permissions(
            "authorization",
            effective_authorization(state.run.mode, granted.granted, granted.denied),
        ),
        Layer.from_permissions("phase", phase),
    )
