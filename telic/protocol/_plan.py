"""The WorkPlan: Agent 3's bounded, serial graph of work nodes (docs/protocol.md §3.1 "WorkPlan").

Protocol 1.0 accepts serial plans only. The schema proves the graph is well formed (unique ids,
known dependencies, no self edge, no cycle); whether its permissions, budgets and criteria fit
the contract and the run is the controller's business (§3.4).
"""

from __future__ import annotations

import graphlib
from typing import Annotated, Final, Literal, Self

from pydantic import BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from telic.protocol._base import UNDESCRIBED, ArtifactBody, WireModel
from telic.protocol._types import (
    MAX_NODE_TOOL_CALLS,
    MAX_PLAN_TOOL_CALLS,
    ArtifactUri,
    BoundedText,
    Capability,
    ChildCount,
    FewItems,
    Identifier,
    Items,
    Label,
    PermissionSet,
    ReferenceUri,
    SubagentDepth,
    Summary,
    unique,
)

MAX_PLAN_NODES: Final = 64
"""Most nodes in one plan."""

PlanValidation = Literal["pending", "valid", "invalid"]
"""The planner's own verdict on the plan; the controller accepts only ``valid``."""


def _exact_int(value: object) -> object:
    # A strict Literal[1] still accepts True and 1.0; JSON's true is not the number 1.
    if type(value) is not int:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


_One = Annotated[Literal[1], BeforeValidator(_exact_int)]


class NodeBudgets(WireModel):
    """What one node may consume."""

    model_config = UNDESCRIBED

    maximum_tool_calls: Annotated[int, Field(ge=0, le=MAX_NODE_TOOL_CALLS)]
    maximum_children: ChildCount


class WorkNode(WireModel):
    """One scoped work order for the executor."""

    id: Identifier
    logical_role: Label
    """Who performs it, e.g. ``executor.browser-investigator``."""
    objective: BoundedText
    depends_on: FewItems[Identifier]
    input_refs: Items[ReferenceUri]
    context_refs: Items[ReferenceUri]
    allowed_tools: Items[Capability]
    required_capabilities: Items[Capability]
    permissions: PermissionSet
    output_type: Literal["WorkResult"]
    acceptance_criteria: Items[Identifier]
    stop_conditions: FewItems[BoundedText]
    budgets: NodeBudgets


class GlobalBudgets(WireModel):
    """What the whole plan may consume."""

    model_config = UNDESCRIBED

    maximum_tool_calls: Annotated[int, Field(ge=0, le=MAX_PLAN_TOOL_CALLS)]
    maximum_parallel_workers: _One
    maximum_subagent_depth: SubagentDepth


class WorkPlan(ArtifactBody):
    """Agent 3's plan: a serial DAG of scoped work nodes."""

    id: Identifier
    run_id: Identifier
    task_contract_ref: ArtifactUri
    execution_mode: Literal["serial"]
    nodes: Annotated[list[WorkNode], Field(min_length=1, max_length=MAX_PLAN_NODES)]
    join_rules: FewItems[BoundedText]
    global_budgets: GlobalBudgets
    plan_validation: PlanValidation
    rationale_summary: Summary

    @model_validator(mode="after")
    def _check_graph(self) -> Self:
        ids = [node.id for node in self.nodes]
        if not unique(ids):
            raise PydanticCustomError("duplicate_node_id", "Work node ids must be unique")
        known = set(ids)
        for node in self.nodes:
            if node.id in node.depends_on:
                raise PydanticCustomError("self_dependency", "A work node may not depend on itself")
            if not known.issuperset(node.depends_on):
                raise PydanticCustomError(
                    "unknown_dependency", "dependsOn names a node that is not in the plan"
                )
        try:
            graphlib.TopologicalSorter({node.id: node.depends_on for node in self.nodes}).prepare()
        except graphlib.CycleError:
            raise PydanticCustomError(
                "dependency_cycle", "Work nodes must form a directed acyclic graph"
            ) from None
        return self
