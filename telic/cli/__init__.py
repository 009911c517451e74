"""The ``telic`` command line (rank 7): serve, demo, inspect runs, verify, doctor.

``main`` is the console script. ``drive_mode`` and ``TelicTools`` are the scripted MCP host the
demo and the examples use: they reach Telic only through its public tools over the official
MCP client, exactly as a real host does.
"""

from __future__ import annotations

from telic._lazy import lazy_facade as _lazy_facade

TYPE_CHECKING = False  # not ``typing``'s: the resident shim's path imports no ``typing``

if TYPE_CHECKING:
    from telic.cli._bodies import (
        Bodies as Bodies,
        criterion as criterion,
        permissions as permissions,
        verification as verification,
    )
    from telic.cli._connect import (
        free_port as free_port,
        http_client as http_client,
        http_server as http_server,
        stdio_parameters as stdio_parameters,
    )
    from telic.cli._demo import (
        DemoOutcome as DemoOutcome,
        DemoRepository as DemoRepository,
        find_demo_repo as find_demo_repo,
        run_demo as run_demo,
    )
    from telic.cli._entry import main as main
    from telic.cli._host import (
        MODES as MODES,
        Change as Change,
        RunDriver as RunDriver,
        TelicCallError as TelicCallError,
        TelicTools as TelicTools,
        Workspace as Workspace,
        drive_mode as drive_mode,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
del TYPE_CHECKING  # not an export
