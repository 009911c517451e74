"""Grounding limits, progress reports and the input checks of docs/protocol.md §4 items 1–2.

The defaults and hard caps are those of docs/protocol.md §3.3. Every check raises
``UsageError`` naming the offending argument or field, and never echoes a submitted path, which
may be secret-like.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from telic._errors import UsageError
from telic.protocol import (
    MAX_BOUNDED_TEXT,
    MAX_FILE_BYTES,
    MAX_INVENTORY_FILES,
    MAX_RELATIVE_PATH,
    MAX_REPOSITORY_ROOT,
    MAX_SELECTED_FILES,
    MAX_TOTAL_BYTES,
    is_identifier,
)

MAX_ACTIVE_PATHS: Final = 256
"""Most active paths one grounding accepts."""
MAX_EXCLUDED_ROOTS: Final = 16
"""Most excluded roots one grounding accepts."""

# field → its hard cap, docs/protocol.md §3.3: the bounds of the wire budget
_CAPS: Final = {
    "max_files": MAX_SELECTED_FILES,
    "max_file_bytes": MAX_FILE_BYTES,
    "max_total_bytes": MAX_TOTAL_BYTES,
    "max_inventory_files": MAX_INVENTORY_FILES,
}


@dataclass(frozen=True, slots=True)
class GroundingBudget:
    """How much repository context one grounding may select and how much it may list.

    Every field must be a positive integer no larger than its hard cap (256 files, 2 MiB per
    file, 16 MiB in total, 100,000 inventoried files); ``UsageError`` names the field otherwise.
    """

    max_files: int = 48
    """Most files that may be selected."""
    max_file_bytes: int = 131_072
    """Largest file that may be selected, in bytes."""
    max_total_bytes: int = 524_288
    """Most bytes all selected files may hold together."""
    max_inventory_files: int = 20_000
    """Most inventoried files that are ranked; the surplus is counted as inventory_budget."""

    def __post_init__(self) -> None:
        for name, cap in _CAPS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"budget.{name} must be a positive integer")
            if value > cap:
                raise UsageError(f"budget.{name} must be at most {cap:,}")


GroundingStage = Literal["inventory", "selection", "done"]
"""Where a grounding is: listing the repository, reading candidates, or finished."""


@dataclass(frozen=True, slots=True)
class GroundingProgress:
    """One progress report: how many files were inventoried, considered and selected so far."""

    stage: GroundingStage
    """The current stage."""
    inventoried: int
    """Files the inventory listed (before truncation)."""
    considered: int
    """Ranked candidates the selection loop has decided on."""
    selected: int
    """Files selected so far."""


def check_inputs(
    *,
    run_id: object,
    original_request: object,
    repository_root: object,
    active_paths: Sequence[object],
    excluded_roots: Sequence[object],
) -> None:
    """Validate the arguments of a grounding (docs/protocol.md §4 item 1). Raises ``UsageError``."""
    if not is_identifier(run_id):
        raise UsageError("run_id must be an identifier of 1–128 characters")
    if not isinstance(original_request, str):
        raise UsageError("original_request must be a string")
    if len(original_request.encode("utf-8", "surrogatepass")) > MAX_BOUNDED_TEXT:
        raise UsageError(f"original_request must be at most {MAX_BOUNDED_TEXT:,} UTF-8 bytes")
    if not isinstance(repository_root, (str, Path)) or not str(repository_root):
        raise UsageError("repository_root must be a non-empty path")
    if len(str(repository_root)) > MAX_REPOSITORY_ROOT or "\0" in str(repository_root):
        raise UsageError(f"repository_root must be a path of at most {MAX_REPOSITORY_ROOT:,} chars")
    if isinstance(active_paths, (str, bytes)) or len(active_paths) > MAX_ACTIVE_PATHS:
        raise UsageError(f"active_paths must be a list of at most {MAX_ACTIVE_PATHS} paths")
    for number, path in enumerate(active_paths, start=1):
        if not isinstance(path, str) or not 1 <= len(path) <= MAX_RELATIVE_PATH:
            raise UsageError(
                f"active path #{number} must be a string of 1–{MAX_RELATIVE_PATH:,} chars"
            )
        if "\0" in path:
            raise UsageError(f"active path #{number} holds a NUL character")
    if isinstance(excluded_roots, (str, bytes)) or len(excluded_roots) > MAX_EXCLUDED_ROOTS:
        raise UsageError(f"excluded_roots must be a list of at most {MAX_EXCLUDED_ROOTS} paths")
    for number, root in enumerate(excluded_roots, start=1):
        if not isinstance(root, (str, Path)) or "\0" in str(root):
            raise UsageError(f"excluded root #{number} must be a path")
        if not os.path.isabs(root) or len(str(root)) > MAX_REPOSITORY_ROOT:
            raise UsageError(f"excluded root #{number} must be an absolute path")
