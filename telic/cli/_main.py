"""The ``telic`` command line: argument parsing, dispatch and exit codes.

Exit codes (documented in docs/cli.md): 0 success; 1 the operation failed (a Telic error, a
broken ledger chain, a failing doctor check); 2 usage error; 3 run or artifact not found;
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio

from telic._errors import NotFound, TelicError, UsageError
from telic.cli._console import print_json, table
from telic.server import (
    ServerConfig,
    Service,
    open_backend,
    open_default_service,
    reports_module,
    serve,
    to_wire,
)
from telic.server._app import has_reports
from telic.server._transport import REPORTED

__all__ = ["EXIT_FAILURE", "EXIT_NOT_FOUND", "EXIT_OK", "EXIT_USAGE", "main"]

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2
EXIT_NOT_FOUND: Final = 3
EXIT_INTERRUPTED: Final = 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="telic",
        description="Telic: a model-free workflow controller for AI coding agents.",
    )
    parser.add_argument(
        "--repository-root", metavar="PATH", help="repository (default $TELIC_REPOSITORY_ROOT or .)"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, text: str, *, json_flag: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text)
        if json_flag:
            sub.add_argument("--json", action="store_true", help="print JSON")
        return sub

    serve_cmd = add("serve", "serve MCP over stdio (default) or streamable HTTP", json_flag=False)
    serve_cmd.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP instead")
    serve_cmd.add_argument("--token", help="bearer token for HTTP (or $TELIC_HTTP_TOKEN)")
    serve_cmd.add_argument(
        "--schemas",
        choices=("full", "once"),
        help="send each artifact schema once per MCP session (default) or in every result "
        "(or $TELIC_SCHEMAS)",
    )
    demo_cmd = add("demo", "run a complete analyze_and_fix run on the bundled example")
    demo_cmd.add_argument("--workdir", metavar="DIR", help="where to put the copy and the state")
    runs_cmd = add("runs", "list runs, newest first")
    runs_cmd.add_argument("--limit", type=int, default=20, help="how many (1-100, default 20)")
    add("show", "show one run: record, artifacts, next action").add_argument("run")
    trace_cmd = add("trace", "show a run's trace")
    trace_cmd.add_argument("run")
    trace_cmd.add_argument("--after", type=int, default=0, help="after this sequence number")
    trace_cmd.add_argument("--limit", type=int, default=500, help="events (1-500)")
    artifact_cmd = add("artifact", "show one artifact of a run (verified)")
    artifact_cmd.add_argument("run")
    artifact_cmd.add_argument("artifact")
    add("digest", "print a run's packet digest").add_argument("run")
    add("verify", "verify a run's hash chain and blobs").add_argument("run")
    add("doctor", "check Python, state dir, database, git and rg")
    if has_reports():
        report_cmd = add("report", "render a run's report (Markdown or self-contained HTML)")
        report_cmd.add_argument("run")
        report_cmd.add_argument("--format", choices=("md", "html"), default="md")
        report_cmd.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
    return parser


@asynccontextmanager
async def _service(config: ServerConfig) -> AsyncIterator[Service]:
    async with open_default_service(config) as service:
        yield service


async def _runs(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config) as service:
        runs = to_wire(await service.list_runs(args.limit))
    if args.json:
        print_json({"runs": runs})
    elif not runs:
        print("No runs yet.")
    else:
        columns = [
            ("runId", "RUN"),
            ("requestedMode", "MODE"),
            ("status", "STATUS"),
            ("phase", "PHASE"),
            ("version", "V"),
            ("updatedAt", "UPDATED"),
        ]
        print(table(runs, columns))
    return EXIT_OK


async def _show(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config) as service:
        details = await service.get_run(args.run)
    run = to_wire(details.run)
    artifacts = to_wire(details.artifacts)
    action = to_wire(getattr(details, "action", None) or details.next_action)
    if args.json:
        print_json({"run": run, "artifacts": artifacts, "nextAction": action})
        return EXIT_OK
    for key in ("runId", "requestedMode", "status", "phase", "version", "repositoryRoot"):
        print(f"{key:>15}: {run.get(key)}")
    print(f"{'next':>15}: {action.get('kind')} {action.get('phase')} {action.get('id')}\n")
    columns = [("artifactId", "ARTIFACT"), ("type", "TYPE"), ("producer", "PRODUCER")]
    print(table(artifacts, [*columns, ("createdAt", "CREATED")]))
    return EXIT_OK


async def _trace(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config) as service:
        page = await service.get_trace(args.run, args.after, args.limit)
    events = to_wire(page.events)
    if args.json:
        print_json({"events": events, "hasMore": page.has_more})
        return EXIT_OK
    columns = [
        ("sequence", "SEQ"),
        ("eventType", "EVENT"),
        ("actor", "ACTOR"),
        ("phase", "PHASE"),
        ("rationaleSummary", "SUMMARY"),
    ]
    print(table(events, columns))
    if page.has_more:
        print(f"… more after sequence {events[-1]['sequence']}")
    return EXIT_OK


async def _artifact(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config) as service:
        stored = await service.get_artifact(args.run, args.artifact)
    meta, body = to_wire(stored.record), to_wire(stored.body)
    if args.json:
        print_json({"artifact": meta, "body": body})
    else:
        print(f"{meta['type']} {meta['artifactId']} by {meta['producer']} ({meta['sha256']})")
        print_json(body)
    return EXIT_OK


async def _digest(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config) as service:
        digest = await service.get_digest(args.run)
    if args.json:
        print_json({"runId": args.run, "digest": digest})
    else:
        print(digest or "(no packets)")
    return EXIT_OK


async def _verify(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config) as service:
        report = to_wire(await service.verify_run(args.run))
    if args.json:
        print_json({"runId": args.run, **report})
    elif report.get("ok"):
        print(f"intact: {report.get('recordsChecked')} records re-hashed and chained")
    else:
        print(f"BROKEN: {report.get('firstBroken')}")
    return EXIT_OK if report.get("ok") else EXIT_FAILURE


async def _demo(config: ServerConfig, args: argparse.Namespace) -> int:
    from pathlib import Path

    from telic.cli._demo import run_demo  # the demo's client side is not needed to serve

    outcome = await run_demo(workdir=Path(args.workdir) if args.workdir else None)
    if args.json:
        print_json(outcome.to_json())
        return EXIT_OK if outcome.status == "completed" and outcome.intact else EXIT_FAILURE
    print(f"Telic demo: analyze_and_fix run {outcome.run_id}")
    print(f"  status     {outcome.status} at version {outcome.version}")
    print(f"  report     {outcome.summary}")
    print(f"  packet     {outcome.packet_id} (cited by the diagnosis WorkResult)")
    print(
        f"  ledger     {'intact' if outcome.intact else 'BROKEN'}: "
        f"{outcome.records_checked} records re-hashed"
    )
    print(f"  time       {outcome.seconds:.2f} s")
    print("\nThe fix (diff evidence):")
    print("  " + outcome.diff.rstrip().replace("\n", "\n  "))
    print("\nPacket digest:")
    print("  " + outcome.digest.rstrip().replace("\n", "\n  "))
    print("\nWhere the ledger lives:")
    print(f"  {outcome.state_dir / 'ledger.sqlite3'} (artifact bodies are stored inside it)")
    print("  inspect it with:")
    where = f"TELIC_REPOSITORY_ROOT={outcome.repository} TELIC_STATE_DIR={outcome.state_dir}"
    print(f"    {where} telic show {outcome.run_id}")
    print(f"    {where} telic trace {outcome.run_id}")
    return EXIT_OK if outcome.status == "completed" and outcome.intact else EXIT_FAILURE


async def _report(config: ServerConfig, args: argparse.Namespace) -> int:
    reports = reports_module()
    assert reports is not None
    async with open_backend(config) as backend:
        if args.out:
            written = await reports.write_report(backend.ledger, args.run, args.format, args.out)
            described = to_wire(written)
        else:
            text = await reports.render_report(backend.ledger, args.run, args.format)
    if args.out:
        if args.json:
            print_json(described)
        else:
            print(f"wrote {args.out}")
    elif args.json:
        print_json({"runId": args.run, "format": args.format, "report": text})
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


async def _doctor(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.cli._doctor import run_doctor

    checks = run_doctor(config)
    failed = any(c.required and not c.ok for c in checks)
    if args.json:
        print_json({"ok": not failed, "checks": [to_wire(c) for c in checks]})
    else:
        for check in checks:
            mark = "ok " if check.ok else ("FAIL" if check.required else "warn")
            print(f"[{mark:>4}] {check.name:<11} {check.detail}")
    return EXIT_FAILURE if failed else EXIT_OK


_COMMANDS: Final[dict[str, Callable[[ServerConfig, argparse.Namespace], Awaitable[int]]]] = {
    "runs": _runs,
    "show": _show,
    "trace": _trace,
    "artifact": _artifact,
    "digest": _digest,
    "verify": _verify,
    "demo": _demo,
    "doctor": _doctor,
    "report": _report,
}


def _fail(args: argparse.Namespace, code: int, error: str, kind: str) -> int:
    if getattr(args, "json", False):
        print_json({"ok": False, "code": kind, "error": error})
    print(f"telic: {error}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``telic`` command; return its exit code."""
    args = _parser().parse_args(argv)
    try:
        config = ServerConfig.from_env(
            http=getattr(args, "http", None),
            token=getattr(args, "token", None),
            repository_root=args.repository_root,
            schemas=getattr(args, "schemas", None),
        )
        if args.command == "serve":
            anyio.run(serve, config)
            return EXIT_OK
        command = _COMMANDS[args.command]
        result: Any = anyio.run(command, config, args)
        return int(result)
    except Exception as exc:  # the CLI boundary: report, never a traceback for users
        return _explain(args, _leaf(exc))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _explain(args: argparse.Namespace, exc: BaseException) -> int:
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if REPORTED in getattr(exc, "__notes__", ()):
        return EXIT_FAILURE  # ``serve`` printed its one line when it happened
    if isinstance(exc, UsageError):
        return _fail(args, EXIT_USAGE, exc.message, exc.code)
    if isinstance(exc, NotFound):
        return _fail(args, EXIT_NOT_FOUND, exc.message, exc.code)
    if isinstance(exc, TelicError):
        return _fail(args, EXIT_FAILURE, exc.message, exc.code)
    from telic.cli._host import TelicCallError

    if isinstance(exc, TelicCallError):
        code = str(exc.envelope.get("code"))
        return _fail(args, EXIT_FAILURE, str(exc), code)
    return _fail(args, EXIT_FAILURE, f"{type(exc).__name__}: {exc}", "internal_error")
