"""A scripted MCP host: drives complete runs through any connected Telic server.

It stands in for the host's model in ``telic demo`` and the examples. It uses only the public
tools over the official MCP client, so everything it does a real host could do, and the server
checks every body it sends exactly as it would check a model's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcp import Client
from mcp.shared.dispatcher import ProgressFnT as Progress

from telic._errors import TelicError
from telic.demo._bodies import Bodies, criterion, permissions, verification
from telic.protocol import sha256_hex_digest

MODES = ("report_only", "plan_only", "analyze_only", "fix_only", "analyze_and_fix")
JSON = dict[str, Any]
_FIX_TOOLS: Final = ["repository.read", "repository.write"]
"""What a fix needs: the host and the fix node read and write the repository."""


class TelicCallError(TelicError):
    """A tool answered with an error envelope; ``code`` is the envelope's own code."""

    code = "tool_error"

    def __init__(self, tool: str, envelope: Mapping[str, Any]) -> None:
        super().__init__(f"{tool}: [{envelope.get('code')}] {envelope.get('error')}")
        self.tool = tool
        self.envelope = dict(envelope)
        received = envelope.get("code")
        if isinstance(received, str) and received:
            self.code = received


class TelicTools:
    """Telic's tools on a connected MCP client, returning envelopes as dicts."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def attempt(self, tool: str, progress: Progress | None = None, **args: Any) -> JSON:
        """Call ``tool`` and return its envelope, ``ok`` true or false."""
        result = await self.client.call_tool(tool, args, progress_callback=progress)
        envelope = result.structured_content
        if not isinstance(envelope, dict) or envelope.get("ok") is result.is_error:
            raise TelicCallError(tool, {"code": "malformed", "error": "no envelope"})
        return envelope

    async def call(self, tool: str, progress: Progress | None = None, **args: Any) -> JSON:
        """Call ``tool``; raise ``TelicCallError`` on an error envelope."""
        envelope = await self.attempt(tool, progress, **args)
        if not envelope["ok"]:
            raise TelicCallError(tool, envelope)
        return envelope


@dataclass
class RunDriver:
    """One run seen from the host: its id, current tokens and a body writer."""

    tools: TelicTools
    run_id: str
    version: int
    action: JSON
    bodies: Bodies
    log: list[str] = field(default_factory=list)
    on_step: Callable[[str], None] | None = None

    def note(self, entry: str) -> None:
        """Record one tool call the host made (and show it, when someone listens)."""
        self.log.append(entry)
        if self.on_step is not None:
            self.on_step(entry)

    @classmethod
    async def start(
        cls, tools: TelicTools, mode: str, request: str, goal: str, **start: Any
    ) -> RunDriver:
        """Start a run and learn its request id."""
        started = await tools.call("telic_start_run", original_request=request, mode=mode, **start)
        run_id = started["run"]["runId"]
        details = await tools.call("telic_get_run", run_id=run_id)
        request_id = next(a["id"] for a in details["artifacts"] if a["type"] == "UserMessage")
        bodies = Bodies(run_id=run_id, mode=mode, request_id=request_id, goal=goal)
        driver = cls(tools, run_id, started["run"]["version"], started["nextAction"], bodies)
        driver.note("telic_start_run")
        return driver

    def token(self) -> JSON:
        """The current action_id and expected_run_version."""
        return {"action_id": self.action["id"], "expected_run_version": self.version}

    def _advance(self, envelope: JSON) -> JSON:
        self.version = envelope["run"]["version"]
        self.action = envelope["nextAction"]
        return envelope

    async def ground(
        self, active_paths: Sequence[str] = (), progress: Progress | None = None
    ) -> JSON:
        """Ground context with the current tokens."""
        envelope = await self.tools.call(
            "telic_ground_context",
            progress,
            run_id=self.run_id,
            active_paths=list(active_paths),
            **self.token(),
        )
        self.note("telic_ground_context")
        return self._advance(envelope)

    async def submit(self, artifact_type: str, body: JSON) -> JSON:
        """Submit ``body`` with the current tokens."""
        envelope = await self.tools.call(
            "telic_submit_artifact",
            run_id=self.run_id,
            artifact_type=artifact_type,
            body=body,
            **self.token(),
        )
        self.note(f"{artifact_type} {body['id']}")
        return self._advance(envelope)

    @property
    def phase(self) -> str:
        """The phase of the next action."""
        return str(self.action["phase"])


@dataclass(frozen=True)
class Change:
    """One file the fix changed, with its hashes and unified diff."""

    path: str
    before: bytes
    after: bytes
    diff: str

    @staticmethod
    def sha(data: bytes) -> str:
        """``sha256:`` of raw bytes."""
        return sha256_hex_digest(data)


class Workspace(Protocol):
    """What the host does natively in the repository (Telic never does it)."""

    def diagnose(self) -> str:
        """Inspect the bug; return what was observed (e.g. failing test output)."""

    def apply_fix(self) -> Change:
        """Change the repository; return the change."""

    def verify(self) -> str:
        """Re-check after the fix; return what was observed (e.g. passing test output)."""


CastHook = Callable[[RunDriver], Awaitable[str | None]]


async def _frame(driver: RunDriver, active_paths: Sequence[str], progress: Progress | None) -> None:
    b = driver.bodies
    await driver.ground(active_paths, progress)
    await driver.submit("ProblemFrame", b.frame())
    await driver.submit("TaskContract", b.contract())
    await driver.submit("PromptReview", b.prompt_review())


async def _fixed(driver: RunDriver, workspace: Workspace, n: str, criteria: Sequence[str]) -> None:
    """Submit the fix node's work: Evidence of the fix's diff and of the tests after it
    (``evidence-diff``, ``evidence-verify``), then the WorkResult ``result-<n>`` of ``plan-<n>``."""
    b = driver.bodies
    change = workspace.apply_fix()
    await driver.submit(
        "Evidence", b.evidence("evidence-diff", "diff", f"Diff of {change.path}", change.diff)
    )
    observed = workspace.verify()
    await driver.submit(
        "Evidence", b.evidence("evidence-verify", "tool_output", "Tests after the fix", observed)
    )
    actions = [
        b.action("A-1", "repository.write", change.path, ["evidence-diff"], "Applied the fix."),
        b.action("A-2", "repository.read", change.path, ["evidence-verify"], "Re-ran the tests."),
    ]
    files = [
        {
            "path": change.path,
            "changeType": "modified",
            "beforeHash": Change.sha(change.before),
            "afterHash": Change.sha(change.after),
            "diffRef": b.uri("evidence-diff"),
        }
    ]
    result = b.result(
        f"result-{n}",
        f"plan-{n}",
        "fix",
        actions=actions,
        evidence=["evidence-diff", "evidence-verify"],
        criteria=criteria,
        files=files,
        note="Fixed, then verified read-only after the write.",
    )
    await driver.submit("WorkResult", result)


async def drive_mode(
    tools: TelicTools,
    mode: str,
    workspace: Workspace,
    *,
    request: str,
    goal: str,
    active_paths: Sequence[str] = (),
    cast: CastHook | None = None,
    progress: Progress | None = None,
    start: Mapping[str, Any] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> RunDriver:
    """Drive one complete run in ``mode`` to a completed report; return its driver.

    ``cast`` (analyze_and_fix only) runs while the diagnosis node executes and returns the
    packet id the diagnosis WorkResult cites.
    """
    extra = dict(start or {})
    if mode in ("fix_only", "analyze_and_fix"):
        extra.setdefault("host_capabilities", _FIX_TOOLS)
    driver = await RunDriver.start(tools, mode, request, goal, **extra)
    driver.on_step = on_step
    b = driver.bodies
    if mode in ("report_only", "plan_only"):
        b.criteria = [criterion("AC-1", "completion", "A plan for the request exists")]
        b.permissions = permissions(read=["**"]) if mode == "plan_only" else permissions()
        await _frame(driver, active_paths, progress)
        await driver.submit(
            "WorkPlan", b.plan("plan-1", [b.node("plan", ["AC-1"], [], b.permissions, calls=0)])
        )
        claim = "A serial plan for the request is recorded"
        met = [("AC-1", ["plan-1"])]
        await _close(driver, "qr-1", ["plan-1"], [], met, [], claim, "Planned the work.")
        return driver
    if mode == "analyze_only":
        b.criteria = [criterion("AC-1", "completion", "The cause of the bug is identified")]
        b.verifications = [verification("VR-1", "completion", "Read the failing code and test")]
        b.permissions = permissions(read=["**"])
        await _frame(driver, active_paths, progress)
        await driver.submit(
            "WorkPlan",
            b.plan("plan-1", [b.node("diagnose", ["AC-1"], ["repository.read"], b.permissions)]),
        )
        note = "Read the code and ran the tests."
        await _diagnosed(driver, workspace, "1", "Test output", note, "Executed as planned.")
        claim = "The cause of the bug is identified"
        met, checked = [("AC-1", ["evidence-1"])], [("VR-1", ["evidence-1"])]
        await _close(
            driver, "qr-1", ["plan-1"], ["result-1"], met, checked, claim, "Diagnosed the bug."
        )
        return driver
    fix_perms = permissions(read=["**"], write=["src/**"])
    if mode == "fix_only":
        b.criteria = [criterion("AC-1", "completion", "The failing tests pass")]
        b.verifications = [verification("VR-1", "completion", "Re-run the tests after the fix")]
        b.permissions = fix_perms
        await _frame(driver, active_paths, progress)
        fix = b.node("fix", ["AC-1"], _FIX_TOOLS, fix_perms, calls=10)
        await driver.submit("WorkPlan", b.plan("plan-1", [fix]))
        await _fixed(driver, workspace, "1", ["AC-1"])
        claim = "The fix is applied and the tests pass"
        met = [("AC-1", ["evidence-diff", "evidence-verify"])]
        checked = [("VR-1", ["evidence-verify"])]
        await _close(
            driver, "qr-1", ["plan-1"], ["result-1"], met, checked, claim, "Fixed the bug."
        )
        return driver
    if mode != "analyze_and_fix":
        raise ValueError(f"unknown mode {mode!r}")
    return await _analyze_and_fix(driver, workspace, fix_perms, active_paths, cast, progress)


async def _diagnosed(
    driver: RunDriver, workspace: Workspace, n: str, shown: str, note: str, result_note: str
) -> None:
    """Submit the diagnosis node's work: Evidence ``evidence-<n>`` of what the workspace observed
    (summed up as ``shown``), and the WorkResult ``result-<n>`` of ``plan-<n>`` (``result_note``)
    with one read citing it (``note``)."""
    b = driver.bodies
    evidence = f"evidence-{n}"
    await driver.submit(
        "Evidence", b.evidence(evidence, "tool_output", shown, workspace.diagnose())
    )
    read = b.action("A-1", "repository.read", "src", [evidence], note)
    result = b.result(
        f"result-{n}",
        f"plan-{n}",
        "diagnose",
        actions=[read],
        evidence=[evidence],
        criteria=["AC-1"],
        note=result_note,
    )
    await driver.submit("WorkResult", result)


async def _analyze_and_fix(
    driver: RunDriver,
    workspace: Workspace,
    fix_perms: JSON,
    active_paths: Sequence[str],
    cast: CastHook | None,
    progress: Progress | None,
) -> RunDriver:
    b = driver.bodies
    children = 1 if cast is not None else 0
    b.criteria = [
        criterion("AC-1", "diagnosis", "The root cause is located with direct evidence"),
        criterion("AC-2", "completion", "The failing tests pass after a fix inside src/"),
    ]
    b.verifications = [
        verification("VR-DIAG", "diagnosis", "Reproduce the failure"),
        verification("VR-COMP", "completion", "Re-run the tests after the fix"),
    ]
    b.permissions = permissions(read=["**"], write=["src/**"], children=children)
    read_perms = permissions(read=["**"], children=children)
    await _frame(driver, active_paths, progress)
    spawn = ["subagent.spawn"] if cast is not None else []
    diag = b.node(
        "diagnose", ["AC-1"], ["repository.read"], read_perms, children=children, extra_tools=spawn
    )
    await driver.submit("WorkPlan", b.plan("plan-01", [diag], depth=children))
    packet_id = await cast(driver) if cast is not None else None
    note = "Reproduced the failure and located the cause."
    if packet_id is not None:
        note += f" The explore child's packet {packet_id} quotes the faulty line."
    await _diagnosed(driver, workspace, "01", "Failing test output", note, note)
    gate = b.diagnosis_gate(
        "evidence-01",
        _FIX_TOOLS,
        fix_perms,
        "The failing test and the code agree on the cause.",
    )
    diag_ok = ("AC-1", ["evidence-01"])
    await driver.submit(
        "QualityReview",
        b.quality_review(
            "QR-01",
            "plan-01",
            ["result-01"],
            "proceed_to_fix",
            [diag_ok],
            [("VR-DIAG", ["evidence-01"])],
            gate=gate,
        ),
    )
    fix = b.node("fix", ["AC-2"], _FIX_TOOLS, fix_perms, calls=10, input_refs=[b.uri("QR-01")])
    await driver.submit("WorkPlan", b.plan("plan-02", [fix]))
    await _fixed(driver, workspace, "02", ["AC-2"])
    await close_fix(
        driver,
        "The root cause is fixed inside src/ and the tests pass",
        "Located the off-by-one in paginate, fixed it in src/, and the tests pass.",
    )
    return driver


async def close_fix(driver: RunDriver, claim: str, summary: str) -> None:
    """The demo bug's last three steps, once the fix plan's WorkResult (``result-02`` of
    ``plan-02``) and its Evidence (``evidence-diff``, ``evidence-verify``) are in: the passing
    QualityReview, the ReleaseAudit of ``claim`` and the UserReport with ``summary``."""
    met = [("AC-1", ["evidence-01"]), ("AC-2", ["evidence-diff", "evidence-verify"])]
    checked = [("VR-DIAG", ["evidence-01"]), ("VR-COMP", ["evidence-verify"])]
    plans, results = ["plan-01", "plan-02"], ["result-01", "result-02"]
    await _close(driver, "QR-02", plans, results, met, checked, claim, summary)


async def _close(
    driver: RunDriver,
    review: str,
    plans: Sequence[str],
    results: Sequence[str],
    met: Sequence[tuple[str, Sequence[str]]],
    checked: Sequence[tuple[str, Sequence[str]]],
    claim: str,
    summary: str,
) -> None:
    """A run's last three steps: the passing QualityReview ``review`` of the last plan and its
    result, with each criterion ``met`` and each verification ``checked`` by their Evidence ids;
    the ReleaseAudit of ``claim`` over that Evidence; the UserReport with ``summary``, which
    names the fix's diff (``evidence-diff``), if any, as its change."""
    b = driver.bodies
    evidence = list(dict.fromkeys(e for _, refs in met for e in refs))
    verified = list(dict.fromkeys(e for _, refs in checked for e in refs))
    changes = [e for e in evidence if e == "evidence-diff"]
    await driver.submit(
        "QualityReview", b.quality_review(review, plans[-1], results[-1:], "pass", met, checked)
    )
    await driver.submit("ReleaseAudit", b.audit(review, plans, results, evidence, claim))
    report = b.report(summary, claim, evidence, changes=changes, verifications=verified)
    await driver.submit("UserReport", report)
