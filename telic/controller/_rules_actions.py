"""Invariants of the actions a WorkResult claims: authority, classes, spawns and file changes.

Telic cannot intercept a host's tools, so it judges the *claims*: every attempted action uses a
tool its node allows, on a target the mode, the run authorization and the node all authorize;
a denial is a real one; an action the host admits it took outside its permissions is recorded
(status ``unauthorized``, which must be true) rather than refused; the mutating flag tells the
truth; and file changes and completed write/delete actions correspond exactly, in both
directions, whatever the result's status.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from telic.controller._authority import decide
from telic.controller._check import Check, Rules, Violation
from telic.controller._work import GATED, action_decisions, node_of
from telic.permissions import MUTATING_REPOSITORY, TYPED_INSPECT_TARGETS, capability_is_mutating
from telic.protocol import Capability, FileChange, WorkResult

__all__ = ["RULES"]

_WR = ("WorkResult",)
_S = "§3.4 WorkResult"
_FC = "§3.4 WorkResult (FileChange ↔ action, every status)"

rule = Rules(_WR, _S)

_REPORTED_ELSEWHERE: Final = frozenset({"untyped_inspect_target", GATED})
"""Refusals other rules name (WR-SHELL-INSPECT-TARGET, WR-NO-MUTATION)."""


def _capability(change: FileChange) -> Capability:
    return "repository.delete" if change.change_type == "deleted" else "repository.write"


@rule(
    "WR-ACTION-ALLOWED-TOOL",
    "An attempted action with a capability outside its node's allowedTools.",
)
def wr_allowed_tool(c: Check[WorkResult]) -> Iterator[Violation]:
    """Every attempted action uses a capability among its node's allowedTools.

    An action recorded as ``unauthorized`` is the host's admission that it went outside its
    permissions, so it is exempt: refusing it would only teach the host to hide it.
    """
    node = node_of(c.state, c.body)
    for index, action, _ in action_decisions(c.state, c.body):
        if action.status == "unauthorized":
            continue
        if node is not None and action.capability not in node.allowed_tools:
            yield Violation(
                f"actions.{index}.capability",
                "Capability is not among the node's allowedTools; if you already did it, keep "
                "the action with status unauthorized",
            )


@rule(
    "WR-SHELL-INSPECT-TARGET",
    "shell.inspect with free shell text instead of one of the six typed targets.",
)
def wr_shell_inspect_target(c: Check[WorkResult]) -> Iterator[Violation]:
    """An attempted shell.inspect names one of the six typed read-only targets."""
    for index, action, _ in action_decisions(c.state, c.body):
        if action.capability == "shell.inspect" and action.target not in TYPED_INSPECT_TARGETS:
            yield Violation(
                f"actions.{index}.target",
                "shell.inspect targets are git.status, git.diff, git.log, network.listen, "
                "process.list or runtime.logs; running a command (a test) is shell.execute",
            )


@rule(
    "WR-ACTION-AUTHORIZED",
    "A completed or failed action on a target that mode, run authorization or node deny.",
    section="§3.4 WorkResult; §3.5",
)
def wr_action_authorized(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed and failed actions are authorized by mode ∩ run authorization ∩ node."""
    for index, action, decision in action_decisions(c.state, c.body):
        if action.status in ("denied", "unauthorized") or decision.code in _REPORTED_ELSEWHERE:
            continue
        if not decision.allowed:
            yield Violation(
                f"actions.{index}.target",
                f"Unauthorized: {decision.reason}. If you already did it, keep it with status "
                "unauthorized; if it was refused, status denied",
            )


@rule(
    "WR-UNAUTHORIZED-REAL",
    "Recording as unauthorized an action that mode, run authorization, node permissions and "
    "allowedTools allowed.",
)
def wr_unauthorized_real(c: Check[WorkResult]) -> Iterator[Violation]:
    """An action recorded as ``unauthorized`` really was outside what its node allowed: its
    permissions (and the layers above them) or its allowedTools, which WR-ACTION-ALLOWED-TOOL
    holds every other action to, so each real action has a status that records it."""
    node = node_of(c.state, c.body)
    for index, action, decision in action_decisions(c.state, c.body):
        if action.status != "unauthorized" or not decision.allowed:
            continue
        if node is None or action.capability in node.allowed_tools:
            yield Violation(
                f"actions.{index}.status",
                "This action was within the node's allowedTools and permissions: record it as "
                "completed or failed",
            )


@rule("WR-FALSE-DENIAL", "Reporting as denied an action that was in fact authorized.")
def wr_false_denial(c: Check[WorkResult]) -> Iterator[Violation]:
    """A ``denied`` action really was unauthorized."""
    for index, action, decision in action_decisions(c.state, c.body):
        if action.status == "denied" and decision.allowed:
            yield Violation(
                f"actions.{index}.status", "A denied action must really be unauthorized"
            )


@rule("WR-MUTATING-FLAG", "A mutating flag that contradicts the capability's class.")
def wr_mutating_flag(c: Check[WorkResult]) -> Iterator[Violation]:
    """The mutating flag matches the capability's class (shell.execute may be either)."""
    for index, action in enumerate(c.body.actions):
        expected = capability_is_mutating(action.capability)
        if expected is not None and action.mutating != expected:
            yield Violation(f"actions.{index}.mutating", "Flag does not match the capability")


@rule(
    "WR-SPAWN-COUNT",
    "More completed subagent.spawn actions than min(node child budget, permitted children).",
)
def wr_spawn_count(c: Check[WorkResult]) -> Iterator[Violation]:
    """Completed subagent.spawn actions fit the node's child budget and permission."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    limit = min(node.budgets.maximum_children, node.permissions.subagents.maximum_children)
    spawns = [
        i
        for i, a in enumerate(c.body.actions)
        if a.capability == "subagent.spawn" and a.status == "completed"
    ]
    for index in spawns[limit:]:
        yield Violation(
            f"actions.{index}", f"More completed spawns than the node's {limit} children"
        )


def _done(c: Check[WorkResult]) -> set[tuple[str, str]]:
    return {
        (a.capability, a.target)
        for a in c.body.actions
        if a.status == "completed" and a.mutating and a.capability in MUTATING_REPOSITORY
    }


@rule(
    "WR-FILE-CHANGES",
    "A FileChange without a completed write/delete action on the same path.",
    section=_FC,
)
def wr_file_changes(c: Check[WorkResult]) -> Iterator[Violation]:
    """Every FileChange has a completed mutating write/delete action on the same path."""
    done = _done(c)
    for index, change in enumerate(c.body.files_changed):
        if (_capability(change), change.path) not in done:
            yield Violation(f"filesChanged.{index}", "No completed action made this change")


@rule(
    "WR-WRITE-FILE-CHANGE",
    "A completed write/delete action without its exact FileChange.",
    section=_FC,
)
def wr_write_file_change(c: Check[WorkResult]) -> Iterator[Violation]:
    """Every completed write/delete action has the exact FileChange for its target."""
    changes = {(_capability(f), f.path) for f in c.body.files_changed}
    for index, action in enumerate(c.body.actions):
        key = (action.capability, action.target)
        if (
            action.status == "completed"
            and action.capability in MUTATING_REPOSITORY
            and key not in changes
        ):
            yield Violation(f"actions.{index}", "A completed write or delete needs its FileChange")


@rule(
    "WR-FILE-CHANGE-AUTHORIZED",
    "A FileChange on a path not authorized for its write or delete.",
    section=_FC,
)
def wr_file_change_authorized(c: Check[WorkResult]) -> Iterator[Violation]:
    """Every FileChange path is authorized for write (created/modified) or delete (deleted)."""
    node = node_of(c.state, c.body)
    if node is None:
        return
    for index, change in enumerate(c.body.files_changed):
        decision = decide(c.state, node.permissions, _capability(change), change.path)
        if not decision.allowed:
            yield Violation(f"filesChanged.{index}.path", f"Unauthorized: {decision.reason}")


RULES: Final = rule.registered
