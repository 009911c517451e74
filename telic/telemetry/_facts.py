"""What may leave the process: an allow-list of ids, types, verdicts and counts per artifact.

Nothing here copies free text. Every attribute is an enum value the schema closes, an id, a
number or a count; claims, requests, summaries, quotes, targets and paths never appear. A test
plants a marker string in every body and scans every exported attribute for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias

AttributeValue: TypeAlias = str | bool | int | float | Sequence[str] | Sequence[int]
Attributes: TypeAlias = dict[str, AttributeValue]

# OpenTelemetry GenAI semantic-convention names (spelled out: the semconv package marks them
# as moved, and the API package alone must be enough).
OPERATION: Final = "gen_ai.operation.name"
WORKFLOW_NAME: Final = "gen_ai.workflow.name"
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
USAGE_INPUT: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT: Final = "gen_ai.usage.output_tokens"

_MAX_LIST: Final = 64


def _list(body: Mapping[str, Any], key: str) -> list[Any]:
    value = body.get(key)
    return list(value) if isinstance(value, list | tuple) else []


def _enum(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) and len(value) <= 64 else None


def _id_of(ref: Any) -> str:
    text = str(ref)
    return text.rsplit("/", 1)[-1] if text.startswith("artifact://") else "(external)"


def _verdicts(rows: list[Any], id_key: str) -> list[str]:
    return [f"{row.get(id_key)}={row.get('status')}" for row in rows[:_MAX_LIST]]


def artifact_facts(type_: str, body: Mapping[str, Any]) -> Attributes:
    """Return the safe ``telic.*`` attributes of an artifact (ids, verdicts, counts only)."""
    facts: Attributes = {}

    def put(key: str, value: AttributeValue | None) -> None:
        if value is not None:
            facts[key] = value

    if type_ in ("PromptReview", "QualityReview", "ReleaseAudit"):
        put("telic.gate.decision", _enum(body, "decision"))
        score = body.get("overallScore", body.get("score"))
        if isinstance(score, int | float) and not isinstance(score, bool):
            put("telic.gate.score", score)
        failed = [g for g in _list(body, "hardGates") if g.get("passed") is False]
        put("telic.gate.hard_gates.failed", len(failed))
        blocking = [f for f in _list(body, "findings") if f.get("severity") == "blocking"]
        put("telic.gate.findings.blocking", len(blocking))
    if type_ == "QualityReview":
        put("telic.acceptance.results", _verdicts(_list(body, "acceptanceResults"), "criterionId"))
        put(
            "telic.verification.results",
            _verdicts(_list(body, "verificationResults"), "requirementId"),
        )
    elif type_ == "ReleaseAudit":
        matrix = _list(body, "claimEvidenceMatrix")
        put("telic.audit.mode_compliance", _enum(body, "modeCompliance"))
        put("telic.claims", _verdicts(matrix, "claimId"))
        put(
            "telic.claim_evidence",
            [
                f"{row.get('claimId')}->{_id_of(ref)}"
                for row in matrix
                for ref in _list(row, "evidenceRefs")
            ][:_MAX_LIST],
        )
    elif type_ == "WorkPlan":
        nodes = _list(body, "nodes")
        put("telic.plan.nodes", len(nodes))
        reserved = sum(int(n.get("budgets", {}).get("maximumToolCalls", 0)) for n in nodes)
        put("telic.budget.tool_calls.reserved", reserved)
    elif type_ == "WorkResult":
        put("telic.work_result.status", _enum(body, "status"))
        put("telic.work_node.id", _enum(body, "nodeId"))
        put("telic.work_result.actions", len(_list(body, "actions")))
        put("telic.work_result.files_changed", len(_list(body, "filesChanged")))
        put("telic.acceptance.results", _verdicts(_list(body, "acceptanceCoverage"), "criterionId"))
    elif type_ == "TaskContract":
        version = body.get("version")
        put("telic.contract.version", version if isinstance(version, int) else None)
        put("telic.contract.criteria", len(_list(body, "acceptanceCriteria")))
        put("telic.contract.verifications", len(_list(body, "verificationRequirements")))
    elif type_ == "UserReport":
        put("telic.report.terminal_status", _enum(body, "terminalStatus"))
        put("telic.report.claims", len(_list(body, "completionClaims")))
        honored = body.get("permissionsHonored")
        put("telic.report.permissions_honored", honored if isinstance(honored, bool) else None)
    elif type_ == "ClarificationRequest":
        put("telic.clarification.reason", _enum(body, "reason"))
        put("telic.clarification.choices", len(_list(body, "responseChoices")))
    elif type_ == "Evidence":
        put("telic.evidence.kind", _enum(body, "kind"))
    return facts


def packet_facts(body: Mapping[str, Any]) -> Attributes:
    """Return the safe attributes of a sealed packet: ids, enums, counters and budget."""
    counters = body.get("counters") or {}
    budget = body.get("budget") or {}
    routing = body.get("routing") or {}
    facts: Attributes = {
        AGENT_NAME: str(body.get("castType", "")),
        AGENT_ID: str(body.get("castId", "")),
        "telic.cast.id": str(body.get("castId", "")),
        "telic.cast.type": str(body.get("castType", "")),
        "telic.cast.need_code": str(routing.get("needCode", "")),
        "telic.work_node.id": str(body.get("workNodeId", "")),
        "telic.packet.id": str(body.get("packetId", "")),
        "telic.packet.outcome": str(body.get("outcome", "")),
        "telic.packet.verdict": str(body.get("verdict", "")),
        "telic.packet.evidence_lines": len(_list(body, "evidence")),
    }
    stop = body.get("stopReason")
    if isinstance(stop, str):
        facts["telic.packet.stop_reason"] = stop
    for source, key, name in (
        (counters, "inputTokens", USAGE_INPUT),
        (counters, "outputTokens", USAGE_OUTPUT),
        (counters, "totalTokens", "telic.packet.total_tokens"),
        (counters, "turns", "telic.packet.turns"),
        (counters, "toolCalls", "telic.packet.tool_calls"),
        (counters, "wallMs", "telic.packet.wall_ms"),
        (counters, "evidenceProposed", "telic.packet.evidence_proposed"),
        (counters, "evidenceVerified", "telic.packet.evidence_verified"),
        (budget, "maxTurns", "telic.budget.cast.max_turns"),
        (budget, "maxTotalTokens", "telic.budget.cast.max_total_tokens"),
        (budget, "maxWallMs", "telic.budget.cast.max_wall_ms"),
    ):
        value = source.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            facts[name] = value
    return facts
