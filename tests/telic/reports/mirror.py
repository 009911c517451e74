"""A report mirror on disk, as a campaign harness writes one, for the mirror tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

LOOP_TEXT = "# Loop report\n\nThree loops ran; <b>two</b> converged.\n"
SYNTHESIS_TEXT = "# Campaign synthesis\n\nThe spine holds.\n"


def write_report(
    folder: Path,
    name: str,
    kind: str,
    text: str | None,
    *,
    status: str = "present",
    stale_reason: str | None = None,
    campaign: str | None = "c-2026-11",
    spine_prefix: str | None = "3f2a9c",
    digest_of: str | None = None,
) -> dict[str, Any]:
    """Write ``<name>.report.json`` (and ``<name>.md`` when ``text``); return the descriptor."""
    folder.mkdir(parents=True, exist_ok=True)
    artifact: dict[str, Any] = {
        "kind": kind,
        "status": status,
        "generator": {"name": "campaign-harness", "version": "2.1.0"},
        "covers": f"campaign {campaign}, spine prefix {spine_prefix}",
        "sourceRefs": ["repo://campaigns/c-2026-11/spine.jsonl"],
    }
    if status != "absent":
        artifact["path"] = f"{name}.md"
        artifact["sha256"] = (
            "sha256:"
            + hashlib.sha256(
                (digest_of if digest_of is not None else text or "").encode()
            ).hexdigest()
        )
        artifact["generatedAt"] = "2026-11-30T08:00:00Z"
    if stale_reason is not None:
        artifact["staleReason"] = stale_reason
    if text is not None:
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    descriptor: dict[str, Any] = {"artifact": artifact}
    if campaign is not None:
        descriptor["campaign"] = campaign
    if spine_prefix is not None:
        descriptor["spinePrefix"] = spine_prefix
    (folder / f"{name}.report.json").write_text(json.dumps(descriptor), encoding="utf-8")
    return descriptor


def full_mirror(folder: Path) -> Path:
    """A mirror holding a present loop report and a stale campaign synthesis."""
    write_report(folder, "loop-c-2026-11", "loop_report", LOOP_TEXT)
    write_report(
        folder,
        "synthesis-c-2026-11",
        "campaign_synthesis",
        SYNTHESIS_TEXT,
        status="stale",
        stale_reason="two loops finished after it was generated",
    )
    return folder
