"""The permission layers a host's native action is decided against, computed from a run state.

``telic_check_tool_action`` (through the RunActor) and ``telic hook`` (from a fresh process per
host tool call) both decide with ``telic.permissions.authorize_action`` over exactly these three
layers, so the two can never disagree: the mode policy, the run authorization (the mode ceiling
∩ what the user granted ∖ what they denied) and the current phase's effective permissions (what
the NextAction carries: the pending work node's permissions while executing, the authorized
reads while grounding, nothing in any other phase).
"""

from __future__ import annotations

from telic.controller._authority import layers
from telic.controller._events import Token
from telic.controller._machine import check_token
from telic.controller._next import next_action
from telic.controller._state import RunState, artifact_uri
from telic.permissions import Layer
from telic.protocol import PermissionSet


def tool_layers(state: RunState) -> tuple[Layer, Layer, Layer]:
    """Return the mode, authorization and phase layers of ``state``, outermost first.

    Raises:
        PermissionDenied: the pending work node's permissions exceed the run authorization (the
            NextAction itself cannot be generated, so nothing may be allowed).
    """
    action = next_action(state)
    phase = getattr(action, "effective_permissions", None) or PermissionSet.empty()
    return layers(state, "phase", phase)


def envelope_ref(state: RunState) -> str:
    """The run envelope's artifact reference: the policy a broker decision cites."""
    return artifact_uri(state.run.run_id, state.run.run_id)  # a RunEnvelope's id is its run's


def check_broker_token(state: RunState, token: Token) -> None:
    """Refuse a stale or foreign token of the original's broker dialect, in its words.

    The same check as every state-changing call's (rules ``RUN-TOKEN-VERSION`` and
    ``RUN-TOKEN-ACTION``), in any run status, with the original broker's texts; version 0
    passes the argument schema and is always stale.

    Raises:
        StaleToken: ``Stale run version X; current version is Y`` or ``Stale or foreign
            action_id; reload the next action``.
    """
    check_token(state, token, broker=True)
