"""The run envelope and the stored user message (docs/protocol.md §2 tool 1, §3.1).

``RunEnvelope`` is the controller's immutable record of what a run may do: the request it serves,
where it works, what the host can do and what the user granted or denied, and its budgets. Its
artifact id is the run id, so the body has no ``id`` field. ``UserMessage`` is internal: the
ledger stores the original request and each clarification answer as one.
"""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from telic.protocol._base import ArtifactBody, WireModel
from telic.protocol._types import (
    MAX_BOUNDED_TEXT,
    MAX_IDENTIFIER,
    ArtifactUri,
    Capability,
    FewItems,
    Glob,
    Identifier,
    Items,
    Mode,
    NativeSubagents,
    OnceBudget,
    PermissionSet,
    ReferenceUri,
    RelativePath,
    RunStatus,
    SubagentDepth,
    Timestamp,
    Topology,
    WorkerCount,
)

MAX_REPOSITORY_ROOT: Final = 4_096
"""Longest repository root path."""

# POSIX "/x"; win32 "\x", "C:\x", "C:/x" and UNC "\\server\share" (what node's isAbsolute accepts).
_ABSOLUTE_ROOT_RE: Final = re.compile(r"^(?:/|\\|[A-Za-z]:[\\/])")


def _check_absolute_root(value: str) -> str:
    if not _ABSOLUTE_ROOT_RE.match(value):
        raise PydanticCustomError(
            "repository_root_not_absolute", "Repository root must be an absolute path"
        )
    return value


RepositoryRoot = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_REPOSITORY_ROOT),
    AfterValidator(_check_absolute_root),
]
"""An absolute POSIX or Windows directory path of at most 4096 chars."""


class WorkingContext(WireModel):
    """Where the run works and which rules apply there."""

    repository_root: RepositoryRoot
    """Absolute path of the repository root (POSIX or Windows)."""
    active_files: Items[RelativePath]
    """Repository-relative paths the user pointed at."""
    applicable_rule_refs: Items[ReferenceUri]
    """References to rules that govern the run."""


class HostDescriptor(WireModel):
    """The host that drives the run and what it can really do."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=MAX_IDENTIFIER)]
    """Host product name, e.g. "codex"."""
    version: Annotated[str, StringConstraints(min_length=1, max_length=MAX_IDENTIFIER)] | None
    """Host version, or null when unknown."""
    native_subagents: NativeSubagents
    """Whether the host can spawn native subagents."""
    capabilities: Items[Capability]
    """Capabilities the host actually offers."""


class Authorization(WireModel):
    """What the user granted and explicitly denied for this run."""

    granted: PermissionSet
    """Permissions granted to the run."""
    denied: PermissionSet
    """Permissions explicitly denied; a non-empty category is dropped entirely."""
    protected_paths_granted: FewItems[Glob] = Field(default=[], exclude_if=lambda value: not value)
    """Protected paths (git directories, ``.github``, env files) the user explicitly let writes
    and deletes reach, as repo-relative patterns; beyond Telic 1.0, so omitted when empty."""


class RunBudgets(WireModel):
    """Revision, remediation and parallelism budgets of a run."""

    prompt_revisions: OnceBudget
    """Contract revisions allowed after review (0–1)."""
    post_execution_remediations: OnceBudget
    """Remediations shared by quality review and release audit (0–1)."""
    maximum_parallel_workers: WorkerCount
    """Most workers that may run at once (1–16)."""
    maximum_subagent_depth: SubagentDepth
    """Deepest allowed subagent nesting (0–4)."""


class RunEnvelope(ArtifactBody):
    """The immutable authority of a run; its artifact id is the run id."""

    run_id: Identifier
    """Id of the run (a UUID)."""
    created_at: Timestamp
    """When the run was started."""
    original_request_ref: ArtifactUri
    """The UserMessage holding the original request."""
    followup_request_refs: Items[ArtifactUri]
    """Later UserMessages that add to the request."""
    requested_mode: Mode | None
    """The intent mode the user asked for, or null."""
    status: RunStatus
    """Protocol status of the run."""
    working_context: WorkingContext
    """Repository root, active files and applicable rules."""
    host: HostDescriptor
    """The host and its real capabilities."""
    authorization: Authorization
    """Granted and denied permissions."""
    budgets: RunBudgets
    """Revision, remediation and parallelism budgets."""
    policy_refs: Items[ReferenceUri]
    """Policies that bound the run."""
    topology: Topology | None = Field(default=None, exclude_if=lambda value: value is None)
    """The topology the run asked for at start (beyond Telic 1.0); absent on a run that did
    not ask, which follows the 1.0 path. Never updated: an escalation changes the run row."""


class UserMessage(ArtifactBody):
    """A message from the user: the original request or a clarification answer (internal)."""

    id: Identifier
    """Id of this message."""
    run_id: Identifier
    """Id of the run it belongs to."""
    content: Annotated[str, StringConstraints(min_length=1, max_length=MAX_BOUNDED_TEXT)]
    """The user's exact words, 1–32,768 chars."""
