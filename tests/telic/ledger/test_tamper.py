"""Tamper evidence: bytes changed behind the ledger's back are caught on read and by verify_run."""

from __future__ import annotations

import pytest
from conftest import Sql
from ledgerkit import artifact, event, only, start, step

from telic._errors import IntegrityError
from telic.ledger import Ledger, open_ledger

pytestmark = pytest.mark.anyio


def flip(text: str, index: int = -1) -> str:
    """Flip the lowest bit of one character."""
    chars = list(text)
    chars[index] = chr(ord(chars[index]) ^ 1)
    return "".join(chars)


async def _populated(ledger: Ledger) -> None:
    await start(ledger)
    await step(ledger, "run-1", 1, [artifact("a-1"), artifact("a-2")], [event(), event()])
    await ledger.store_supporting("run-1", artifact("ev-1"), [event("evidence_captured")])


@only("sqlite", "postgres")
async def test_a_flipped_blob_byte_fails_the_read_and_is_named_by_verify(
    ledger_url: str, raw_sql: Sql
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        stored = await ledger.read_artifact("run-1", "a-2")
        data = bytearray(stored.canonical)
        data[5] ^= 1
        await raw_sql(
            "UPDATE blobs SET data = ? WHERE sha256 = ?", (bytes(data), stored.record.sha256)
        )
        with pytest.raises(IntegrityError, match="Artifact integrity check failed"):
            await ledger.read_artifact("run-1", "a-2")
        with pytest.raises(IntegrityError, match="Artifact integrity check failed"):
            await ledger.read_changes("run-1", after_artifact=2)
        await ledger.read_artifact("run-1", "a-1")  # the others still read
        await ledger.read_changes("run-1", after_artifact=4)  # and what follows the broken one
        report = await ledger.verify_run("run-1")
        assert not report.ok
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("artifact", "a-2")
        assert "digest" in report.first_broken.reason
        assert report.records_checked == 4  # request, envelope, run_started, a-1


@only("sqlite", "postgres")
async def test_a_deleted_body_fails_the_read_and_is_named_by_verify(
    ledger_url: str, raw_sql: Sql
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        digest = (await ledger.read_artifact("run-1", "ev-1")).record.sha256
        await raw_sql("DELETE FROM blobs WHERE sha256 = ?", (digest,))
        with pytest.raises(IntegrityError, match="the blob is missing"):
            await ledger.read_artifact("run-1", "ev-1")
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("artifact", "ev-1")
        assert report.first_broken.reason == "the blob is missing"


@only("sqlite", "postgres")
async def test_a_flipped_artifact_record_byte_fails_the_read_and_is_named_by_verify(
    ledger_url: str, raw_sql: Sql
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        await raw_sql(
            "UPDATE artifacts SET producer = ? WHERE run_id = ? AND artifact_id = ?",
            (flip("executor"), "run-1", "a-1"),
        )
        with pytest.raises(IntegrityError):
            await ledger.read_artifact("run-1", "a-1")
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("artifact", "a-1")
        assert "record hash" in report.first_broken.reason


@only("sqlite", "postgres")
async def test_a_flipped_trace_event_byte_is_named_by_verify(ledger_url: str, raw_sql: Sql) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        target = (await ledger.page_trace("run-1")).events[2]
        await raw_sql(
            "UPDATE trace_events SET decision_summary = ? WHERE run_id = ? AND event_id = ?",
            (flip("accepted", 0), "run-1", target.event_id),
        )
        with pytest.raises(IntegrityError, match="sequence 3"):
            await ledger.page_trace("run-1")
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("event", target.event_id)


@only("sqlite", "postgres")
async def test_a_corrupted_json_column_is_named_by_verify(ledger_url: str, raw_sql: Sql) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        await raw_sql(
            "UPDATE artifacts SET source_refs_json = ? WHERE run_id = ? AND artifact_id = ?",
            ('["artifact://run-1/request"', "run-1", "a-2"),
        )
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("artifact", "a-2")


@only("sqlite", "postgres")
async def test_a_removed_record_breaks_the_chain_at_the_next_one(
    ledger_url: str, raw_sql: Sql
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        await raw_sql(
            "DELETE FROM artifacts WHERE run_id = ? AND artifact_id = ?", ("run-1", "a-1")
        )
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("artifact", "a-2")
        assert "chain index" in report.first_broken.reason


@only("sqlite", "postgres")
async def test_a_removed_last_record_is_caught_by_the_run_head(
    ledger_url: str, raw_sql: Sql
) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        last = (await ledger.page_trace("run-1")).events[-1]
        await raw_sql("DELETE FROM trace_events WHERE event_id = ?", (last.event_id,))
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("run", "run-1")


@only("sqlite", "postgres")
async def test_lowered_run_counters_are_caught_by_verify(ledger_url: str, raw_sql: Sql) -> None:
    async with open_ledger(ledger_url) as ledger:
        await _populated(ledger)
        await raw_sql(
            "UPDATE runs SET artifact_count = 0, event_count = 0 WHERE run_id = ?", ("run-1",)
        )
        report = await ledger.verify_run("run-1")
        assert report.first_broken is not None
        assert (report.first_broken.kind, report.first_broken.id) == ("run", "run-1")
        assert report.records_checked == 9  # every stored record was still read and checked
        assert len(await ledger.list_artifacts("run-1")) == 5


def test_record_hashes_keep_the_format_stored_ledgers_were_sealed_with() -> None:
    # Each record hash covers every field but ``record_hash``, keyed in camelCase; a stored
    # ledger verifies only while that stays so, whatever the records grow.
    from telic.ledger import ArtifactRecord, TraceRecord
    from telic.ledger._chain import artifact_hash, event_hash

    record = ArtifactRecord(
        run_id="r1",
        artifact_id="a1",
        type="Evidence",
        schema_version="1.0",
        producer="p",
        sha256="sha256:" + "0" * 64,
        size_bytes=12,
        source_refs=("x", "y"),
        redaction="none",
        quota_key=None,
        created_at="2026-05-20T12:00:00.000Z",
        position=1,
        chain_index=1,
        previous_hash="sha256:ab",
        record_hash="",
    )
    trace = TraceRecord(
        event_id="e1",
        run_id="r1",
        sequence=1,
        timestamp="2026-05-20T12:00:00.000Z",
        actor="a",
        phase="p",
        event_type="t",
        input_refs=("i",),
        output_refs=(),
        permission_decision={"decision": "allow", "n": [1, 2]},
        decision_summary="s",
        budget_snapshot={"x": 1},
        chain_index=2,
        previous_hash="sha256:cd",
        record_hash="zz",
    )

    assert artifact_hash(record) == (
        "sha256:43bf7c0359039c61ee8b0e57d9b7c80f1d0cd7c681ed14a280c0a061754febea"
    )
    assert event_hash(trace) == (
        "sha256:ad93efda82252232a4656e624321374b57ccdd8b7b7f0e32a6b6ef082036017a"
    )
