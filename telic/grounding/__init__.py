"""Repository context grounding: which files a run may rely on, and why (docs/protocol.md §4).

``ground_repository`` lists the repository (git, else ripgrep, else a bounded walk), ranks the
candidates by path tokens only, and reads the best of them within a ``GroundingBudget``: files
that are binary, not UTF-8, secret-like by path or content, duplicated, too large or over budget
are left out and only counted. The result carries the canonical ``ContextManifest``, one
``ContextDocument`` per selected file, and the snake_case wire manifest. No path or byte of an
excluded file reaches any of them, nor an error message. docs/design.md describes the modules.
"""

from __future__ import annotations

from telic.grounding._budget import (
    GroundingBudget as GroundingBudget,
    GroundingProgress as GroundingProgress,
    GroundingStage as GroundingStage,
)
from telic.grounding._ground import (
    REPORT_ONLY_WARNING as REPORT_ONLY_WARNING,
    GroundingResult as GroundingResult,
    ground_repository as ground_repository,
)
from telic.grounding._paths import (
    EXCLUDED_DIRECTORIES as EXCLUDED_DIRECTORIES,
    PINNED_INSTRUCTION_FILES as PINNED_INSTRUCTION_FILES,
    is_instruction_path as is_instruction_path,
)
from telic.grounding._rank import STOP_WORDS as STOP_WORDS, tokenize as tokenize
from telic.grounding._select import ZERO_RELEVANCE_WARNING as ZERO_RELEVANCE_WARNING

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
