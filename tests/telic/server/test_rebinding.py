"""Every HTTP route of ``telic serve --http`` answers only loopback (or allowed) Host and Origin
headers: a page rebound to 127.0.0.1 reads neither the MCP endpoint nor the reports."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from telic.ledger import Ledger, open_ledger
from telic.roles import Service
from telic.server._app import assemble
from telic.server._config import HttpBinding, ServerConfig
from telic.server._transport import http_app
from tests.telic.reports.recorded import completed

pytestmark = pytest.mark.anyio


async def _no_service() -> Service:
    raise AssertionError("no tool is called here")


def _client(
    ledger: Ledger, *, token: str | None = None, extra: tuple[str, ...] = ()
) -> httpx2.AsyncClient:
    config = ServerConfig(
        repository_root=Path("/nonexistent-repo"),
        http=HttpBinding("127.0.0.1", 8765),
        token=token,
        allowed_hosts=extra,
    )
    app = http_app(assemble(_no_service, schemas="once"), config, ledger)
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765"
    )


async def test_a_foreign_host_reads_no_report_of_a_tokenless_server() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        async with _client(ledger) as client:
            own = await client.get("/runs/")
            assert own.status_code == 200
            assert run_id in own.text
            for path in ("/runs/", "/runs", f"/runs/{run_id}", f"/runs/{run_id}?format=md"):
                refused = await client.get(path, headers={"Host": "evil.example"})
                assert refused.status_code == 421, path
                assert run_id not in refused.text
                assert "Host" in refused.text
            mcp = await client.post("/mcp", json={}, headers={"Host": "evil.example:8765"})
            assert mcp.status_code == 421


async def test_a_foreign_origin_is_refused_on_every_route_and_a_loopback_one_is_not() -> None:
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        async with _client(ledger) as client:
            evil = {"Origin": "http://evil.example"}
            for path in ("/runs/", f"/runs/{run_id}?format=md"):
                refused = await client.get(path, headers=evil)
                assert refused.status_code == 403, path
                assert run_id not in refused.text
            own = await client.get(
                f"/runs/{run_id}?format=md", headers={"Origin": "http://127.0.0.1:8765"}
            )
            assert own.status_code == 200
            assert run_id in own.text


async def test_the_host_check_comes_before_the_token_and_allowed_hosts_pass_both() -> None:
    async with open_ledger("memory://") as ledger:
        await completed(ledger)
        token = {"Authorization": "Bearer s3cret"}
        async with _client(ledger, token="s3cret", extra=("telic.internal",)) as client:
            rebound = await client.get("/runs/", headers=token | {"Host": "evil.example"})
            assert rebound.status_code == 421
            allowed = await client.get("/runs/", headers=token | {"Host": "telic.internal:80"})
            assert allowed.status_code == 200
            assert (await client.get("/runs/")).status_code == 401


@pytest.mark.parametrize(
    ("header", "value", "status"),
    [
        ("Host", "127.0.0.1:80.evil.example", 421),
        ("Host", "localhost:8765@evil.example", 421),
        ("Host", "127.0.0.1:", 421),
        ("Host", "127.0.0.1:8765 evil", 421),
        ("Origin", "http://127.0.0.1:80.evil.example", 403),
        ("Origin", "http://localhost:8765/evil", 403),
    ],
)
async def test_a_header_matching_an_allowed_host_only_by_prefix_is_refused(
    header: str, value: str, status: int
) -> None:
    # Issue 28, item 7: the SDK matches ``host:*`` by prefix (``127.0.0.1:`` then anything).
    async with open_ledger("memory://") as ledger:
        run_id = await completed(ledger)
        async with _client(ledger) as client:
            refused = await client.get(f"/runs/{run_id}?format=md", headers={header: value})
            assert refused.status_code == status
            assert run_id not in refused.text
            own = await client.get(f"/runs/{run_id}?format=md", headers={"Host": "127.0.0.1:8765"})
            assert own.status_code == 200
