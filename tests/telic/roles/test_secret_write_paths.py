"""No secret reaches the ledger by any write path, on SQLite and PostgreSQL (issue 28, item 3).

Each write path a host can drive — a tool's traced decision (``telic_check_tool_action``), the
``telic hook`` command's direct SQLite write, grounding, casting and a child's return — is given
a secret fresh on every run; afterwards nothing in the ledger (every artifact body, record and
trace event) holds it. Reports read the ledger and write files only: they have no write path in.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest

from telic._errors import SecretDetected
from telic.hosts import host_hook
from telic.ledger import Ledger, open_ledger
from telic.roles import Service, open_service
from tests.telic.fresh_secrets import NAMES, fresh
from tests.telic.ledger.conftest import postgres_url  # noqa: F401 - the shared fixture

from .kit import EXPLORE, ROUTING, ServiceFlow, clock_from, fake_grounder, good_return, ids_from

pytestmark = pytest.mark.anyio

STORES = [
    pytest.param("sqlite", "asyncio", id="sqlite-asyncio"),
    pytest.param("sqlite", "trio", id="sqlite-trio"),
    pytest.param("postgres", "asyncio", id="postgres-asyncio", marks=pytest.mark.postgres),
]


@pytest.fixture
def store_url(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "sqlite":
        return f"sqlite://{tmp_path / 'state' / 'ledger.sqlite3'}"
    url: str = request.getfixturevalue("postgres_url")  # fails in CI when unset
    return url


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "retry.py").write_text("MAX_RETRIES = 5\n")
    return repo


@asynccontextmanager
async def _service(
    url: str, repo: Path, tmp_path: Path, *, grounder: Any = fake_grounder
) -> AsyncIterator[tuple[Service, Ledger]]:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    async with (
        open_ledger(url, repository_root=repo) as ledger,
        open_service(
            ledger=ledger,
            repository_root=str(repo),
            state_dir=state,
            clock=clock_from(),
            new_id=ids_from("run"),
            grounder=grounder,
        ) as service,
    ):
        yield service, ledger


async def _everything(ledger: Ledger, run_id: str) -> str:
    """Every stored string of a run: its row, each artifact's record and body, its trace."""
    parts: list[str] = [repr(await ledger.get_run(run_id))]
    for record in await ledger.list_artifacts(run_id):
        body = await ledger.read_artifact(run_id, record.artifact_id)
        parts += [repr(record), body.canonical.decode("utf-8")]
    parts += [repr(e) for e in (await ledger.page_trace(run_id, limit=10_000)).events]
    assert (await ledger.verify_run(run_id)).ok
    return "\n".join(parts)


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
@pytest.mark.parametrize("name", NAMES[:2])  # every kind is the detector's test (test_secrets.py)
async def test_a_tool_check_of_a_path_holding_a_secret_traces_it_redacted(
    store_url: str, tmp_path: Path, name: str
) -> None:
    planted = fresh(name)
    repo = _repository(tmp_path)
    async with _service(store_url, repo, tmp_path) as (service, ledger):
        flow = await ServiceFlow.start(service)
        decision = await service.check_tool_action(
            flow.b.run_id, "repository.read", f"config/{planted.text}.json"
        )
        stored = await _everything(ledger, flow.b.run_id)
    assert decision.scope == f"config/[redacted:{planted.kind}].json"
    assert planted.secret not in stored
    assert f"[redacted:{planted.kind}]" in stored


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(("tool", "name"), [("Read", NAMES[0]), ("Write", NAMES[1])])
async def test_the_hooks_direct_write_stores_a_secret_path_redacted(
    tmp_path: Path, tool: str, name: str
) -> None:
    planted = fresh(name)
    repo = _repository(tmp_path)
    url = f"sqlite://{tmp_path / 'state' / 'ledger.sqlite3'}"
    async with _service(url, repo, tmp_path) as (service, ledger):
        flow = await ServiceFlow.start(service)
        raw = json.dumps(
            {
                "session_id": "session-1",
                "cwd": str(repo),
                "hook_event_name": "PreToolUse",
                "tool_name": tool,
                "tool_input": {"file_path": f"{repo}/config/{planted.text}.json", "content": "x"},
            }
        ).encode()
        environ = {"TELIC_STATE_DIR": str(tmp_path / "state")}
        output = await anyio.to_thread.run_sync(
            lambda: host_hook("claude-code", raw, repository_root=str(repo), environ=environ)
        )
        stored = await _everything(ledger, flow.b.run_id)
    assert output is not None
    assert json.loads(output)["hookSpecificOutput"]["permissionDecision"] in ("allow", "deny")
    assert planted.secret not in stored
    assert f"config/[redacted:{planted.kind}].json" in stored


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_grounding_stores_no_secret_from_a_file_name_or_content(
    store_url: str, tmp_path: Path
) -> None:
    named, held = fresh("github"), fresh("stripe")
    repo = _repository(tmp_path)
    (repo / "src" / f"{named.text}.py").write_text("RETRIES = 3\n")
    (repo / "src" / "settings.py").write_text(f"STRIPE = '{held.text}'\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    async with _service(store_url, repo, tmp_path, grounder=None) as (service, ledger):
        flow = await ServiceFlow.start(service)
        await service.ground(
            flow.b.run_id,
            *flow.token(),
            active_paths=[f"src/{named.text}.py", "src/settings.py"],
        )
        stored = await _everything(ledger, flow.b.run_id)
    assert "MAX_RETRIES = 5" in stored  # grounding did store the clean file
    assert named.secret not in stored
    assert held.secret not in stored


@pytest.mark.parametrize(("store", "anyio_backend"), STORES)
async def test_a_cast_and_a_return_holding_a_secret_store_nothing(
    store_url: str, tmp_path: Path
) -> None:
    in_brief, in_return = fresh("slack"), fresh("aws")
    repo = _repository(tmp_path)
    async with _service(store_url, repo, tmp_path) as (service, ledger):
        flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
        await flow.to_execute()
        before = await _everything(ledger, flow.b.run_id)
        with pytest.raises(SecretDetected):
            await flow.cast(brief=f"Find the retry limit; the token is {in_brief.text}")
        assert await _everything(ledger, flow.b.run_id) == before
        admitted = await flow.cast()
        opened = await _everything(ledger, flow.b.run_id)
        with pytest.raises(SecretDetected):
            await service.return_packet(
                flow.b.run_id,
                admitted.cast_id,
                good_return(claim=f"the limit is 5 and the key is {in_return.text}"),
            )
        assert await _everything(ledger, flow.b.run_id) == opened
    assert in_brief.secret not in opened


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_cast_request_secret_is_refused_naming_its_argument_path(tmp_path: Path) -> None:
    secret = fresh("slack")
    repo = _repository(tmp_path)
    url = f"sqlite://{tmp_path / 'state' / 'ledger.sqlite3'}"
    async with _service(url, repo, tmp_path) as (service, _):
        flow = await ServiceFlow.start(service, cast_types=[EXPLORE])
        await flow.to_execute()
        refused: dict[str, str] = {}
        for where, over in {
            "brief": {"brief": f"Find the retry limit; the token is {secret.text}"},
            "routing.text": {"routing": {**ROUTING, "text": f"token {secret.text}"}},
            "routing.(key)": {"routing": {**ROUTING, "hint": f"token {secret.text}"}},
            "packetRefs.0": {"packet_refs": [f"pk_{secret.text}"]},
        }.items():
            with pytest.raises(SecretDetected) as caught:
                await flow.cast(**over)
            (issue,) = caught.value.issues
            assert (issue.path, issue.rule) == (where, "ANY-NO-SECRETS")
            refused[where] = str(caught.value)
    for where, message in refused.items():
        assert message.startswith("The cast request holds likely secret material (")
        assert message.endswith(f") at {where}; redact before submission")
        assert secret.secret not in message
