"""A writer's canonical bytes are stored as given, and only for the body they were made from."""

from __future__ import annotations

import dataclasses

import pytest
from ledgerkit import artifact, event, start, step

from telic._errors import UsageError
from telic.ledger import CanonicalBody, open_ledger
from telic.protocol._canonical import canonical_json, canonical_sha256

pytestmark = pytest.mark.anyio

BODY = {"schemaVersion": "1.0", "id": "ev-1", "runId": "run-1", "score": 0.25, "n": 1e21}


def test_a_canonical_body_carries_the_canonical_bytes_and_digest_of_its_body() -> None:
    given = CanonicalBody(BODY)

    assert given.body is BODY
    assert given.data == canonical_json(BODY)
    assert given.sha256 == canonical_sha256(BODY)


async def test_given_canonical_bytes_are_stored_as_the_body(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        new = artifact("ev-1", body=BODY, canonical=CanonicalBody(BODY))
        commit = await ledger.store_supporting("run-1", new, [event("evidence_captured")])

        stored = await ledger.read_artifact("run-1", "ev-1")
        assert stored.canonical == canonical_json(BODY)
        assert stored.record.sha256 == commit.artifacts[0].sha256 == canonical_sha256(BODY)
        assert (await ledger.verify_run("run-1")).ok


async def test_canonical_bytes_of_another_body_are_refused_and_nothing_is_written(
    ledger_url: str,
) -> None:
    other = {**BODY, "score": 0.5}
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        before = await ledger.get_run("run-1")
        mismatched = artifact("ev-1", body=BODY, canonical=CanonicalBody(other))

        with pytest.raises(UsageError, match="not computed from its body"):
            await ledger.store_supporting("run-1", mismatched, [event("evidence_captured")])
        with pytest.raises(UsageError, match="not computed from its body"):
            await step(ledger, "run-1", 1, [mismatched], [event()])

        assert await ledger.get_run("run-1") == before
        assert [a.artifact_id for a in await ledger.list_artifacts("run-1")] == [
            "run-1-request",
            "run-1",
        ]


async def test_canonical_bytes_that_do_not_match_their_digest_are_refused(
    ledger_url: str,
) -> None:
    forged = CanonicalBody(BODY)
    object.__setattr__(forged, "data", canonical_json({**BODY, "score": 0.5}))
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        before = await ledger.get_run("run-1")

        with pytest.raises(UsageError, match="not computed from its body"):
            await ledger.store_supporting(
                "run-1", artifact("ev-1", body=BODY, canonical=forged), [event()]
            )
        assert await ledger.get_run("run-1") == before


def test_a_new_artifact_compares_without_its_canonical_form() -> None:
    plain = artifact("ev-1", body=BODY)
    assert dataclasses.replace(plain, canonical=CanonicalBody(BODY)) == plain
