"""The ``telic`` command line (rank 7): serve, demo, inspect runs, verify, doctor.

``main`` is the console script. ``drive_mode`` and ``TelicTools`` are the scripted MCP host the
demo and the examples use: they reach Telic only through its public tools over the official
MCP client, exactly as a real host does.
"""

from __future__ import annotations

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
from telic.cli._host import MODES as MODES
from telic.cli._host import Change as Change
from telic.cli._host import RunDriver as RunDriver
from telic.cli._host import TelicCallError as TelicCallError
from telic.cli._host import TelicTools as TelicTools
from telic.cli._host import Workspace as Workspace
from telic.cli._host import drive_mode as drive_mode
from telic.cli._main import main as main

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
