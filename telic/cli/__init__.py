"""The ``telic`` command line (rank 7): serve, demo, inspect runs, verify, doctor.

``main`` is the console script. ``drive_mode`` and ``TelicTools`` are the scripted MCP host the
demo and the examples use: they reach Telic only through its public tools over the official
MCP client, exactly as a real host does.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.cli._bodies import Bodies as Bodies
    from telic.cli._bodies import criterion as criterion
    from telic.cli._bodies import permissions as permissions
    from telic.cli._bodies import verification as verification
    from telic.cli._connect import free_port as free_port
    from telic.cli._connect import http_client as http_client
    from telic.cli._connect import http_server as http_server
    from telic.cli._connect import stdio_parameters as stdio_parameters
    from telic.cli._demo import DemoOutcome as DemoOutcome
    from telic.cli._demo import DemoRepository as DemoRepository
    from telic.cli._demo import find_demo_repo as find_demo_repo
    from telic.cli._demo import run_demo as run_demo
    from telic.cli._entry import main as main
    from telic.cli._host import MODES as MODES
    from telic.cli._host import Change as Change
    from telic.cli._host import RunDriver as RunDriver
    from telic.cli._host import TelicCallError as TelicCallError
    from telic.cli._host import TelicTools as TelicTools
    from telic.cli._host import Workspace as Workspace
    from telic.cli._host import drive_mode as drive_mode

__all__ = [
    "MODES",
    "Bodies",
    "Change",
    "DemoOutcome",
    "DemoRepository",
    "RunDriver",
    "TelicCallError",
    "TelicTools",
    "Workspace",
    "criterion",
    "drive_mode",
    "find_demo_repo",
    "free_port",
    "http_client",
    "http_server",
    "main",
    "permissions",
    "run_demo",
    "stdio_parameters",
    "verification",
]

_EXPORTS: typing.Final = {
    "telic.cli._bodies": (
        "Bodies",
        "criterion",
        "permissions",
        "verification",
    ),
    "telic.cli._connect": (
        "free_port",
        "http_client",
        "http_server",
        "stdio_parameters",
    ),
    "telic.cli._demo": (
        "DemoOutcome",
        "DemoRepository",
        "find_demo_repo",
        "run_demo",
    ),
    "telic.cli._host": (
        "MODES",
        "Change",
        "RunDriver",
        "TelicCallError",
        "TelicTools",
        "Workspace",
        "drive_mode",
    ),
    "telic.cli._entry": ("main",),
}
"""Where each exported name lives: loaded on first use, so importing one module of
this package does not import them all."""

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(__name__, _EXPORTS, globals())
