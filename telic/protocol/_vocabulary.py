"""The closed sets the permission decision needs, without pydantic.

``telic.protocol._types`` re-exports them with every other scalar; they live here so that
``telic.permissions._decision`` (and the ``telic hook`` command that runs it once per host tool
call, in a fresh process) can be imported without building a single model.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["CAPABILITIES", "MODES", "Capability", "Mode"]

Capability = Literal[
    "repository.read",
    "repository.write",
    "repository.delete",
    "shell.inspect",
    "shell.execute",
    "runtime.inspect",
    "runtime.restart",
    "browser.inspect",
    "browser.mutate",
    "network.read",
    "external.write",
    "subagent.spawn",
]
CAPABILITIES: Final[tuple[Capability, ...]] = get_args(Capability)

Mode = Literal["report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix"]
MODES: Final[tuple[Mode, ...]] = get_args(Mode)
