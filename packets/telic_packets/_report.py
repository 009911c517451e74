"""Report artifacts: a read-only projection of generated reports, honest about their state.

A viewer renders every status explicitly: ``present`` shows the report; ``absent`` shows the
fixed "not generated yet" frame, never a blank panel and never invented filler; ``stale`` shows
the report with the reason it is stale; ``invalid`` shows that the stored file does not verify.

Status rules (checked by the model): ``present`` and ``stale`` carry ``path``, ``sha256`` and
``generatedAt``; ``stale`` also carries ``staleReason``, which no other status may carry;
``absent`` carries none of ``path``, ``sha256``, ``generatedAt``; ``invalid`` carries ``path``.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, Self

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from telic_packets._base import PacketModel, Ref, Sha256Digest, Timestamp, unique
from telic_packets._bounds import MAX_POINTER_CHARS, MAX_REPORT_SOURCE_REFS
from telic_packets._packet import Harness

__all__ = ["ReportArtifact", "ReportStatus"]

ReportStatus = Literal["present", "absent", "stale", "invalid"]
"""The state of a report artifact as a viewer must show it."""

ABSENT_FRAME: Final = "not generated yet"

# A relative path inside the report mirror: no leading slash, no drive, no "..", no backslash.
_RELATIVE_PATH: Final = r"^(?:[^/\\:\s][^/\\:]*)(?:/[^/\\:]+)*$"


def _no_parent_segments(path: str) -> str:
    if any(segment in {".", ".."} for segment in path.split("/")):
        raise ValueError("path must not contain . or .. segments")
    return path


class ReportArtifact(PacketModel):
    """A generated report (loop report, run report, synthesis) as surfaced to a viewer."""

    kind: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    """Which report this is, e.g. ``loop_report`` or ``campaign_synthesis``."""

    status: ReportStatus
    """Whether the report is present, absent, stale or invalid."""

    path: (
        Annotated[
            str,
            StringConstraints(max_length=MAX_POINTER_CHARS, pattern=_RELATIVE_PATH),
            AfterValidator(_no_parent_segments),
        ]
        | None
    ) = None
    """Where the report lives, relative to the report mirror."""

    sha256: Sha256Digest | None = None
    """``sha256:`` of the report file's bytes."""

    generator: Harness
    """The ``{name, version}`` of the generator that writes (or would write) the report."""

    generated_at: Timestamp | None = None
    """When the report was generated."""

    source_refs: Annotated[
        list[Ref], Field(max_length=MAX_REPORT_SOURCE_REFS), AfterValidator(unique)
    ] = Field(default_factory=list)
    """Up to 32 refs of what the report was generated from (its provenance)."""

    covers: Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"\S")]
    """What the report covers, e.g. a run id or a campaign and spine prefix."""

    stale_reason: (
        Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"\S")] | None
    ) = None
    """Why a stale report is stale; required exactly when ``status`` is ``stale``."""

    @model_validator(mode="after")
    def _fields_match_status(self) -> Self:
        stored = {"path": self.path, "sha256": self.sha256, "generatedAt": self.generated_at}
        if self.status in ("present", "stale"):
            missing = [name for name, value in stored.items() if value is None]
            if missing:
                raise ValueError(f"a {self.status} report needs {', '.join(missing)}")
        if self.status == "absent":
            extra = [name for name, value in stored.items() if value is not None]
            if extra:
                raise ValueError(f"an absent report has no {', '.join(extra)}")
        if self.status == "invalid" and self.path is None:
            raise ValueError("an invalid report needs the path that failed to verify")
        if (self.status == "stale") != (self.stale_reason is not None):
            raise ValueError("staleReason is required when stale and forbidden otherwise")
        return self

    def banner(self) -> str:
        """Return the line a viewer shows above (or instead of) the report; empty when present."""
        if self.status == "absent":
            return ABSENT_FRAME
        if self.status == "stale":
            return f"stale: {self.stale_reason}"
        if self.status == "invalid":
            return "invalid: the stored report does not match its digest"
        return ""
