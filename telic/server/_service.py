"""What the MCP adapter needs of the service behind it, as a typing protocol.

``telic.roles.open_service`` provides the real one (the actor system over a ledger); tests may
pass anything with these methods. Results are returned as objects whose records the adapter
turns into wire JSON (``to_wire``), so this seam names methods and arguments, not result classes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["ProgressFn", "Service"]

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
"""An async progress callback: (done, total or None, message or None)."""


class Service(Protocol):
    """The service methods the MCP tools call, one call per tool."""

    async def start_run(
        self,
        original_request: str,
        mode: Any,
        *,
        host_name: str = ...,
        native_subagents: Any = ...,
        host_capabilities: Sequence[str] = ...,
        authorization_granted: Sequence[str] | None = ...,
        authorization_denied: Sequence[str] = ...,
        shell_execute_allowlist: Sequence[str] = ...,
        network_read_domains: Sequence[str] = ...,
        cast_types: Sequence[Mapping[str, object]] | None = ...,
        protected_paths_granted: Sequence[str] = ...,
    ) -> Any:
        """Start a run; returns (run, action)."""

    async def ground(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        *,
        active_paths: Sequence[str] = ...,
        budget: Mapping[str, int] | None = ...,
        progress: Any = ...,
    ) -> Any:
        """Ground the repository context; returns (run, action, manifest_wire)."""

    async def get_next_action(self, run_id: str) -> Any:
        """Return the run's next action."""

    async def submit_artifact(
        self,
        run_id: str,
        action_id: str,
        expected_run_version: int,
        artifact_type: str,
        body: object,
        source_refs: Sequence[str] = ...,
    ) -> Any:
        """Submit one artifact; returns (run, action[, artifact])."""

    async def answer_clarification(
        self, run_id: str, action_id: str, expected_run_version: int, response: str
    ) -> Any:
        """Answer the pending clarification."""

    async def cancel_run(self, run_id: str, action_id: str, expected_run_version: int) -> Any:
        """Cancel the run."""

    async def list_runs(self, limit: int = ...) -> Any:
        """Return run summaries, newest first."""

    async def get_run(self, run_id: str) -> Any:
        """Return the run record, artifact metadata and the next action."""

    async def get_artifact(self, run_id: str, artifact_id: str) -> Any:
        """Return one verified artifact of the run."""

    async def get_trace(self, run_id: str, after_sequence: int = ..., limit: int = ...) -> Any:
        """Return a page of the canonical trace."""

    async def verify_run(self, run_id: str) -> Any:
        """Walk the run's hash chain."""

    async def check_tool_action(self, run_id: str, capability: str, target: str) -> Any:
        """Decide whether a native tool action is allowed, and record the decision."""

    async def cast(
        self,
        run_id: str,
        *,
        cast_type: str,
        routing: Any,
        budget: Any,
        brief: str,
        pointers: Sequence[str] = ...,
        packet_refs: Sequence[str] = ...,
    ) -> Any:
        """Open a cast for the executing work node."""

    async def cast_progress(
        self,
        run_id: str,
        cast_id: str,
        *,
        turns: int,
        tool_calls: int,
        input_tokens: int,
        output_tokens: int,
    ) -> Any:
        """Record a child's spend so far."""

    async def return_packet(self, run_id: str, cast_id: str, raw: object) -> Any:
        """Verify and seal a child's return."""

    async def get_digest(self, run_id: str) -> str:
        """Render the run's packet digest."""
