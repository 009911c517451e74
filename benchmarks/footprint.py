"""Context footprint: what the host model reads from Telic, in bytes.

For one complete happy-path run of each mode over stdio (the official client, the test suite's
driver): the bytes of tool-result text — the text content of every result, which is what a host
puts in its model's context — per call and per run, and the bytes of the ``tools/list`` result
(compact JSON, as on the wire). The full result (text, ``structuredContent`` and metadata) is
reported alongside, to show nothing else is duplicated.

    .venv/bin/python benchmarks/footprint.py

Targets (issue 10): ≤ 60 KB of tool-result text for one analyze_only run; ``tools/list`` ≤ 12 KB.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import anyio
from _mcp import FastWorkspace, emit, full_run
from mcp import Client

from telic.cli import MODES, TelicTools, stdio_parameters


def _compact(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


class _Measuring(TelicTools):
    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.calls: list[dict[str, Any]] = []

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args, progress_callback=progress)
        text = sum(len(c.text.encode()) for c in result.content if getattr(c, "type", "") == "text")
        whole = _compact(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        self.calls.append({"tool": tool, "text_bytes": text, "result_bytes": whole})
        envelope = result.structured_content
        if not isinstance(envelope, dict):
            raise RuntimeError(f"{tool}: no envelope")
        return envelope


async def main() -> None:
    """Measure and print the JSON result."""
    with tempfile.TemporaryDirectory(prefix="telic-bench-") as tmp:
        workspace = FastWorkspace(Path(tmp) / "repo")
        async with Client(stdio_parameters(workspace.root, Path(tmp) / "state")) as client:
            listed = await client.list_tools()
            listing = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
            modes: dict[str, Any] = {}
            for mode in MODES:
                tools = _Measuring(client)
                await full_run(tools, mode, workspace)
                modes[mode] = {
                    "calls": len(tools.calls),
                    "text_bytes": sum(c["text_bytes"] for c in tools.calls),
                    "result_bytes": sum(c["result_bytes"] for c in tools.calls),
                    "per_call": tools.calls,
                }
    emit(
        {
            "benchmark": "footprint",
            "tools_list_bytes": _compact(listing),
            "tools": len(listing["tools"]),
            "runs": modes,
            "summary_text_kb": {
                mode: round(m["text_bytes"] / 1000, 1) for mode, m in modes.items()
            },
        }
    )


if __name__ == "__main__":
    anyio.run(main)
