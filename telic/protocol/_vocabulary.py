"""The closed sets and the identifier syntax that pydantic-free code needs.

``telic.protocol._types`` re-exports them with every other scalar; they live here so that
``telic.permissions._decision`` and ``telic.ledger`` (which the ``telic hook`` command runs once
per host tool call, in a fresh process) can be imported without building a single model.
"""

from __future__ import annotations

import re
from typing import Final, Literal, get_args

MAX_IDENTIFIER: Final = 128
"""Most characters of a protocol identifier."""
IDENTIFIER_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"
"""The syntax of a protocol identifier (run, artifact, event and node ids)."""
_ID: Final = re.compile(IDENTIFIER_PATTERN)
MAX_SUMMARY: Final = 4_096
"""Maximum chars (and UTF-8 bytes) of a Summary, a permission decision's rationale among them."""
MAX_TARGET: Final = 2_048
"""Most characters of an action's target, which a permission decision records as its scope."""

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


def is_identifier(value: object) -> bool:
    """Return whether ``value`` is a protocol identifier: ``IDENTIFIER_PATTERN``, 1–128 chars."""
    return isinstance(value, str) and len(value) <= MAX_IDENTIFIER and bool(_ID.fullmatch(value))
