"""The MCP adapter: Telic's tools, prompt and reports over stdio and streamable HTTP.

A thin typed adapter (rank 6): every tool parses its arguments, makes one call to the service
(``telic.roles``) and returns a result envelope — ``{ok: true, …}`` or, with ``isError``,
``{ok: false, error, code, issues?, rules?}``. Nothing below the tool boundary ever reaches the
transport as an exception except cancellation.
"""

from __future__ import annotations

from telic.server._app import SERVER_NAME as SERVER_NAME
from telic.server._app import build_server as build_server
from telic.server._app import reports_module as reports_module
from telic.server._config import DATABASE_URL_ENV as DATABASE_URL_ENV
from telic.server._config import HTTP_TOKEN_ENV as HTTP_TOKEN_ENV
from telic.server._config import REPOSITORY_ROOT_ENV as REPOSITORY_ROOT_ENV
from telic.server._config import STATE_DIR_ENV as STATE_DIR_ENV
from telic.server._config import HttpBinding as HttpBinding
from telic.server._config import ServerConfig as ServerConfig
from telic.server._config import is_loopback as is_loopback
from telic.server._config import parse_binding as parse_binding
from telic.server._envelope import to_wire as to_wire
from telic.server._prompt import WORKFLOW_INSTRUCTIONS as WORKFLOW_INSTRUCTIONS
from telic.server._prompt import workflow_message as workflow_message
from telic.server._service import ProgressFn as ProgressFn
from telic.server._service import Service as Service
from telic.server._tools import TOOL_NAMES as TOOL_NAMES
from telic.server._transport import Backend as Backend
from telic.server._transport import BearerTokenMiddleware as BearerTokenMiddleware
from telic.server._transport import http_app as http_app
from telic.server._transport import open_backend as open_backend
from telic.server._transport import open_default_service as open_default_service
from telic.server._transport import serve as serve

__all__ = [
    "DATABASE_URL_ENV",
    "HTTP_TOKEN_ENV",
    "REPOSITORY_ROOT_ENV",
    "SERVER_NAME",
    "STATE_DIR_ENV",
    "TOOL_NAMES",
    "WORKFLOW_INSTRUCTIONS",
    "Backend",
    "BearerTokenMiddleware",
    "HttpBinding",
    "ProgressFn",
    "ServerConfig",
    "Service",
    "build_server",
    "http_app",
    "is_loopback",
    "open_backend",
    "open_default_service",
    "parse_binding",
    "reports_module",
    "serve",
    "to_wire",
    "workflow_message",
]
