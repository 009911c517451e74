"""The invariant registry: every controller rule, its stable id and the types it judges.

Adding a rule is one small pure function in the module of its artifact family and one line
here. Rules run in this order, and a rejection reports every rule that failed.
"""

from __future__ import annotations

from typing import Final

from telic.controller import _refs as refs
from telic.controller import _rules_contract as contract
from telic.controller import _rules_plan as plan
from telic.controller import _rules_result as result
from telic.controller import _rules_review as review
from telic.controller._check import ANY, Rule

__all__ = ["RULES", "rule_ids"]

_QR, _RA = "QualityReview", "ReleaseAudit"

RULES: Final[tuple[Rule, ...]] = (
    # every submission (§3.4 "Applies to every submission")
    Rule("REF-SAME-RUN", (ANY,), refs.ref_same_run),
    Rule("REF-EXISTS", (ANY,), refs.ref_exists),
    Rule("REF-TYPED-TARGET", (ANY,), refs.ref_typed_target),
    Rule("REF-SYSTEM", (ANY,), refs.ref_system),
    Rule("REF-REPO-SELECTED", (ANY,), refs.ref_repo_selected),
    Rule("RUN-RESUME-LINEAGE", (ANY,), refs.resume_lineage, "§3.2"),
    # ProblemFrame and ScenarioSpec
    Rule("PF-INTENT-MODE", ("ProblemFrame",), contract.intent_mode),
    Rule("PF-ORIGINAL-REQUEST", ("ProblemFrame",), contract.original_request),
    Rule("PF-CLARIFICATION-NOT-REQUIRED", ("ProblemFrame",), contract.pf_clarification),
    Rule("PF-FACT-PROVENANCE", ("ProblemFrame",), contract.pf_fact_provenance),
    Rule("SS-PROBLEM-FRAME-LATEST", ("ScenarioSpec",), contract.ss_frame_latest),
    Rule("SS-ONE-PER-FRAME", ("ScenarioSpec",), contract.ss_one_per_frame, "§3.3"),
    # TaskContract
    Rule("TC-INTENT-MODE", ("TaskContract",), contract.intent_mode),
    Rule("TC-ORIGINAL-REQUEST", ("TaskContract",), contract.original_request),
    Rule("TC-PROBLEM-FRAME-LATEST", ("TaskContract",), contract.tc_frame_latest),
    Rule("TC-CONTEXT-REFS", ("TaskContract",), contract.tc_context_refs),
    Rule("TC-RULE-REFS", ("TaskContract",), contract.tc_rule_refs),
    Rule("TC-COMPILE-V1", ("TaskContract",), contract.tc_compile_v1),
    Rule("TC-REVISE-V2", ("TaskContract",), contract.tc_revise),
    Rule("TC-REVISE-FIELDS", ("TaskContract",), contract.tc_revise_fields),
    Rule("TC-VERIFICATION-BACKED", ("TaskContract",), contract.tc_verification_backed),
    Rule("TC-SHELL-ALLOWLIST", ("TaskContract",), contract.tc_shell_allowlist),
    Rule("TC-PERMISSIONS-AUTHORIZED", ("TaskContract",), contract.tc_permissions_authorized),
    # PromptReview
    Rule("PR-TARGET-LATEST", ("PromptReview",), contract.pr_target_latest),
    Rule("PR-COVERAGE", ("PromptReview",), contract.pr_coverage),
    # WorkPlan
    Rule("WP-CONTRACT-LATEST", ("WorkPlan",), plan.wp_contract_latest),
    Rule("WP-PLAN-VALID", ("WorkPlan",), plan.wp_valid),
    Rule("WP-PLAN-TOOL-CALLS", ("WorkPlan",), plan.wp_plan_tool_calls, "§3.3"),
    Rule("WP-CUMULATIVE-TOOL-CALLS", ("WorkPlan",), plan.wp_cumulative_tool_calls, "§3.3"),
    Rule("WP-ENVELOPE-BUDGETS", ("WorkPlan",), plan.wp_envelope_budgets),
    Rule("WP-NODE-PERMISSIONS-CONTRACT", ("WorkPlan",), plan.wp_node_permissions_contract),
    Rule("WP-NODE-PERMISSIONS-CEILING", ("WorkPlan",), plan.wp_node_permissions_ceiling),
    Rule("WP-NODE-CHILDREN", ("WorkPlan",), plan.wp_node_children),
    Rule("WP-NODE-CAPABILITIES", ("WorkPlan",), plan.wp_node_capabilities),
    Rule("WP-NODE-CRITERIA", ("WorkPlan",), plan.wp_node_criteria),
    Rule("WP-COVERAGE", ("WorkPlan",), plan.wp_coverage),
    Rule("WP-SCOPED-ORDER", ("WorkPlan",), plan.wp_scoped),
    # WorkResult and Evidence
    Rule("WR-PLAN-LATEST", ("WorkResult",), result.wr_plan_latest),
    Rule("WR-NODE-FIRST-READY", ("WorkResult",), result.wr_node_first_ready),
    Rule("WR-ACTION-BUDGET", ("WorkResult",), result.wr_action_budget),
    Rule("WR-NO-MUTATION", ("WorkResult",), result.wr_no_mutation),
    Rule("WR-ACTION-AUTHORIZED", ("WorkResult",), result.wr_action_authorized, "§3.5"),
    Rule("WR-MUTATING-FLAG", ("WorkResult",), result.wr_mutating_flag),
    Rule("WR-FILE-CHANGES", ("WorkResult",), result.wr_file_changes),
    Rule("WR-COVERAGE", ("WorkResult",), result.wr_coverage),
    Rule("WR-COMPLETED-CAPABILITIES", ("WorkResult",), result.wr_completed_capabilities),
    Rule("EV-QUOTA", ("Evidence",), result.ev_quota, "§3.3"),
    # QualityReview
    Rule("QR-REMAINING-REMEDIATIONS", (_QR,), review.remaining_remediations, "§3.3"),
    Rule("QR-CONTRACT-LATEST", (_QR,), review.contract_latest),
    Rule("QR-CURRENT-WORK", (_QR,), review.qr_current_work),
    Rule("QR-PROGRESSION", (_QR,), review.qr_progression),
    Rule("QR-STAGE-COVERAGE", (_QR,), review.qr_stage_coverage),
    Rule("QR-CORRECTION-ORDER", (_QR,), review.qr_correction_order),
    Rule("QR-REMEDIATION-ORDER", (_QR,), review.qr_remediation_order),
    # ReleaseAudit
    Rule("RA-REMAINING-REMEDIATIONS", (_RA,), review.remaining_remediations, "§3.3"),
    Rule("RA-ORIGINAL-REQUEST", (_RA,), contract.original_request),
    Rule("RA-CONTRACT-LATEST", (_RA,), review.contract_latest),
    Rule("RA-LINEAGE", (_RA,), review.ra_lineage),
    Rule("RA-DECISION", (_RA,), review.ra_decision),
    Rule("RA-CRITERIA", (_RA,), review.ra_criteria),
    # UserReport
    Rule("UR-TRACE-REF", ("UserReport",), review.ur_trace_ref),
    Rule("UR-STATUS", ("UserReport",), review.ur_status, "§3.2"),
    Rule("UR-FINDINGS", ("UserReport",), review.ur_findings),
    Rule("UR-CHANGE-REFS", ("UserReport",), review.ur_change_refs),
)
"""Every controller invariant, in evaluation order."""

assert len({rule.id for rule in RULES}) == len(RULES), "rule ids must be unique"


def rule_ids() -> tuple[str, ...]:
    """Return the id of every registered rule, in evaluation order."""
    return tuple(rule.id for rule in RULES)
