"""The MCP adapter: Telic's tools, prompt and reports over stdio and streamable HTTP.

A thin typed adapter (rank 6): every tool parses its arguments, makes one call to the service
(``telic.roles``) and returns a result envelope — ``{ok: true, …}`` or, with ``isError``,
``{ok: false, error, code, issues?, rules?}``. Nothing below the tool boundary ever reaches the
transport as an exception except cancellation.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.server._app import (
        SERVER_NAME as SERVER_NAME,
        assemble as assemble,
        build_server as build_server,
    )
    from telic.server._backend import (
        REPORTED as REPORTED,
        Backend as Backend,
        OpeningBackend as OpeningBackend,
        has_reports as has_reports,
        open_backend as open_backend,
        open_default_service as open_default_service,
        reports_module as reports_module,
        say as say,
        server_version as server_version,
        serving_gc as serving_gc,
    )
    from telic.server._config import (
        HTTP_TOKEN_ENV as HTTP_TOKEN_ENV,
        HttpBinding as HttpBinding,
        ServerConfig as ServerConfig,
        is_loopback as is_loopback,
        parse_binding as parse_binding,
    )
    from telic.server._envelope import to_wire as to_wire
    from telic.server._prompt import (
        WORKFLOW_INSTRUCTIONS as WORKFLOW_INSTRUCTIONS,
        workflow_message as workflow_message,
    )
    from telic.server._stdio import (
        PipeLines as PipeLines,
        PipeWriter as PipeWriter,
        serve_lines as serve_lines,
    )
    from telic.server._tools import TOOL_NAMES as TOOL_NAMES, ProgressFn as ProgressFn
    from telic.server._transport import (
        BearerTokenMiddleware as BearerTokenMiddleware,
        http_app as http_app,
        serve as serve,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
