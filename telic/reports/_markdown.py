"""The Markdown rendering of a run report: pure, deterministic, every untrusted text escaped."""

from __future__ import annotations

from collections.abc import Sequence

from telic.controller import human_time, phase_label, status_label
from telic.reports._format import anchor, duration, md, md_code
from telic.reports._model import SHELL_EXECUTE_NOTE, EvidenceEntry, RunReportData

__all__ = ["render_markdown"]


def _link(artifact_id: str) -> str:
    return f"[{md(artifact_id)}](#{anchor(artifact_id)})"


def _links(ids: Sequence[str]) -> str:
    return ", ".join(_link(i) for i in ids) if ids else "—"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], empty: str) -> list[str]:
    if not rows:
        return [f"_{empty}_", ""]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell or "—" for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _fence(text: str) -> str:
    longest = max((len(line) - len(line.lstrip("`")) for line in text.splitlines()), default=0)
    return "`" * max(3, longest + 1)


def _evidence(run_id: str, entry: EvidenceEntry) -> list[str]:
    out = [
        f'### <a id="{anchor(entry.artifact_id)}"></a>{md_code(entry.artifact_id)} '
        f"({md(entry.kind)}): {md(entry.summary)}",
        "",
    ]
    if entry.binary:
        return [*out, f"_Binary content ({entry.total_chars} base64 characters)._", ""]
    if not entry.total_chars:
        return [*out, "_No content._", ""]
    fence = _fence(entry.excerpt)
    lang = "diff" if entry.kind == "diff" else "text"
    out += [f"{fence}{lang}", entry.excerpt, fence, ""]
    if entry.truncated:
        out += [
            f"_First lines of {entry.total_lines}; the whole text: "
            f"{md_code(f'telic artifact {run_id} {entry.artifact_id}')}_",
            "",
        ]
    return out


def render_markdown(data: RunReportData) -> str:
    """Render ``data`` as a Markdown report (GitHub-flavoured tables, in-page anchors)."""
    out = [f"# Run report {md_code(data.run_id)}", ""]
    request = "_(the request message is missing)_" if data.request is None else md(data.request)
    out += [f"> **Request:** {request}", ""]
    status = data.terminal_status or data.run_status
    out += _table(
        ["Mode", "Status", "Phase", "Version", "Started", "Updated"],
        [
            [
                md(data.mode),
                f"**{md(status_label(status))}**",
                md(phase_label(data.phase)),
                str(data.version),
                human_time(data.created_at),
                human_time(data.updated_at),
            ]
        ],
        "",
    )
    integrity = data.integrity
    if integrity.ok:
        out += [f"Ledger integrity: verified ({integrity.records_checked} records).", ""]
    else:
        out += [f"**Ledger integrity: FAILED** — {md(integrity.problem or 'unknown')}", ""]
    if data.summary:
        out += ["## Summary", "", md(data.summary), ""]

    out += ["## Timeline", ""]
    out += _table(
        ["#", "Time", "Phase", "Actor", "Event", "Artifact", "Outcome", "Took"],
        [
            [
                str(e.sequence),
                human_time(e.timestamp),
                md(phase_label(e.phase)),
                md(e.actor),
                md(e.event),
                "—"
                if e.artifact_id is None
                else f"{_link(e.artifact_id)} ({md(e.artifact_type or '')})",
                md(e.outcome or ""),
                duration(e.duration_ms),
            ]
            for e in data.timeline
        ],
        "No steps recorded.",
    )

    out += ["## Path through the state machine", ""]
    for index, step in enumerate(data.path, 1):
        how = "" if not step.label else f" — {md(step.label)}"
        out.append(f"{index}. **{md(phase_label(step.phase))}** ({step.kind}){how}")
    out.append("")

    out += ["## Acceptance criteria", ""]
    out += _table(
        ["Criterion", "Stage", "Requirement", "Status", "Evidence"],
        [
            [md(c.id), md(c.stage), md(c.requirement), f"**{md(c.status)}**", _links(c.evidence)]
            for c in data.criteria
        ],
        "No task contract yet.",
    )

    out += ["## Claim → evidence", ""]
    out += _table(
        ["Claim", "Statement", "Status", "Basis", "Criteria", "Evidence", "From"],
        [
            [
                md(c.claim_id),
                md(c.claim),
                f"**{md(c.status)}**",
                md(c.basis),
                md(", ".join(c.criteria)),
                _links(c.evidence),
                _link(c.source),
            ]
            for c in data.claims
        ],
        "No claims recorded.",
    )

    out += ["## Evidence: the diff, the verification output, what was read", ""]
    for entry in data.evidence:
        out += _evidence(data.run_id, entry)
    if not data.evidence:
        out += ["_No evidence captured._", ""]

    out += ["## Verification", ""]
    out += _table(
        ["Requirement", "Capability", "Required", "Status", "Evidence", "Description"],
        [
            [
                md(v.requirement_id),
                md(v.capability),
                "yes" if v.required else "no",
                f"**{md(v.status)}**",
                _links(v.evidence),
                md(v.description),
            ]
            for v in data.verifications
        ],
        "No verification requirements.",
    )
    if any(v.host_attested for v in data.verifications):
        out += [f"> {md(SHELL_EXECUTE_NOTE)}", ""]

    out += ["## Permission decisions", ""]
    out += _table(
        ["#", "Decision", "Capability", "Scope", "Deciding layer", "Reason", "Action of"],
        [
            [
                str(p.sequence),
                f"**{p.decision}**",
                md(p.capability),
                md_code(p.scope) if p.scope else "—",
                md(p.deciding_layer),
                md(p.reason),
                "—" if p.artifact_id is None else _link(p.artifact_id),
            ]
            for p in data.permissions
        ],
        "No permission decisions recorded.",
    )
    if any(p.host_attested for p in data.permissions):
        out += [f"> {md(SHELL_EXECUTE_NOTE)}", ""]

    out += ["## Budgets", ""]
    out += _table(
        ["Budget", "Used", "Limit"],
        [[md(b.name), str(b.used), str(b.limit)] for b in data.budgets],
        "",
    )

    out += ["## Evidence packets", ""]
    out += _table(
        [
            "Packet",
            "Cast type",
            "Need",
            "Outcome / verdict",
            "Tokens (self-reported)",
            "Consumption",
        ],
        [
            [
                f"{md_code(p.packet_id)} ({_link(p.artifact_id)})",
                md(p.cast_type),
                md(p.need_code),
                md(f"{p.outcome} / {p.verdict}"),
                str(p.total_tokens),
                md(p.consumption if p.cite_kind in (None, "none") else f"cited ({p.cite_kind})"),
            ]
            for p in data.packets
        ],
        "No evidence packets in this run.",
    )
    if data.digest:
        fence = _fence(data.digest)
        out += ["Digest:", "", f"{fence}text", data.digest, fence, ""]

    out += ["## Unresolved risks", ""]
    out += [f"- {md(r)}" for r in data.risks] or ["_None recorded._"]
    out += ["", "## Next actions", ""]
    out += [
        f"- {md(n.id)}: {md(n.description)}"
        + (" _(needs authorization)_" if n.requires_authorization else "")
        for n in data.next_actions
    ] or ["_None recorded._"]

    out += ["", "## Artifacts", ""]
    shown = {e.artifact_id for e in data.evidence}
    for a in data.artifacts:
        extra = f" — {md(a.summary)}" if a.summary else ""
        name = anchor(a.artifact_id) + ("-record" if a.artifact_id in shown else "")
        out.append(
            f'- <a id="{name}"></a>{md_code(a.artifact_id)} '
            f"{md(a.type)} by {md(a.producer)} at {human_time(a.created_at)} "
            f"({a.size_bytes} bytes, {md_code(a.sha256)}){extra}"
        )
    if not data.artifacts:
        out.append("_No artifacts._")

    p = data.provenance
    out += [
        "",
        "## Provenance",
        "",
        f"- Run: {md_code(p.run_id)}",
        f"- Ledger chain head: {md_code(p.chain_head or '(empty)')} (record {p.chain_length})",
        f"- Generator: {md(p.generator_name)} {md(p.generator_version)}",
        f"- Generated at: {human_time(p.generated_at)}",
        "",
    ]
    return "\n".join(out)
