"""``telic demo`` and the scripted host behind it (rank 6): no model, only the public tools.

``drive_mode``, ``RunDriver`` and ``TelicTools`` drive complete runs through a connected Telic
server, with ``Bodies`` standing in for the host's model; ``stdio_parameters``,
``http_server`` and ``http_client`` spawn ``telic serve`` and connect the official MCP client;
``run_demo`` plays the whole analyze_and_fix run on the bundled repository. The server never
imports this package: it is a client of the product, kept beside it so that ``telic demo``, the
examples, the benchmarks and the tests share one host.
"""

from __future__ import annotations

from telic.demo._bodies import (
    Bodies as Bodies,
    criterion as criterion,
    permissions as permissions,
    verification as verification,
)
from telic.demo._connect import (
    free_port as free_port,
    http_client as http_client,
    http_server as http_server,
    stdio_parameters as stdio_parameters,
)
from telic.demo._demo import (
    DemoOutcome as DemoOutcome,
    DemoRepository as DemoRepository,
    find_demo_repo as find_demo_repo,
    print_demo as print_demo,
    run_demo as run_demo,
)
from telic.demo._host import (
    MODES as MODES,
    Change as Change,
    RunDriver as RunDriver,
    TelicCallError as TelicCallError,
    TelicTools as TelicTools,
    Workspace as Workspace,
    close_fix as close_fix,
    drive_mode as drive_mode,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
