"""The report mirror: external reports (a loop report, a campaign synthesis), read-only.

A campaign harness generates its reports elsewhere and mirrors them into a folder. Each report
there has a descriptor, ``<name>.report.json``::

    {"artifact": <ReportArtifact, camelCase>, "campaign": "<campaign>", "spinePrefix": "<prefix>"}

and, when it was generated, the file its ``path`` names (relative to the folder). Telic never
writes the mirror. ``read_mirror`` reads it and ``judge`` (pure) decides each report's honest
state from what is on disk, whatever the descriptor claims:

- ``absent``: no descriptor of an expected kind (``EXPECTED_KINDS``), a descriptor that says so,
  or a descriptor whose file is missing;
- ``invalid``: a descriptor that does not parse or lacks its provenance, a file whose bytes do
  not match the descriptor's ``sha256``, a path that leaves the folder, an unreadable file;
- ``stale``: the descriptor says so, with its reason (the harness knows what is newer);
- ``present``: the file is there and matches its digest.

The provenance (campaign, spine prefix) rides every entry, so the page always says which
campaign and which part of the spine a report covers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
from pydantic import ValidationError

from telic.protocol import sha256_hex_digest
from telic_packets import Harness, ReportArtifact

DESCRIPTOR_SUFFIX: Final = ".report.json"
EXPECTED_KINDS: Final = ("loop_report", "campaign_synthesis")
"""The reports a campaign mirror is expected to hold; a missing one is shown ``absent``."""
MAX_REPORT_BYTES: Final = 4 * 1024 * 1024
"""The largest report file the viewer reads."""
_MAX_DESCRIPTOR_BYTES: Final = 64 * 1024
_PROVENANCE_CHARS: Final = 200
_UNKNOWN: Final = Harness(name="unknown", version="0.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class MirrorEntry:
    """One report of the mirror, as a viewer must show it."""

    name: str
    """The descriptor's name without ``.report.json`` (the page address), or the kind."""
    artifact: ReportArtifact
    """The report's honest state (judged from the disk, not taken from the descriptor)."""
    campaign: str | None = None
    spine_prefix: str | None = None
    text: str | None = None
    """The report's text when it is shown (``present`` or ``stale``)."""
    problem: str | None = None
    """Why an ``invalid`` or ``absent`` report is so, in words."""


def _provenance(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if isinstance(value, str) and value.strip() and len(value) <= _PROVENANCE_CHARS:
        return value
    return None


def _invalid(name: str, kind: str, path: str, why: str, **provenance: str | None) -> MirrorEntry:
    artifact = ReportArtifact(
        kind=kind, status="invalid", path=path, generator=_UNKNOWN, covers=name
    )
    campaign, spine = provenance.get("campaign"), provenance.get("spine_prefix")
    return MirrorEntry(
        name=name, artifact=artifact, campaign=campaign, spine_prefix=spine, problem=why
    )


def absent_entry(kind: str, why: str = "no report of this kind is in the mirror") -> MirrorEntry:
    """The entry of an expected report that the mirror does not hold."""
    artifact = ReportArtifact(kind=kind, status="absent", generator=_UNKNOWN, covers=kind)
    return MirrorEntry(name=kind, artifact=artifact, problem=why)


def judge(name: str, descriptor: bytes, report: bytes | OSError | None) -> MirrorEntry:
    """Decide one report's state from its descriptor's bytes and its file's (pure).

    ``report`` is the file's bytes, ``None`` when the file is missing (or the descriptor names
    none), or the ``OSError`` met reading it.
    """
    descriptor_name = name + DESCRIPTOR_SUFFIX
    try:
        raw = json.loads(descriptor.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return _invalid(name, "unknown_report", descriptor_name, "the descriptor is not JSON")
    if not isinstance(raw, dict):
        return _invalid(name, "unknown_report", descriptor_name, "the descriptor is not an object")
    campaign, spine = _provenance(raw, "campaign"), _provenance(raw, "spinePrefix")
    try:
        declared = ReportArtifact.model_validate(raw.get("artifact"))
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "artifact"
        return _invalid(
            name,
            "unknown_report",
            descriptor_name,
            f"the descriptor's artifact does not fit the ReportArtifact contract (at {where})",
            campaign=campaign,
            spine_prefix=spine,
        )
    kind, path = declared.kind, declared.path or descriptor_name
    if campaign is None or spine is None:
        return _invalid(
            name, kind, path, "the descriptor has no campaign or spinePrefix (its provenance)"
        )
    known = {"campaign": campaign, "spine_prefix": spine}
    if declared.status == "absent" or (declared.status != "invalid" and report is None):
        why = (
            "the generator has not written it"
            if declared.status == "absent"
            else (f"the descriptor names {declared.path}, which is not in the mirror")
        )
        artifact = ReportArtifact(
            kind=kind,
            status="absent",
            generator=declared.generator,
            covers=declared.covers,
            source_refs=declared.source_refs,
        )
        return MirrorEntry(
            name=name, artifact=artifact, campaign=campaign, spine_prefix=spine, problem=why
        )
    if declared.status == "invalid":
        return _invalid(name, kind, path, "the generator marked it invalid", **known)
    if isinstance(report, OSError):
        return _invalid(name, kind, path, f"the file cannot be read ({report.strerror})", **known)
    assert report is not None
    if sha256_hex_digest(report) != declared.sha256:
        return _invalid(name, kind, path, "the file's bytes do not match its sha256", **known)
    try:
        text = report.decode("utf-8")
    except UnicodeDecodeError:
        return _invalid(name, kind, path, "the file is not UTF-8 text", **known)
    return MirrorEntry(
        name=name, artifact=declared, campaign=campaign, spine_prefix=spine, text=text
    )


def _read_bounded(path: Path, limit: int) -> bytes:
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(27, "File too large", str(path))
    return data


def _inside(folder: Path, relative: str) -> Path | None:
    target = (folder / relative).resolve()
    return target if target.is_relative_to(folder) else None


def _read_one(folder: Path, descriptor: Path) -> MirrorEntry:
    name = descriptor.name.removesuffix(DESCRIPTOR_SUFFIX)
    try:
        raw = _read_bounded(descriptor, _MAX_DESCRIPTOR_BYTES)
    except OSError as exc:
        return _invalid(name, "unknown_report", descriptor.name, f"unreadable ({exc.strerror})")
    report: bytes | OSError | None = None
    try:
        path = json.loads(raw).get("artifact", {}).get("path")
    except (ValueError, AttributeError):
        path = None
    if isinstance(path, str) and path:
        target = _inside(folder, path)
        if target is None:
            return judge(name, raw, OSError(1, "it leaves the mirror folder", path))
        try:
            report = _read_bounded(target, MAX_REPORT_BYTES)
        except FileNotFoundError:
            report = None
        except OSError as exc:
            report = exc
    return judge(name, raw, report)


def _read_all(folder: Path) -> tuple[MirrorEntry, ...]:
    real = folder.resolve()
    descriptors = sorted(
        p for p in real.iterdir() if p.name.endswith(DESCRIPTOR_SUFFIX) and p.is_file()
    )
    entries = [_read_one(real, d) for d in descriptors]
    kinds = {e.artifact.kind for e in entries}
    entries += [absent_entry(kind) for kind in EXPECTED_KINDS if kind not in kinds]
    order = {kind: i for i, kind in enumerate(EXPECTED_KINDS)}
    return tuple(sorted(entries, key=lambda e: (order.get(e.artifact.kind, 9), e.name)))


async def read_mirror(folder: str | os.PathLike[str]) -> tuple[MirrorEntry, ...]:
    """Every report of the mirror ``folder``, each judged, with an ``absent`` entry for each
    expected kind it lacks. Raises ``FileNotFoundError``/``NotADirectoryError`` for the folder."""
    return await anyio.to_thread.run_sync(_read_all, Path(folder))
