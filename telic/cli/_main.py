"""The ``telic`` command line: argument parsing, dispatch and exit codes.

Exit codes (documented in docs/cli.md): 0 success; 1 the operation failed (a Telic error, a
broken ledger chain, a failing doctor check); 2 usage error; 3 run or artifact not found;
130 interrupted.

Every failure is one or two lines on stderr that say what was wrong, which run, ledger or
repository, and what to do (``_errors``); no Python exception text reaches a user. Read-only
commands never create a ledger: they look for it first (``_where``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio

from telic._errors import NotFound, TelicError, UsageError
from telic.cli._console import print_json, table
from telic.cli._errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    explain_os_error,
    leaf,
)
from telic.cli._kits import HOST_COMMANDS, add_host_commands
from telic.cli._where import (
    LedgerLocation,
    check_port,
    check_repository,
    command_name,
    find_ledger,
    is_git_work_tree,
    locate_ledger,
)

if TYPE_CHECKING:
    from telic.roles import Service
    from telic.server import ServerConfig


# The MCP server (and the models under it) load only once a command needs them: ``telic
# --version`` and ``--help`` parse and exit without importing the server (about 2 s).


def to_wire(value: Any) -> Any:
    """``telic.server.to_wire``, imported on first use."""
    from telic.server import to_wire as convert

    return convert(value)


async def serve(config: ServerConfig) -> None:
    """``telic.server.serve``, imported on first use."""
    from telic.server import serve as run

    await run(config)


def _bounded(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high], refused with the documented range."""
    shown = f"{low}-{high}" if high is not None else f"at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number ({shown})") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range ({shown})")
        return value

    return parse


def _global_options(*, top: bool) -> argparse.ArgumentParser:
    """Options accepted before or after the command (after wins)."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument(
        "--repository-root",
        metavar="PATH",
        default=None if top else argparse.SUPPRESS,
        help="repository (default $TELIC_REPOSITORY_ROOT or .)",
    )
    return options


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="telic",
        description="Telic: a model-free workflow controller for AI coding agents.",
        parents=[_global_options(top=True)],
    )
    parser.add_argument("--version", action="version", version=f"telic {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    shared = _global_options(top=False)

    def add(name: str, text: str, *, json_flag: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text, parents=[shared])
        if json_flag:
            sub.add_argument("--json", action="store_true", help="print JSON")
        return sub

    serve_cmd = add("serve", "serve MCP over stdio (default) or streamable HTTP", json_flag=False)
    serve_cmd.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP instead")
    serve_cmd.add_argument(
        "--resident",
        action="store_true",
        help="attach to the repository's resident server over a Unix socket, starting it if "
        "none runs (stdio only; docs/design.md)",
    )
    serve_cmd.add_argument("--token", help="bearer token for HTTP (or $TELIC_HTTP_TOKEN)")
    serve_cmd.add_argument(
        "--reports-mirror",
        metavar="DIR",
        help="also serve the campaign reports of this report mirror at /reports (HTTP)",
    )
    serve_cmd.add_argument(
        "--schemas",
        choices=("full", "once"),
        help="send each artifact schema once per MCP session (default) or in every result "
        "(or $TELIC_SCHEMAS)",
    )
    demo_cmd = add("demo", "run a complete analyze_and_fix run on the bundled example")
    demo_cmd.add_argument("--workdir", metavar="DIR", help="where to put the copy and the state")
    runs_cmd = add("runs", "list runs, newest first")
    runs_cmd.add_argument(
        "--limit", type=_bounded(1, 100), default=20, help="how many (1-100, default 20)"
    )
    add("show", "show one run: record, artifacts, next action").add_argument("run")
    trace_cmd = add("trace", "show a run's trace")
    trace_cmd.add_argument("run")
    trace_cmd.add_argument(
        "--after", type=_bounded(0), default=0, help="after this sequence number (default 0)"
    )
    trace_cmd.add_argument(
        "--limit", type=_bounded(1, 500), default=500, help="events (1-500, default 500)"
    )
    artifact_cmd = add("artifact", "show one artifact of a run (verified)")
    artifact_cmd.add_argument("run")
    artifact_cmd.add_argument("artifact")
    digest_cmd = add("digest", "print a run's packet digest (--all: across the repository's runs)")
    digest_cmd.add_argument("run", nargs="?")
    digest_cmd.add_argument("--all", action="store_true", help="aggregate every run's packets")
    add("verify", "verify a run's hash chain and blobs").add_argument("run")
    replay_cmd = add("replay", "replay a run step by step (artifacts, digests, highlights)")
    replay_cmd.add_argument("run")
    replay_cmd.add_argument(
        "--repo",
        dest="repository_root",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="the repository (as --repository-root)",
    )
    add("doctor", "check Python, state dir, database, git and rg")
    add_host_commands(add)
    if importlib.util.find_spec("telic.reports") is not None:  # without importing it
        report_cmd = add("report", "render a run's report (Markdown or self-contained HTML)")
        report_cmd.add_argument(
            "run", nargs="?", help="the run (with --mirror: the mirrored report's name)"
        )
        report_cmd.add_argument(
            "--format",
            choices=("md", "html", "text"),
            default=None,
            help="md (the default into a file or pipe), html, or text (the default on a terminal:"
            " the Markdown without anchors, escapes or marks)",
        )
        report_cmd.add_argument("--out", metavar="FILE", help="write to FILE instead of stdout")
        report_cmd.add_argument(
            "--mirror",
            metavar="DIR",
            help="list the campaign reports of a report mirror, or show the one named",
        )
    return parser


def _version() -> str:
    try:
        return importlib.metadata.version("telic")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def _existing_ledger(config: ServerConfig, args: argparse.Namespace) -> LedgerLocation:
    """The ledger a read-only command reads; refused (not created) when it is not there."""
    where = find_ledger(config)
    if not where.exists:
        raise CliError(
            EXIT_NOT_FOUND,
            "not_found",
            f"no run {args.run!r}: repository {config.repository_root} has no ledger yet "
            f"(looked for {where.describe()})",
            "runs appear once a host calls telic_start_run through telic serve",
        )
    return where


@asynccontextmanager
async def _service(config: ServerConfig, args: argparse.Namespace) -> AsyncIterator[Service]:
    from telic.server import open_default_service

    _existing_ledger(config, args)
    async with open_default_service(config) as service:
        yield service


async def _runs(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.cli._words import phase_words, status_words
    from telic.controller import human_time
    from telic.server import open_default_service

    where = find_ledger(config)
    runs: list[Mapping[str, Any]] = []
    if where.exists:
        async with open_default_service(config) as service:
            runs = [run.summary_wire() for run in await service.list_runs(args.limit)]
    if args.json:
        print_json({"runs": runs})
    elif not runs:
        print(f"No runs yet for {config.repository_root} (ledger {where.describe()}).")
    else:
        rows = [
            {
                **run,
                "statusLabel": status_words(run),
                "phaseLabel": phase_words(run),
                "updated": human_time(str(run.get("updatedAt", ""))),
            }
            for run in runs
        ]
        columns = [
            ("runId", "RUN"),
            ("requestedMode", "MODE"),
            ("statusLabel", "STATUS"),
            ("phaseLabel", "PHASE"),
            ("version", "V"),
            ("updated", "UPDATED"),
        ]
        if any(run.get("priorRunId") for run in runs):  # a lineage chain: show its links
            columns.append(("priorRunId", "FOLLOWS"))
        print(table(rows, columns))
    return EXIT_OK


async def _show(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.cli._words import phase_words, status_words
    from telic.controller import human_time

    async with _service(config, args) as service:
        details = await service.get_run(args.run)
    run = to_wire(details.run)
    artifacts = to_wire(details.artifacts)
    action = to_wire(details.next_action)
    if args.json:
        print_json({"run": run, "artifacts": artifacts, "nextAction": action})
        return EXIT_OK
    fields = {
        "run": run.get("runId"),
        "mode": run.get("requestedMode"),
        "status": status_words(run),
        "phase": phase_words(run),
        "version": run.get("version"),
        "repository": run.get("repositoryRoot"),
        "started": human_time(str(run.get("createdAt", ""))),
        "updated": human_time(str(run.get("updatedAt", ""))),
    }
    if run.get("priorRunId"):
        fields["follows"] = run["priorRunId"]
    for key, value in fields.items():
        print(f"{key:>10}: {value}")
    print(f"{'next':>10}: {_next_words(action)}\n")
    columns = [("id", "ARTIFACT"), ("type", "TYPE"), ("producer", "PRODUCER")]
    print(table(artifacts, [*columns, ("createdAt", "CREATED")]))
    return EXIT_OK


async def _trace(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.cli._words import trace_rows

    async with _service(config, args) as service:
        page = await service.get_trace(args.run, args.after, args.limit)
    events = to_wire(page.events)
    if args.json:
        print_json({"events": events, "hasMore": page.has_more})
        return EXIT_OK
    columns = [
        ("sequence", "SEQ"),
        ("eventType", "EVENT"),
        ("actor", "ACTOR"),
        ("phaseLabel", "PHASE"),
        ("summary", "SUMMARY"),
    ]
    print(table(trace_rows(events), columns))
    if page.has_more:
        print(f"… more after sequence {events[-1]['sequence']}")
    return EXIT_OK


def _next_words(action: dict[str, Any]) -> str:
    from telic.cli._words import phase_words, status_words

    kind = str(action.get("kind", ""))
    if kind == "terminal":
        return f"nothing: the run ended ({status_words(action)})"
    if kind == "clarification":
        return "answer the clarification request (telic_answer_clarification)"
    return f"{phase_words({'phase': action.get('phase', ''), 'status': 'running'})} ({kind})"


def _broken_words(broken: Any) -> str:
    if not isinstance(broken, dict):
        return "the chain does not verify"
    what = " ".join(str(broken.get(k)) for k in ("kind", "id") if broken.get(k))
    return f"{what}: {broken.get('reason', 'does not match its digest')}"


async def _artifact(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config, args) as service:
        stored = await service.get_artifact(args.run, args.artifact)
    artifact = to_wire(stored)  # the Telic 1.0 shape: metadata with the body inside it
    if args.json:
        print_json({"artifact": artifact})
    else:
        kind, aid, producer = artifact["type"], artifact["id"], artifact["producer"]
        print(f"{kind} {aid} by {producer} ({artifact['sha256']})")
        print_json(artifact["body"])
    return EXIT_OK


async def _digest(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config, args) as service:
        if args.all or args.run is None:
            from telic.casting import render_stats

            stats = await service.get_packet_stats()
            print_json(stats.to_wire()) if args.json else print(render_stats(stats))
            return EXIT_OK
        digest = await service.get_digest(args.run)
    if args.json:
        print_json({"runId": args.run, "digest": digest})
    else:
        print(digest or "(no packets)")
    return EXIT_OK


async def _verify(config: ServerConfig, args: argparse.Namespace) -> int:
    async with _service(config, args) as service:
        report = to_wire(await service.verify_run(args.run))
    if args.json:
        print_json({"runId": args.run, **report})
    elif report.get("ok"):
        print(f"intact: {report.get('recordsChecked')} records re-hashed and chained")
    else:
        print(f"BROKEN: {_broken_words(report.get('firstBroken'))}")
        print(f"  run {args.run} in ledger {locate_ledger(config).describe()}")
    return EXIT_OK if report.get("ok") else EXIT_FAILURE


async def _replay(config: ServerConfig, args: argparse.Namespace) -> int:
    import json

    async with _service(config, args) as service:
        report = to_wire(await service.replay_run(args.run))
    # The report itself, as the original prints it: compact with --json, indented otherwise.
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        print_json(report)
    return EXIT_OK


async def _demo(config: ServerConfig, args: argparse.Namespace) -> int:
    # The demo's client side is not needed to serve.
    from telic.demo import print_demo, run_demo

    workdir = _demo_workdir(args.workdir) if args.workdir else None
    outcome = await run_demo(workdir=workdir)
    if args.json:
        print_json(outcome.to_json())
    else:
        print_demo(outcome, command_name())
    return EXIT_OK if outcome.status == "completed" and outcome.intact else EXIT_FAILURE


async def _report(config: ServerConfig, args: argparse.Namespace) -> int:
    from telic.server import open_backend, reports_module

    reports = reports_module()
    assert reports is not None
    out = _output_file(args.out) if args.out else None
    if args.mirror:
        return await _mirror_report(reports, args, out)
    if args.run is None:
        raise CliError(
            EXIT_USAGE,
            "usage",
            "telic report needs a RUN (or --mirror DIR for campaign reports)",
            "list the runs with: telic runs",
        )
    fmt = args.format or ("text" if out is None and not args.json and sys.stdout.isatty() else "md")
    if fmt == "text" and out is not None:
        raise CliError(
            EXIT_USAGE,
            "usage",
            "--format text is for the terminal; a report file is md or html",
            f"write it with: telic report {args.run} --format md --out {args.out}",
        )
    _existing_ledger(config, args)
    async with open_backend(config) as backend:
        if fmt == "text":
            text = await reports.render_terminal_report(backend.ledger, args.run)
        elif out is not None:
            try:
                written = await reports.write_report(backend.ledger, args.run, fmt, out)
            except OSError as exc:
                raise explain_os_error(exc, f"write the report to {out}") from None
            described = to_wire(written)
        else:
            text = await reports.render_report(backend.ledger, args.run, fmt)
    if args.out:
        if args.json:
            print_json(described)
        else:
            print(f"wrote {args.out}")
    elif args.json:
        print_json({"runId": args.run, "format": fmt, "report": text})
    else:
        _print_text(text)
    return EXIT_OK


def _print_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _demo_workdir(text: str) -> Path:
    """``--workdir DIR``: refused when it already holds a demo (checked before any work)."""
    workdir = Path(text).expanduser().resolve()
    if (workdir / "repo").exists():
        raise CliError(
            EXIT_USAGE,
            "workdir_in_use",
            f"--workdir {workdir} already holds a demo (its repo/ folder exists)",
            "pass a new or empty folder, or remove that one first",
        )
    return workdir


async def _mirror_report(reports: Any, args: argparse.Namespace, out: Path | None) -> int:
    from telic.controller import human_time

    folder = _mirror_folder(args.mirror)
    entries = await reports.read_mirror(folder)
    if args.run is None:
        rows = [
            {
                "name": e.name,
                "kind": e.artifact.kind,
                "status": e.artifact.status,
                "campaign": e.campaign,
                "spinePrefix": e.spine_prefix,
                "generated": human_time(e.artifact.generated_at or "") or None,
                "problem": e.problem,
            }
            for e in entries
        ]
        if args.json:
            print_json({"mirror": str(folder), "reports": rows})
            return EXIT_OK
        columns = [
            ("name", "REPORT"),
            ("kind", "KIND"),
            ("status", "STATE"),
            ("campaign", "CAMPAIGN"),
            ("spinePrefix", "SPINE"),
            ("generated", "GENERATED"),
        ]
        print(table(rows, columns))
        return EXIT_OK
    entry = next((e for e in entries if e.name == args.run), None)
    if entry is None:
        raise CliError(
            EXIT_NOT_FOUND,
            "not_found",
            f"the report mirror {folder} has no report {args.run!r}",
            f"list its reports with: {command_name()} report --mirror {folder}",
        )
    text = reports.render_mirror_report(entry, "html" if args.format == "html" else "md")
    if out is not None:
        try:
            await anyio.Path(out).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise explain_os_error(exc, f"write the report to {out}") from None
        print(f"wrote {out}")
    elif args.json:
        print_json({"name": entry.name, "status": entry.artifact.status, "report": text})
    else:
        _print_text(text)
    return EXIT_OK


def _mirror_folder(text: str) -> Path:
    """``--mirror DIR`` / ``--reports-mirror DIR``: an existing folder (refused otherwise)."""
    folder = Path(text).expanduser().absolute()
    if not folder.is_dir():
        raise CliError(
            EXIT_USAGE,
            "no_mirror",
            f"report mirror {folder} is not a folder that exists",
            "pass the folder the campaign harness mirrors its reports into",
        )
    return folder


def _output_file(text: str) -> Path:
    """``--out FILE``: a file in an existing folder (checked before any work is done)."""
    out = Path(text).expanduser().absolute()
    if out.is_dir():
        raise CliError(
            EXIT_USAGE, "bad_output", f"--out {text} is a folder", "name a file, e.g. report.html"
        )
    if not out.parent.is_dir():
        raise CliError(
            EXIT_USAGE,
            "bad_output",
            f"--out {text}: folder {out.parent} does not exist",
            f"create it first (mkdir -p {out.parent}) or write somewhere else",
        )
    return out


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
    "replay": _replay,
    "demo": _demo,
    "doctor": _doctor,
    "report": _report,
    **HOST_COMMANDS,
}


def _fail(args: argparse.Namespace, error: CliError) -> int:
    if getattr(args, "json", False):
        hint = {"hint": error.hint} if error.hint else {}
        print_json({"ok": False, "code": error.kind, "error": error.message, **hint})
    print(f"telic: {error}", file=sys.stderr)
    return error.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``telic`` command; return its exit code."""
    args = _parser().parse_args(argv)
    if args.command == "serve" and args.resident:  # normally routed by ``_entry`` already
        from telic.resident import serve_resident

        words = list(argv if argv is not None else sys.argv[1:])
        return serve_resident(words[words.index("serve") + 1 :], args.repository_root)
    config: ServerConfig | None = None
    try:
        from telic.server import ServerConfig

        config = ServerConfig.from_env(
            http=getattr(args, "http", None),
            token=getattr(args, "token", None),
            repository_root=args.repository_root,
            schemas=getattr(args, "schemas", None),
            reports_mirror=getattr(args, "reports_mirror", None),
        )
        if args.command == "serve":
            _check_serve(config)
            anyio.run(serve, config)
            return EXIT_OK
        return anyio.run(_COMMANDS[args.command], config, args)
    except Exception as exc:  # the CLI boundary: report, never a traceback for users
        if os.environ.get("TELIC_DEBUG") == "1":
            traceback.print_exception(exc, file=sys.stderr)
        return _explain(args, config, leaf(exc))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BaseExceptionGroup as group:  # uvicorn exits with SystemExit when it cannot start
        if isinstance(leaf(group), SystemExit):
            return _fail(args, CliError(EXIT_FAILURE, "startup_failed", f"cannot {_doing(args)}"))
        raise


def _check_serve(config: ServerConfig) -> None:
    """Refuse a repository that is not there; warn (once, on stderr) when it is not git."""
    root = check_repository(config)
    if config.reports_mirror is not None:
        _mirror_folder(str(config.reports_mirror))
    if config.http is not None:
        check_port(config.http.host, config.http.port)
    if not is_git_work_tree(root):
        print(
            f"telic: warning: {root} is not a git repository; grounding will see no tracked "
            "files and cannot fingerprint the work tree (run git init there first)",
            file=sys.stderr,
        )


def _explain(args: argparse.Namespace, config: ServerConfig | None, exc: BaseException) -> int:
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    from telic.server import REPORTED

    if REPORTED in getattr(exc, "__notes__", ()):
        return EXIT_FAILURE  # ``serve`` printed its one line when it happened
    if isinstance(exc, BrokenPipeError):  # ``telic trace … | head``: stop without a word
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    return _fail(args, _as_cli_error(args, config, exc))


def _as_cli_error(
    args: argparse.Namespace, config: ServerConfig | None, exc: BaseException
) -> CliError:
    """``exc`` as the one or two lines a user reads (a Telic error names its ledger)."""
    if isinstance(exc, CliError):
        return exc
    if isinstance(exc, UsageError):
        return CliError(EXIT_USAGE, exc.code, exc.message)
    if isinstance(exc, TelicError):
        ledger = "?" if config is None else locate_ledger(config).describe()
        if isinstance(exc, NotFound):
            run, telic = str(getattr(args, "run", "")), command_name()
            artifact = getattr(args, "artifact", None)
            if artifact is not None and "artifact" in exc.message.lower():
                missing = f"run {run} has no artifact {artifact!r} (ledger {ledger})"
                hint = f"list its artifacts with: {telic} show {run}"
            else:
                missing = f"no run {run!r} in ledger {ledger}"
                hint = f"list the runs with: {telic} runs"
            return CliError(EXIT_NOT_FOUND, "not_found", missing, hint)
        where = "" if config is None else f" (ledger {ledger})"
        return CliError(EXIT_FAILURE, exc.code, exc.message + where)
    from telic.demo import TelicCallError

    if isinstance(exc, TelicCallError):
        return CliError(EXIT_FAILURE, str(exc.envelope.get("code")), str(exc))
    if isinstance(exc, OSError):
        return explain_os_error(exc, _doing(args))
    return CliError(
        EXIT_FAILURE,
        "internal_error",
        f"telic {args.command} stopped on an internal error",
        "please report it with the command you ran; TELIC_DEBUG=1 shows the details",
    )


def _doing(args: argparse.Namespace) -> str:
    if args.command == "serve" and getattr(args, "http", None):
        return f"serve HTTP on {args.http}"
    return f"run telic {args.command}"
