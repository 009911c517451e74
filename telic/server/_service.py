"""What the MCP adapter needs of the service behind it, as a typing protocol.

``telic.roles.open_service`` provides the real one (the actor system over a ledger). Every
method names its real result type (imported for the type checker only: the adapter starts
without the protocol), so ``mypy --strict`` sees every hop from a tool to the ledger; the
adapter turns results into wire JSON with ``to_wire``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from telic.casting import Admission, PacketStats, ProgressStatus
    from telic.controller import Action, Draft, ReplayReport, RunDetails, StepResult, TraceView
    from telic.grounding import GroundingProgress
    from telic.ledger import ArtifactBody, RunSummary, VerifyReport
    from telic.permissions import BrokerDecision, Decision
    from telic.protocol import Mode, NativeSubagents, Topology
    from telic.roles import GroundResult
    from telic_packets import DigestView, Packet

__all__ = ["ProgressFn", "Service"]

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
"""An async progress callback: (done, total or None, message or None)."""


class Service(Protocol):
    """The service methods the MCP tools call, one call per tool."""

    async def start_run(
        self,
        original_request: str,
        mode: Mode,
        *,
        host_name: str = ...,
        native_subagents: NativeSubagents = ...,
        host_capabilities: Sequence[str] = ...,
        authorization_granted: Sequence[str] | None = ...,
        authorization_denied: Sequence[str] = ...,
        shell_execute_allowlist: Sequence[str] = ...,
        network_read_domains: Sequence[str] = ...,
        cast_types: Sequence[Mapping[str, object]] | None = ...,
        protected_paths_granted: Sequence[str] = ...,
        prior_run_id: str | None = ...,
        topology_override: Topology | None = ...,
    ) -> StepResult:
        """Start a run; returns (run, action)."""

    async def ground(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        *,
        active_paths: Sequence[str] = ...,
        budget: Mapping[str, int] | None = ...,
        progress: Callable[[GroundingProgress], None] | None = ...,
    ) -> GroundResult:
        """Ground the repository context; returns (run, action, manifest_wire)."""

    async def get_next_action(self, run_id: str) -> Action:
        """Return the run's next action."""

    async def get_next(self, run_id: str) -> tuple[Action, Draft | None]:
        """Return the run's next action and the draft of the artifact it requires."""

    async def submit_artifact(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        artifact_type: str,
        body: object,
        source_refs: Sequence[str] = ...,
    ) -> StepResult:
        """Submit one artifact; returns (run, action[, artifact])."""

    async def answer_clarification(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        response: str,
        *,
        elicited: bool = ...,
    ) -> StepResult:
        """Answer the pending clarification (``elicited``: chosen in the client's form)."""

    async def cancel_run(
        self, run_id: str, action_id: str, expected_run_version: int
    ) -> StepResult:
        """Cancel the run."""

    async def list_runs(self, limit: int = ...) -> tuple[RunSummary, ...]:
        """Return run summaries, newest first."""

    async def get_run(self, run_id: str) -> RunDetails:
        """Return the run record, artifact metadata and the next action."""

    async def get_artifact(self, run_id: str, artifact_id: str) -> ArtifactBody:
        """Return one verified artifact of the run."""

    async def get_trace(
        self, run_id: str, after_sequence: int = ..., limit: int = ...
    ) -> TraceView:
        """Return a page of the canonical trace."""

    async def verify_run(self, run_id: str) -> VerifyReport:
        """Walk the run's hash chain."""

    async def replay_run(self, run_id: str) -> ReplayReport:
        """Replay the run step by step from its records (reads only)."""

    async def check_tool_action(self, run_id: str, capability: str, target: str | None) -> Decision:
        """Decide whether a native tool action is allowed, and record the decision."""

    async def broker_check(
        self,
        run_id: str,
        capability: str,
        target: str | None,
        *,
        action_id: str | None = ...,
        expected_run_version: int | None = ...,
    ) -> BrokerDecision:
        """Decide a native tool action in both answer shapes (the token: the original's
        dialect, traced as broker_decision), and record the decision."""

    async def cast(
        self,
        run_id: str,
        *,
        cast_type: str,
        routing: object,
        budget: object,
        brief: str,
        pointers: Sequence[str] = ...,
        packet_refs: Sequence[str] = ...,
        parent_cast_id: str | None = ...,
    ) -> Admission:
        """Open a cast for the executing work node (a nested one names its parent cast)."""

    async def cast_progress(
        self,
        run_id: str,
        cast_id: str,
        *,
        turns: int,
        tool_calls: int,
        input_tokens: int,
        output_tokens: int,
    ) -> ProgressStatus | None:
        """Record a child's spend so far."""

    async def return_packet(self, run_id: str, cast_id: str, raw: object) -> Packet:
        """Verify and seal a child's return."""

    async def get_digest(self, run_id: str) -> str:
        """Render the run's packet digest."""

    async def get_digest_view(self, run_id: str) -> DigestView:
        """The run's digest in the contract's line format, each line's marks beside it."""

    async def get_packet_stats(self, limit: int = ...) -> PacketStats:
        """Aggregate the packets of the repository's runs (``render_stats``, ``to_wire``)."""
