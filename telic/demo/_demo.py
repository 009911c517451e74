"""``telic demo``: a complete analyze_and_fix run on the bundled repository, over real MCP.

The demo copies ``examples/demo-repo`` into a temporary git repository, starts ``telic serve``
as a subprocess over stdio with a fresh state directory, connects with the official MCP client
and plays the host: it grounds, frames, contracts, reviews, diagnoses (casting one native
subagent whose packet the diagnosis cites), fixes the real bug, verifies, audits and reports.

No model is called: the scripted host (``_host``, ``_bodies``) writes what the host's model
would write, and the output says so first. Telic checks every one of its artifacts as it would
check a model's.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO

from mcp import Client

from telic.demo._connect import stdio_parameters
from telic.demo._host import Change, RunDriver, TelicTools, drive_mode

REQUEST: Final = (
    "paginate in src/pagination.py returns the wrong items: page 1 starts at the second page "
    "and the tests fail. Find the cause and fix it."
)
GOAL: Final = "Make paginate return the items of the requested 1-based page"
TARGET: Final = "src/pagination.py"
BUGGY: Final = "    start = page * per_page\n"
FIXED: Final = "    start = (page - 1) * per_page\n"
CAPABILITIES: Final = ["repository.read", "repository.write", "subagent.spawn"]
"""What the demo's host can do, and what its user grants the run: the same three."""
STEPS: Final = 20
"""Progress steps of a demo run: the connection, the run's 15 tool calls, the cast and three
closing reads (a test holds the count, so the progress line reaches its end)."""


class Progress:
    """A single self-overwriting status line on stderr, shown only when stderr is a terminal."""

    def __init__(self, total: int | None = None, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._total = total
        self.done = 0
        """How many steps were counted."""
        self._enabled = self._stream.isatty()
        self._width = 0

    def step(self, message: str) -> None:
        """Count one step and show ``message``."""
        self.done += 1
        if not self._enabled:
            return
        count = f"{self.done}/{self._total}" if self._total else str(self.done)
        line = f"[{count}] {message}"[:100]
        self._stream.write("\r" + line.ljust(self._width))
        self._stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """Erase the status line."""
        if self._enabled and self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()
        self._width = 0


def find_demo_repo() -> Path:
    """Return the bundled ``examples/demo-repo`` of this checkout."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "examples" / "demo-repo"
        if (candidate / "AGENTS.md").is_file():
            return candidate
    raise FileNotFoundError("examples/demo-repo not found; run the demo from a Telic checkout")


_GIT_CONFIG: Final = (
    "user.name=Telic demo",
    "user.email=demo@telic.invalid",
    "init.defaultBranch=main",
    "commit.gpgsign=false",
)


def _git(repo: Path, *args: str) -> None:
    config = [word for setting in _GIT_CONFIG for word in ("-c", setting)]
    subprocess.run(["git", *config, *args], cwd=repo, check=True, capture_output=True)


class DemoRepository:
    """The host's native work in the temporary copy: run tests, edit one file."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def create(cls, source: Path, destination: Path) -> DemoRepository:
        """Copy ``source`` to ``destination`` and commit it as a fresh git repository."""
        shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__"))
        _git(destination, "init", "-q")
        _git(destination, "add", "-A")
        _git(destination, "commit", "-q", "-m", "The pagination helper, with its bug")
        return cls(destination)

    def run_tests(self) -> tuple[int, str]:
        """Run the repository's unittest suite; return (exit code, output)."""
        done = subprocess.run(
            [sys.executable, "-B", "-m", "unittest", "discover", "-s", "tests"],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return done.returncode, (done.stdout + done.stderr).strip()

    def diagnose(self) -> str:
        """Run the failing tests; return their transcript."""
        return _transcript(*self.run_tests())

    def apply_fix(self) -> Change:
        """Replace the 0-based start index with the 1-based one."""
        path = self.root / TARGET
        before = path.read_bytes()
        text = before.decode()
        if BUGGY not in text:
            raise RuntimeError(f"{TARGET} does not hold the expected bug")
        after_text = text.replace(BUGGY, FIXED)
        path.write_text(after_text, encoding="utf-8")
        diff = "".join(
            difflib.unified_diff(
                text.splitlines(keepends=True),
                after_text.splitlines(keepends=True),
                f"a/{TARGET}",
                f"b/{TARGET}",
            )
        )
        return Change(TARGET, before, after_text.encode(), diff)

    def verify(self) -> str:
        """Re-run the tests; they must pass now."""
        code, output = self.run_tests()
        if code != 0:
            raise RuntimeError(f"the tests still fail after the fix:\n{output}")
        return _transcript(code, output)


def _transcript(code: int, output: str) -> str:
    return f"$ python -m unittest discover -s tests  (exit {code})\n{output}\n"


@dataclass(frozen=True)
class DemoOutcome:
    """What the demo proved, for printing."""

    run_id: str
    status: str
    summary: str
    version: int
    packet_id: str | None
    digest: str
    intact: bool
    records_checked: int
    state_dir: Path
    repository: Path
    seconds: float
    diff: str
    steps: int
    """How many progress steps the run took (``STEPS`` when all went to plan)."""

    @property
    def workdir(self) -> Path:
        """The folder holding the demo's repository copy and its state."""
        return self.state_dir.parent

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON."""
        return {
            "runId": self.run_id,
            "status": self.status,
            "summary": self.summary,
            "version": self.version,
            "packetId": self.packet_id,
            "digest": self.digest,
            "ledgerIntact": self.intact,
            "recordsChecked": self.records_checked,
            "stateDir": str(self.state_dir),
            "ledger": str(self.state_dir / "ledger.sqlite3"),
            "repository": str(self.repository),
            "seconds": round(self.seconds, 2),
            "progressSteps": self.steps,
            "workdir": str(self.workdir),
        }


async def _cast_explore(tools: TelicTools, driver: RunDriver, repo: DemoRepository) -> str:
    """Cast one read-only child that locates the faulty line and returns a packet."""
    handoff = await tools.call(
        "telic_cast",
        run_id=driver.run_id,
        cast_type="explore",
        routing={
            "needCode": "locate",
            "text": "Locate the line of paginate that computes the first index of a page",
            "expectedEvidence": ["file_state"],
            "acceptance": ["quotes the start-index line verbatim"],
        },
        budget={"maxTurns": 4, "maxTotalTokens": 20_000},
        brief="Read src/pagination.py and quote the line that computes where a page starts.",
        pointers=[f"repo://{TARGET}"],
    )
    cast_id = handoff["cast"]["castId"]
    # The child's own work, done natively by the host: read the file, find the line.
    lines = (repo.root / TARGET).read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, 1) if "start = " in line)
    await tools.call(
        "telic_cast_progress",
        run_id=driver.run_id,
        cast_id=cast_id,
        turns=2,
        tool_calls=1,
        input_tokens=1_800,
        output_tokens=240,
    )
    returned = await tools.call(
        "telic_return_packet",
        run_id=driver.run_id,
        cast_id=cast_id,
        packet={
            "claim": "paginate computes the start index as page * per_page, treating pages as "
            "0-based although they are 1-based",
            "evidence": [
                {
                    "kind": "file_state",
                    "source": f"repo://{TARGET}",
                    "locator": f"line {number}",
                    "quote": lines[number - 1].strip(),
                }
            ],
            "completed": [0],
        },
    )
    return str(returned["packet"]["packetId"])


async def run_demo(source: Path | None = None, workdir: Path | None = None) -> DemoOutcome:
    """Run the whole demo and return what it proved."""
    started = time.monotonic()
    base = workdir or Path(tempfile.mkdtemp(prefix="telic-demo-"))
    repo = DemoRepository.create(source or find_demo_repo(), base / "repo")
    state = base / "state"
    progress = Progress(STEPS)
    try:
        async with Client(stdio_parameters(repo.root, state)) as client:
            tools = TelicTools(client)
            progress.step("connected to telic serve over stdio")

            packet: list[str] = []

            async def cast(driver: RunDriver) -> str:
                progress.step("casting an explore subagent")
                packet.append(await _cast_explore(tools, driver, repo))
                return packet[-1]

            driver = await drive_mode(
                tools,
                "analyze_and_fix",
                repo,
                request=REQUEST,
                goal=GOAL,
                active_paths=[TARGET],
                cast=cast,
                start={
                    "host_name": "telic-demo",
                    "native_subagents": "available",
                    "host_capabilities": CAPABILITIES,
                    "authorization_granted": CAPABILITIES,
                    "cast_types": [
                        {
                            "castType": "explore",
                            "enabled": True,
                            "ceilingTurns": 8,
                            "ceilingTokens": 50_000,
                            "readOnly": True,
                            "allowedNeedCodes": ["locate", "verify_claim", "diagnose"],
                        }
                    ],
                },
                on_step=progress.step,
            )
            progress.step("reading the report")
            report = await tools.call(
                "telic_get_artifact", run_id=driver.run_id, artifact_id="report-1"
            )
            progress.step("reading the packet digest")
            digest = await tools.call("telic_get_digest", run_id=driver.run_id)
            progress.step("verifying the ledger")
            verified = await tools.call("telic_verify_run", run_id=driver.run_id)
            diff = (
                await tools.call(
                    "telic_get_artifact", run_id=driver.run_id, artifact_id="evidence-diff"
                )
            )["artifact"]["body"]["content"]
    finally:
        progress.close()
    return DemoOutcome(
        run_id=driver.run_id,
        status=str(driver.action.get("status", driver.phase)),
        summary=str(report["artifact"]["body"]["summary"]),
        version=driver.version,
        packet_id=packet[0] if packet else None,
        digest=str(digest["digest"]),
        intact=bool(verified["intact"]),
        records_checked=int(verified["recordsChecked"] or 0),
        state_dir=state,
        repository=repo.root,
        seconds=time.monotonic() - started,
        diff=str(diff),
        steps=progress.done,
    )


def _indent(text: str) -> str:
    return "  " + text.rstrip().replace("\n", "\n  ")


def print_demo(outcome: DemoOutcome, telic: str) -> None:
    """Print what the demo proved for a person, with the commands to look further."""
    print("Telic demo: a scripted stand-in plays the host's model. No AI model is called;")
    print("it submits prepared artifacts and Telic checks each one as it would a model's.")
    print(f"\nanalyze_and_fix run {outcome.run_id}")
    print(f"  status     {outcome.status} at version {outcome.version}")
    print(f"  report     {outcome.summary}  (written by the stand-in)")
    print(f"  packet     {outcome.packet_id} (cited by the diagnosis WorkResult)")
    print(
        f"  ledger     {'intact' if outcome.intact else 'BROKEN'}: "
        f"{outcome.records_checked} records re-hashed"
    )
    print(f"  time       {outcome.seconds:.2f} s")
    print("\nThe fix the stand-in made (diff evidence):")
    print(_indent(outcome.diff))
    print("\nPacket digest:")
    print(_indent(outcome.digest))
    print("\nWhere the ledger lives:")
    print(f"  {outcome.state_dir / 'ledger.sqlite3'} (artifact bodies are stored inside it)")
    print("  look at the run with:")
    where = f"TELIC_STATE_DIR={outcome.state_dir}"
    root = f"--repository-root {outcome.repository}"
    print(f"    {where} {telic} {root} show {outcome.run_id}")
    print(f"    {where} {telic} {root} trace {outcome.run_id}")
    print(f"    {where} {telic} {root} report {outcome.run_id} --format html --out report.html")
    print("\nClean up when done (the demo's copy and ledger):")
    print(f"  rm -rf {outcome.workdir}")
