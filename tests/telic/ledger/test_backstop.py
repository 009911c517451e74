"""The ledger refuses to commit any record holding a likely secret, on every backend.

Each write path (a new run with its request and envelope, a phase step, a supporting artifact
such as a CastRecord, trace events alone) is tried with a secret planted in each kind of field
it stores. The refusal is a ``SecretRefused`` naming the record, the field path (object keys
no schema defines stand as ``(key)``) and the kind, never the text, and the ledger is exactly
as it was.
"""

from __future__ import annotations

from typing import Any

import pytest
from ledgerkit import artifact, event, run_record, start, step

from telic._errors import LedgerError
from telic._secrets import CLEAN_MEMO, first_secret_in
from telic.ledger import Ledger, NewArtifact, open_ledger
from telic.ledger._errors import SecretRefused
from tests.telic.secret_corpus import Planted, at_entry_points, corpus, git_credentials, npmrc

pytestmark = pytest.mark.anyio

PLANTED = {planted.name: planted for planted in (*corpus(), npmrc(), git_credentials())}


def _secret(name: str) -> Planted:
    return PLANTED[name]


async def _snapshot(ledger: Ledger, run_id: str = "run-1") -> tuple[Any, ...]:
    run = await ledger.get_run(run_id)
    artifacts = await ledger.list_artifacts(run_id)
    trace = await ledger.page_trace(run_id, limit=1000)
    return run, artifacts, trace.events


async def _refused(ledger: Ledger, planted: Planted, attempt: Any, path: str) -> None:
    """Run ``attempt``: it must raise ``SecretRefused`` at ``path`` and change nothing."""
    before = await _snapshot(ledger)
    with pytest.raises(SecretRefused) as caught:
        await attempt()
    error = caught.value
    assert isinstance(error, LedgerError)
    assert error.code == "ledger_secret_refused"
    assert f"({planted.kind}) at {path};" in error.message
    assert [issue.path for issue in error.issues] == [path]
    assert error.issues[0].rule == "LEDGER-NO-SECRETS"
    assert planted.secret not in str(error)
    assert all(planted.secret not in issue.message for issue in error.issues)
    assert await _snapshot(ledger) == before
    assert (await ledger.verify_run("run-1")).ok


def _request(run_id: str, content: str) -> NewArtifact:
    return artifact(
        f"{run_id}-request",
        "UserMessage",
        run_id=run_id,
        producer="user",
        body={
            "schemaVersion": "1.0",
            "id": f"{run_id}-request",
            "runId": run_id,
            "content": content,
        },
    )


def _envelope(run_id: str, **body: Any) -> NewArtifact:
    fields = {"schemaVersion": "1.0", "id": run_id, "runId": run_id, **body}
    return artifact(run_id, "RunEnvelope", run_id=run_id, producer="controller", body=fields)


CREATE_CASES = [
    pytest.param("request", "artifacts.0.body.content", "github-classic-pat", id="request-text"),
    pytest.param("envelope", "artifacts.1.body.(key).0", "aws-access-key-id", id="envelope"),
    pytest.param("root", "run.repository_root", "url-credentials", id="repository-root"),
    pytest.param("state", "run.controller_state.(key).0", "slack-bot-token", id="run-state"),
]


@pytest.mark.parametrize(("where", "path", "name"), CREATE_CASES)
async def test_a_new_run_holding_a_secret_is_not_created(
    ledger_url: str, where: str, path: str, name: str
) -> None:
    planted = _secret(name)
    text = planted.text
    request = _request("run-2", text if where == "request" else "fix the flaky test")
    envelope = _envelope("run-2", grants=[text] if where == "envelope" else ["read:**"])
    changes: dict[str, Any] = {}
    if where == "root":
        changes["repository_root"] = f"/srv/{text}"
    if where == "state":
        changes["controller_state"] = {"notes": [text]}
    run = run_record("run-2", **changes)
    first = event("run_started", decision_summary="started")
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)

        async def attempt() -> None:
            await ledger.create_run(run, request, envelope, [first])

        await _refused(ledger, planted, attempt, path)
        assert [summary.run_id for summary in await ledger.list_runs()] == ["run-1"]


STEP_CASES = [
    pytest.param("body", "artifacts.0.body.knownFacts.1.claim", "openai-project-key", id="body"),
    pytest.param("key", "artifacts.0.body.knownFacts.(key)", "google-api-key", id="object-key"),
    pytest.param("refs", "artifacts.0.source_refs.1", "url-query-token", id="source-refs"),
    pytest.param("id", "artifacts.0.artifact_id", "github-server", id="artifact-id"),
    pytest.param("state", "run.controller_state.(key)", "jwt", id="run-state"),
    pytest.param("nested", "artifacts.0.body.content", "base64-wrapped-pem", id="base64"),
]


@pytest.mark.parametrize(("where", "path", "name"), STEP_CASES)
async def test_a_phase_step_holding_a_secret_is_not_committed(
    ledger_url: str, where: str, path: str, name: str
) -> None:
    planted = _secret(name)
    text = planted.text
    facts: list[Any] = [{"claim": "the test is flaky"}, {"claim": "it fails on CI"}]
    body: dict[str, Any] = {"schemaVersion": "1.0", "id": "frame-1", "runId": "run-1"}
    if where == "body":
        facts[1]["claim"] = f"the log shows {text}"
    if where == "key":
        body["knownFacts"] = {text: "seen in the log"}
    else:
        body["knownFacts"] = facts
    if where == "nested":
        body["content"] = text
    frame_id = text if where == "id" else "frame-1"
    refs = ("artifact://run-1/request", text if where == "refs" else "repo://src/app.py")
    frame = artifact(frame_id, "ProblemFrame", body=body, source_refs=refs)
    decision = {"decision": "allow", "capability": "file.read", "scope": "src/app.py"}
    checked = event("permission_checked", permission_decision=decision)
    state = {"last": text} if where == "state" else {"step": 2}
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        new_run = run_record("run-1", 2, updated=1, controller_state=state)

        async def attempt() -> None:
            await ledger.commit_step("run-1", 1, new_run, [frame], [checked])

        await _refused(ledger, planted, attempt, path)
        await step(ledger, "run-1", 1, [artifact("frame-1")], [event()])  # the run goes on


SUPPORTING_CASES = [
    pytest.param("cast-types", "artifacts.0.body.castTypes.0", "sendgrid-key", id="cast-types"),
    pytest.param("producer", "artifacts.0.producer", "slack-webhook", id="producer"),
    pytest.param("input-refs", "events.0.input_refs.0", "git-credentials", id="event-refs"),
]


@pytest.mark.parametrize(("where", "path", "name"), SUPPORTING_CASES)
async def test_a_supporting_artifact_holding_a_secret_is_not_stored(
    ledger_url: str, where: str, path: str, name: str
) -> None:
    planted = _secret(name)
    text = planted.text
    cast_types = [text if where == "cast-types" else "explore"]
    policy = artifact(
        "cast-policy",
        "CastPolicy",
        body={"castTypes": cast_types},
        producer=text if where == "producer" else "controller",
    )
    refs = (text,) if where == "input-refs" else ("artifact://run-1/cast-policy",)
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)

        async def attempt() -> None:
            await ledger.store_supporting("run-1", policy, [event("cast_started", input_refs=refs)])

        await _refused(ledger, planted, attempt, path)


EVENT_CASES = [
    pytest.param("budget", "events.1.budget_snapshot.(key)", "gitlab-pat", id="budget-snapshot"),
    pytest.param("output", "events.1.output_refs.0", "docker-config-auths", id="output-refs"),
    pytest.param("phase", "events.1.phase", "aws-session-key-id", id="phase"),
]


@pytest.mark.parametrize(("where", "path", "name"), EVENT_CASES)
async def test_trace_events_holding_a_secret_are_not_appended(
    ledger_url: str, where: str, path: str, name: str
) -> None:
    planted = _secret(name)
    text = planted.text
    changes: dict[str, Any] = {}
    if where == "budget":
        changes["budget_snapshot"] = {"note": text}
    if where == "output":
        changes["output_refs"] = (text,)
    if where == "phase":
        changes["phase"] = text
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)

        async def attempt() -> None:
            await ledger.record_events("run-1", [event("noted"), event("noted", **changes)])

        await _refused(ledger, planted, attempt, path)


@pytest.mark.parametrize("planted", at_entry_points(), ids=lambda p: p.name)
async def test_a_planted_secret_is_refused_in_an_artifact_body(
    planted: Planted, anyio_backend: str
) -> None:
    body = {"schemaVersion": "1.0", "id": "ev-1", "runId": "run-1", "content": planted.text}
    async with open_ledger("memory://") as ledger:
        await start(ledger)

        async def attempt() -> None:
            await ledger.store_supporting("run-1", artifact("ev-1", body=body), [])

        await _refused(ledger, planted, attempt, "artifacts.0.body.content")


async def test_clean_records_are_stored_as_before(ledger_url: str) -> None:
    async with open_ledger(ledger_url) as ledger:
        await start(ledger)
        commit = await step(ledger, "run-1", 1, [artifact("frame-1")], [event()])
        assert commit.run.version == 2
        assert (await ledger.verify_run("run-1")).ok


def test_a_memoised_clean_string_never_hides_a_secret_beside_it() -> None:
    clean = "the flaky checkout test fails when the cache is cold " * 4
    planted = _secret("github-oauth")
    assert first_secret_in([("a", clean)]) is None  # now remembered as clean
    hit = first_secret_in([("a", clean), ("b", planted.text)])
    assert hit is not None
    assert hit[0] == "b"
    assert hit[1].kind == planted.kind


def test_a_string_holding_a_secret_is_never_remembered_as_clean() -> None:
    planted = _secret("stripe-live-secret")
    text = f"the deploy log printed {planted.text} before it failed"
    assert first_secret_in([("log", text)]) is not None
    assert CLEAN_MEMO.unknown([text]) == [text]
    assert first_secret_in([("log", text)]) is not None
