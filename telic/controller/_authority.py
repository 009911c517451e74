"""The controller's view of the permission algebra: run authorization and action decisions.

The algebra itself lives in ``telic.permissions``; this module binds it to a run state so that
NextAction, the rules and the trace ask each question the same way. The core never touches the
filesystem: repository targets are judged lexically (the resolver is the identity), and the
symlink-aware check belongs to hosts that really act on files.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from telic.controller._state import RunState
from telic.permissions import (
    Decision,
    Layer,
    authorize_action,
    effective_authorization,
)
from telic.protocol import Authorization, Capability, Mode, PermissionSet

_REMEMBERED: Final = 256
"""How many runs' authorizations ``run_authorization`` keeps (least recently computed go first)."""

_authorizations: OrderedDict[int, tuple[Authorization, Mode, PermissionSet]] = OrderedDict()


def run_authorization(state: RunState) -> PermissionSet:
    """Return the effective run authorization: mode ceiling ∩ granted, minus denied categories.

    A pure function of the run's mode and its envelope's grants, asked several times per step
    and per NextAction: each run's answer is kept, keyed by the identity of its (frozen)
    authorization, which every state of the run shares. The entry holds that object, so its
    identity cannot be reused while the entry exists.
    """
    authorization = state.envelope.authorization
    mode = state.run.requested_mode
    remembered = _authorizations.get(id(authorization))
    if remembered is not None and remembered[0] is authorization and remembered[1] == mode:
        return remembered[2]
    effective = effective_authorization(mode, authorization.granted, authorization.denied)
    _authorizations[id(authorization)] = (authorization, mode, effective)
    while len(_authorizations) > _REMEMBERED:
        _authorizations.popitem(last=False)
    return effective


def layers(state: RunState, name: str, permissions: PermissionSet) -> tuple[Layer, Layer, Layer]:
    """Return the mode policy, the run authorization and ``permissions`` (named ``name``)."""
    return (
        Layer.for_mode(state.run.requested_mode),
        Layer.from_permissions("authorization", run_authorization(state)),
        Layer.from_permissions(name, permissions),
    )


def decide(
    state: RunState, node_permissions: PermissionSet, capability: Capability, target: str
) -> Decision:
    """Decide an attempted action against the mode policy, the run authorization and the node."""
    return authorize_action(
        capability,
        target,
        layers(state, "node", node_permissions),
        repository_root=state.run.repository_root,
        resolve=lambda path: path,  # lexically: the core never touches the filesystem
        protected_granted=state.envelope.authorization.protected_paths_granted,
    )
