"""The one widening of a host's native reads: before the audit, the user's grant decides them.

A host reads before it frames, plans or reviews (a planner looks at the file it will plan a
change to), and the phases before execution grant no ``repository.read`` of their own. The hook
and the original's dialect of ``telic_check_tool_action`` ask ``reopens_read``. Pure.
"""

from __future__ import annotations

from typing import Final

from telic._secrets import is_secret_like_path
from telic.permissions._decision import Decision
from telic.permissions._protected import protected_pattern

READS_CLOSE_AT: Final = frozenset({"agent_5_audit", "agent_5_report"})
"""The phases in which a native read is decided by the phase layer again: the release audit
judges what the run did, and the report only tells it, so neither needs to look further."""


def reopens_read(phase: str, decision: Decision) -> bool:
    """Whether a native read the phase layer alone refused is decided again without that layer.

    In every phase before the audit (``READS_CLOSE_AT``) a read that only the phase layer
    refused is decided by the mode and the run authorization, the user's grant. Protected paths
    and secret-like paths (``is_secret_like_path``) are left to the phase layer: widening never
    reaches them.
    """
    return (
        decision.capability == "repository.read"
        and not decision.allowed
        and decision.deciding_layer == "phase"
        and phase not in READS_CLOSE_AT
        and decision.scope is not None
        and protected_pattern(decision.scope) is None
        and not is_secret_like_path(decision.scope)
    )
