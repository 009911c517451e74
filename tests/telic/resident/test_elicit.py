"""A clarification put to the user through a resident session: the form crosses the shim."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from telic.controller import ELICITED_SUMMARY
from telic.demo import DemoRepository, TelicTools, stdio_parameters
from tests.telic.server.test_elicit import User, _ask, _to_framing

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The server is a subprocess; the client runs on asyncio."""
    return "asyncio"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_accepted_choice_crosses_a_resident_session(
    mode: str, repo: DemoRepository, state: Path, runtime: Path
) -> None:
    user = User("accept", "one_based")
    params = stdio_parameters(
        repo.root, state, env={"TELIC_RUNTIME_DIR": str(runtime)}, serve_args=["--resident"]
    )
    with anyio.fail_after(180):
        async with Client(params, mode=mode, elicitation_callback=user) as client:  # type: ignore[arg-type]
            tools = TelicTools(client)
            driver = await _to_framing(tools)
            answered = await _ask(tools, driver)
            trace = await tools.call("telic_get_trace", run_id=driver.run_id, limit=500)
    assert len(user.asked) == 1
    assert answered["elicitation"]["answered"] is True
    assert answered["run"]["status"] == "running"
    summaries = [e["rationaleSummary"] for e in trace["events"]]
    assert f"Clarification answered with resume {ELICITED_SUMMARY}" in summaries
