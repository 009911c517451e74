"""The read-only HTTP surface: an index of runs and each run's report, behind a bearer token.

``reports_app`` returns a Starlette application. Routes (with the default ``prefix="/runs"``)::

    GET /runs              the index of the newest runs (HTML; ``?status=`` and ``?mode=``
                           filter it)
    GET /runs/<id>         the run's report followed by its whole trace (HTML; ``?format=md``
                           for the Markdown report alone)

``root_redirect`` is the ``/`` route of ``telic serve --http``: it leads to ``/runs``.
``mirror_app`` serves a report mirror read-only (``telic serve --reports-mirror DIR`` mounts it
at ``/reports``): ``GET /reports`` lists its reports, ``GET /reports/<name>`` shows one framed by
its state and provenance (``?format=md`` for Markdown).

Reports are rendered live from the ledger (always ``present``) unless ``reports_dir`` names a
mirror of written reports (``<id>.html`` / ``<id>.md``, as ``write_report`` writes them); then
the stored file is shown with its status: ``absent``, ``stale``, ``invalid`` or ``present``.
"""

from __future__ import annotations

import hmac
import inspect
from collections.abc import Awaitable, Callable
from html import escape
from os import PathLike
from typing import Final, TypeAlias

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from telic._errors import NotFound
from telic.casting import read_trace
from telic.ledger import Ledger, utc_now
from telic.protocol import MODES, is_identifier
from telic.reports._artifact import describe_report
from telic.reports._files import ReportFormat, read_stored, render
from telic.reports._html import CSP, STATUS_FILTERS, page, render_index, render_trace
from telic.reports._load import load_index, load_run_report
from telic.reports._mirror import read_mirror
from telic.reports._mirror_view import render_mirror_index, render_mirror_report
from telic.reports._viewer import view_report

LedgerProvider: TypeAlias = Callable[[], Ledger | Awaitable[Ledger]]
"""Returns the ledger to read (sync or async), asked once per request."""

_INDEX_LIMIT: Final = 100
_HEADERS: Final = {
    "Content-Security-Policy": CSP + "; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class _BearerAuth:
    """Refuse HTTP requests without ``Authorization: Bearer <token>`` (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = PlainTextResponse(
                    "401 Unauthorized: a bearer token is required",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="telic"', **_HEADERS},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _missing(title: str, frame: str, state: str, detail: str) -> HTMLResponse:
    """A 404 page: one frame saying what is not there (``detail`` is HTML)."""
    body = (
        f'<main><div class="frame" id="{frame}"><p class="state">{state}</p>'
        f"<p>{detail}</p></div></main>"
    )
    return HTMLResponse(page(title, body), status_code=404, headers=_HEADERS)


def _not_found(run_id: str) -> HTMLResponse:
    detail = f"This ledger has no run <code>{escape(run_id)}</code>."
    return _missing("Run not found", "run-not-found", "No such run", detail)


def _markdown(text: str) -> PlainTextResponse:
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8", headers=_HEADERS)


def _bad_request(why: str) -> PlainTextResponse:
    return PlainTextResponse(f"400 Bad Request: {why}", status_code=400, headers=_HEADERS)


def _format(request: Request) -> ReportFormat | None:
    """The ``?format=`` asked for (``html`` by default), or ``None`` for another value."""
    fmt = request.query_params.get("format", "html")
    return "md" if fmt == "md" else "html" if fmt == "html" else None


def _before_body_end(page_text: str, extra: str) -> str:
    head, sep, tail = page_text.rpartition("</body>")
    return f"{head}{extra}\n{sep}{tail}" if sep else page_text + extra


def root_redirect(target: str = "/runs/") -> Route:
    """The ``/`` route that leads a browser to the index of runs (307 to ``target``)."""

    async def to_runs(request: Request) -> Response:
        return RedirectResponse(request.scope.get("root_path", "") + target, status_code=307)

    return Route("/", to_runs, methods=["GET"], name="root")


def mirror_app(folder: str | PathLike[str], *, token: str | None = None) -> Starlette:
    """The read-only pages of the report mirror ``folder`` (mount it where it should live)."""

    async def index(request: Request) -> Response:
        try:
            entries = await read_mirror(folder)
        except OSError:
            return _mirror_missing()
        base = request.scope.get("root_path", "")
        return HTMLResponse(render_mirror_index(entries, base=base), headers=_HEADERS)

    async def one(request: Request) -> Response:
        name = request.path_params["name"]
        fmt = _format(request)
        if fmt is None:
            return _bad_request("format must be html or md")
        try:
            entries = await read_mirror(folder)
        except OSError:
            return _mirror_missing()
        entry = next((e for e in entries if e.name == name), None)
        if entry is None:
            detail = f"The mirror has no report <code>{escape(name)}</code>."
            return _missing("Report not found", "report-not-found", "No such report", detail)
        if fmt == "md":
            return _markdown(render_mirror_report(entry, "md"))
        return HTMLResponse(render_mirror_report(entry, "html"), headers=_HEADERS)

    app = Starlette(
        routes=[
            Route("/", index, methods=["GET"], name="mirror_index"),
            Route("/{name}", one, methods=["GET"], name="mirror_report"),
        ]
    )
    if token is not None:
        app.add_middleware(_BearerAuth, token=token)
    return app


def _mirror_missing() -> HTMLResponse:
    detail = (
        "No folder can be read at the configured mirror path. Reports appear here once the "
        "campaign harness mirrors them."
    )
    state = "The report mirror is not there"
    return _missing("Report mirror absent", "mirror-absent", state, detail)


def reports_app(
    ledger_provider: LedgerProvider,
    *,
    token: str | None,
    reports_dir: str | PathLike[str] | None = None,
    prefix: str = "/runs",
    clock: Callable[[], str] = utc_now,
) -> Starlette:
    """Return the read-only reports application (``reports_dir``: see the module docstring).

    Args:
        token: when set, every request needs ``Authorization: Bearer <token>`` (else 401).
        prefix: where the routes live; pass ``""`` when mounting the app at ``/runs``.
        clock: the generation time of live reports.
    """

    async def ledger() -> Ledger:
        provided = ledger_provider()
        return await provided if inspect.isawaitable(provided) else provided

    async def index(request: Request) -> Response:
        status = request.query_params.get("status") or None
        mode = request.query_params.get("mode") or None
        if status is not None and status not in STATUS_FILTERS:
            return _bad_request(f"status must be one of {', '.join(STATUS_FILTERS)}")
        if mode is not None and mode not in MODES:
            return _bad_request(f"mode must be one of {', '.join(MODES)}")
        runs = await load_index(await ledger(), _INDEX_LIMIT)
        shown = [r for r in runs if status in (None, r.status) and mode in (None, r.mode)]
        base = request.scope.get("root_path", "") + prefix
        text = render_index(shown, base=base, status=status, mode=mode, total=len(runs))
        return HTMLResponse(text, headers=_HEADERS)

    async def report(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if not is_identifier(run_id):
            return _not_found("(not a run id)")
        fmt = _format(request)
        if fmt is None:
            return _bad_request("format must be html or md")
        try:
            data = await load_run_report(await ledger(), run_id, clock=clock)
        except NotFound:
            return _not_found(run_id)
        name = f"{run_id}.{fmt}"
        if reports_dir is None:
            text: str | None = render(data, fmt)
        else:
            text = await read_stored(anyio.Path(reports_dir) / name)
        body = view_report(describe_report(data, text, path=name), text, fmt)
        if fmt == "md":
            return _markdown(body)
        trace = render_trace(await read_trace(await ledger(), run_id))
        return HTMLResponse(_before_body_end(body, trace), headers=_HEADERS)

    base = prefix.rstrip("/")
    routes = [
        Route(base or "/", index, methods=["GET"], name="index"),
        Route(f"{base}/{{run_id}}", report, methods=["GET"], name="report"),
    ]
    if base:
        routes.append(Route(f"{base}/", index, methods=["GET"], name="index_slash"))
    app = Starlette(routes=routes)
    if token is not None:
        app.add_middleware(_BearerAuth, token=token)
    return app
