"""The Telic 1.0 result shapes: key paths and JSON types, and a host that checks every result.

``wire_shapes.json`` holds, for each result of the original Telic 1.0 server (one call of every
tool, and of ``telic_submit_artifact`` per artifact type), every key path of its structured
content with its JSON type; NextActions are kept apart, per ``kind``. It was derived once from
the original's recorded results with ``python -m tests.telic.server.wire RESULTS.json`` and is
committed: the tests never need the recording itself.

A path is dot-joined; ``[]`` stands for every element of an array. A compatible result has every
path of the original's, with the same JSON type; where the original's value was ``null`` the key
must be present and may hold a value. Extra keys are ours to add. An empty array of ours has no
elements to compare, so only its own path is checked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp import Client

from telic.demo import TelicTools

__all__ = ["FIXTURE", "WireHost", "mismatches", "shape"]

FIXTURE = Path(__file__).with_name("wire_shapes.json")
# Values the original's recording elides (full JSON Schemas), compared as objects only.
OPAQUE = frozenset({"requiredOutputSchema", "additionalOutputSchemas"})
SUPPORTING = frozenset({"Evidence", "ScenarioSpec"})
# Fields the protocol types ``T | null`` whose recorded value happened to be a T: our null is
# as valid there as the original's (a report_only manifest has no HEAD to name, say).
NULLABLE = frozenset(
    {
        "manifest.repositoryFingerprint.headCommit",
        "run.outcomeHint",
        "run.resumePhase",
        "runs[].outcomeHint",
        "runs[].resumePhase",
        "contextManifestRef",
        "workNodeId",
        "reportRef",
    }
)


def _type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def shape(value: object, path: str = "") -> dict[str, str]:
    """Every key path of ``value`` with its JSON type (``mixed`` where elements disagree).

    A NextAction's own keys are left out (``nextAction`` is compared per kind, apart).
    """
    found: dict[str, str] = {}

    def walk(item: object, at: str) -> None:
        kind = _type(item)
        seen = found.setdefault(at, kind)
        if seen != kind:
            found[at] = "null" if "null" in (seen, kind) else "mixed"
        if isinstance(item, dict):
            for key, child in item.items():
                where = f"{at}.{key}" if at else key
                if key in OPAQUE or (where == "nextAction" and path == ""):
                    found.setdefault(where, _type(child))
                else:
                    walk(child, where)
        elif isinstance(item, list):
            for child in item:
                walk(child, f"{at}[]")

    walk(value, path)
    found.pop("", None)
    return found


def mismatches(expected: Mapping[str, str], actual: Mapping[str, str]) -> list[str]:
    """What ``actual`` lacks or types differently from ``expected``, one line each."""
    problems: list[str] = []
    for path, kind in expected.items():
        if path not in actual:
            if not _inside_an_empty_array(actual, path):
                problems.append(f"missing {path} ({kind})")
        elif kind != "null" and actual[path] != kind:
            if actual[path] == "null" and path in NULLABLE:
                continue
            problems.append(f"{path}: {actual[path]} where Telic 1.0 has {kind}")
    return problems


def _inside_an_empty_array(actual: Mapping[str, str], path: str) -> bool:
    """Whether an array on the way to ``path`` is present in ``actual`` and empty."""
    at = path.find("[]")
    while at != -1:
        array = path[:at]
        if array in actual and f"{array}[]" not in actual:
            return True
        at = path.find("[]", at + 2)
    return False


def fixture() -> dict[str, Any]:
    """The committed shapes: ``results`` by call and ``nextAction`` by kind."""
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return loaded


class WireHost(TelicTools):
    """A host that checks every result of the nine Telic 1.0 tools against the fixture.

    It also replays every supporting artifact once, identically, right after it is stored,
    as a host that lost the answer would, and checks that result as a replay.
    """

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        loaded = fixture()
        self._results: dict[str, dict[str, str]] = loaded["results"]
        self._actions: dict[str, dict[str, str]] = loaded["nextAction"]
        self.problems: list[str] = []
        self.checked: dict[str, int] = {}

    async def attempt(self, tool: str, progress: Any = None, **args: Any) -> dict[str, Any]:
        """Call ``tool`` and check its envelope; replay a stored supporting artifact once."""
        envelope = await super().attempt(tool, progress, **args)
        self._check(self._key(tool, args, envelope), envelope)
        kind = args.get("artifact_type")
        if tool == "telic_submit_artifact" and kind in SUPPORTING and envelope["ok"]:
            replay = await super().attempt(tool, progress, **args)
            self._check("telic_submit_artifact:Evidence (identical replay)", replay)
            if replay.get("artifact") != envelope.get("artifact"):
                self.problems.append(f"{kind} replay: artifact differs from the stored one")
        return envelope

    async def read_path(self, run_id: str, request: str, mode: str) -> None:
        """What a Telic 1.0 host reads after a run, then a cancelled second run and the prompt.

        The run, its request artifact (whose metadata in get_run equals get_artifact's, less the
        body), a page of the trace, the run list, the next action, an unknown run's error.
        """
        details = await self.call("telic_get_run", run_id=run_id)
        asked = next(a for a in details["artifacts"] if a["type"] == "UserMessage")
        got = await self.call("telic_get_artifact", run_id=run_id, artifact_id=asked["id"])
        if got["artifact"]["body"]["content"] != request:
            self.problems.append("get_artifact: the request's body is not the request")
        if {k: v for k, v in got["artifact"].items() if k != "body"} != asked:
            self.problems.append("get_artifact: its metadata differs from get_run's")
        await self.call("telic_get_trace", run_id=run_id, limit=3)
        await self.call("telic_list_runs", limit=2)
        await self.call("telic_get_next_action", run_id=run_id)
        await self.attempt("telic_get_run", run_id="no-such-run")
        started = await self.call("telic_start_run", original_request=request, mode=mode)
        cancelled = await self.call(
            "telic_cancel_run",
            run_id=started["run"]["runId"],
            action_id=started["nextAction"]["id"],
            expected_run_version=1,
        )
        if cancelled["nextAction"]["reportRef"] is not None:
            self.problems.append("cancel_run: a cancelled run has no report")
        prompt = await self.client.get_prompt(
            "telic_workflow", {"original_request": request, "mode": mode}
        )
        text = getattr(prompt.messages[0].content, "text", "")
        if json.dumps(request, ensure_ascii=False) not in text:
            self.problems.append("telic_workflow: the request is not a JSON string literal")

    def _key(self, tool: str, args: Mapping[str, Any], envelope: Mapping[str, Any]) -> str:
        if not envelope["ok"]:
            return "telic_get_run (unknown run: a tool error)"
        if tool != "telic_submit_artifact":
            return tool
        kind = args.get("artifact_type")
        if kind in SUPPORTING:
            return "telic_submit_artifact:Evidence"
        if kind is None or f"{tool}:{kind}" not in self._results:
            return "telic_submit_artifact:ProblemFrame"  # any phase artifact's result
        return f"{tool}:{kind}"

    def _check(self, key: str, envelope: Mapping[str, Any]) -> None:
        if key not in self._results:
            return  # not one of the nine Telic 1.0 tools
        self.checked[key] = self.checked.get(key, 0) + 1
        expected = self._results[key]
        artifact = envelope.get("artifact")
        if key == "telic_get_artifact" and artifact.get("type") != "UserMessage":
            # The recorded body is a UserMessage's; other bodies have their own keys.
            expected = {p: k for p, k in expected.items() if not p.startswith("artifact.body.")}
        for problem in mismatches(expected, shape(envelope)):
            self.problems.append(f"{key}: {problem}")
        action = envelope.get("nextAction")
        if isinstance(action, dict) and action.get("kind") in self._actions:
            expected = self._actions[action["kind"]]
            for problem in mismatches(expected, shape(action)):
                self.problems.append(f"{key} nextAction[{action['kind']}]: {problem}")


def derive(recording: Path) -> dict[str, Any]:
    """The fixture from a recording of the original's results (the reference's format)."""
    results: dict[str, Any] = json.loads(recording.read_text(encoding="utf-8"))["results"]
    shapes: dict[str, dict[str, str]] = {}
    actions: dict[str, dict[str, str]] = {}
    for key, recorded in results.items():
        content = recorded["structuredContent"]
        shapes[key] = dict(sorted(shape(content).items()))
        action = content.get("nextAction")
        if isinstance(action, dict):
            merged = actions.setdefault(action["kind"], {})
            for path, kind in shape(action).items():
                merged[path] = kind if merged.get(path, kind) == kind else "null"
    return {
        "about": (
            "Key paths and JSON types of the original Telic 1.0 server's results (one analyze_only "
            "run over MCP stdio), derived by tests/telic/server/wire.py; see its docstring."
        ),
        "results": shapes,
        "nextAction": {kind: dict(sorted(paths.items())) for kind, paths in actions.items()},
    }


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(derive(Path(sys.argv[1])), indent=1) + "\n", encoding="utf-8")
