"""Context footprint: what the host model reads from Telic, in bytes.

For one complete happy-path run of each mode over stdio (the official client, driven as a
draft-following host drives it: ``_mcp.draft_run``): the bytes of tool-result text — the text
content of every result, which is what a host puts in its model's context — per call and per
run, and the bytes of the ``tools/list`` result
(compact JSON, as on the wire). The full result (text, ``structuredContent`` and metadata) is
reported alongside, to show nothing else is duplicated. Each call's ``schema_bytes`` are the
part of its text that is artifact schemas (``requiredOutputSchema`` and
``additionalOutputSchemas``); ``parts_bytes`` splits a run's text by top-level key and by the
NextAction's keys, to show where the rest goes.

Each mode runs on a fresh server, so its first run is what a new MCP session costs: in the
default ``once`` schema mode that run receives each artifact schema in full once. A second run
in the same session (``second_run``) shows what a session that already holds the schemas pays.
``--schemas full`` measures the server sending every schema in every result.

    .venv/bin/python benchmarks/footprint.py [--schemas once|full]

Nothing is appended to ``benchmarks/README.md`` (the sizes are deterministic; rows are added by
hand). Target (issues 19 and 25; 44.8 KB on 2026-12-03): ≤ 45 KB of tool-result text for one
analyze_only run on a fresh session, drafts included (a result with a draft sends its types as
a bare ``$ref``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from _mcp import FastWorkspace, draft_run, emit
from mcp import Client

from telic.demo import MODES, TelicTools, stdio_parameters


def _compact(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


_SCHEMA_KEYS = ("requiredOutputSchema", "additionalOutputSchemas")


def _parts(envelope: dict[str, Any]) -> Counter[str]:
    """Compact bytes of each top-level value, and of each NextAction value, of one envelope."""
    parts: Counter[str] = Counter()
    for key, value in envelope.items():
        if key == "nextAction" and isinstance(value, dict):
            for inner, item in value.items():
                parts[f"nextAction.{inner}"] += _compact(item)
        else:
            parts[key] += _compact(value)
    return parts


class _Measuring(TelicTools):
    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.calls: list[dict[str, Any]] = []
        self.parts: Counter[str] = Counter()

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args, progress_callback=progress)
        text = sum(len(c.text.encode()) for c in result.content if getattr(c, "type", "") == "text")
        whole = _compact(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        envelope = result.structured_content
        if not isinstance(envelope, dict):
            raise RuntimeError(f"{tool}: no envelope")
        action = envelope.get("nextAction") or {}
        schemas = sum(_compact(action[key]) for key in _SCHEMA_KEYS if key in action)
        self.parts += _parts(envelope)
        self.calls.append(
            {"tool": tool, "text_bytes": text, "schema_bytes": schemas, "result_bytes": whole}
        )
        return envelope


def _totals(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "calls": len(calls),
        "text_bytes": sum(c["text_bytes"] for c in calls),
        "schema_bytes": sum(c["schema_bytes"] for c in calls),
        "result_bytes": sum(c["result_bytes"] for c in calls),
    }


async def _mode(mode: str, schemas: str, tmp: Path) -> dict[str, Any]:
    """Two runs of ``mode`` in one fresh session: the first in full detail, the second summed."""
    workspace = FastWorkspace(tmp / mode / "repo")
    params = stdio_parameters(workspace.root, tmp / mode / "state", env={"TELIC_SCHEMAS": schemas})
    async with Client(params) as client:
        first, second = _Measuring(client), _Measuring(client)
        await draft_run(first, mode)
        await draft_run(second, mode)
    parts = dict(first.parts.most_common())
    return {
        **_totals(first.calls),
        "per_call": first.calls,
        "parts_bytes": parts,
        "second_run": _totals(second.calls),
    }


async def main(schemas: str) -> None:
    """Measure and print the JSON result."""
    with tempfile.TemporaryDirectory(prefix="telic-bench-") as name:
        tmp = Path(name)
        workspace = FastWorkspace(tmp / "listing" / "repo")
        async with Client(stdio_parameters(workspace.root, tmp / "listing" / "state")) as client:
            listed = await client.list_tools()
            listing = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
        modes = {mode: await _mode(mode, schemas, tmp) for mode in MODES}
    emit(
        {
            "benchmark": "footprint",
            "schemas": schemas,
            "tools_list_bytes": _compact(listing),
            "tools": len(listing["tools"]),
            "runs": modes,
            "summary_text_kb": {
                mode: round(m["text_bytes"] / 1000, 1) for mode, m in modes.items()
            },
            "schema_kb": {mode: round(m["schema_bytes"] / 1000, 1) for mode, m in modes.items()},
            "second_run_text_kb": {
                mode: round(m["second_run"]["text_bytes"] / 1000, 1) for mode, m in modes.items()
            },
        }
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", choices=("once", "full"), default="once")
    anyio.run(main, parser.parse_args().schemas)
