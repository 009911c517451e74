"""Evidence service rules through the driver: secrets, encoding, quota, replay and references."""

from __future__ import annotations

import base64

import pytest

from telic._errors import SecretDetected
from telic.ledger import open_ledger
from tests.telic.controller.builders import JSON, Flow
from tests.telic.controller.rules.harness import executing, refuse

pytestmark = pytest.mark.anyio

SECRETS = [
    "AKIA" + "Q3EXAMPLEKEY7ZZ9",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "-----BEGIN RSA " + "PRIVATE KEY-----",
    "password=" + "hunter2hunter2",
    "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0In0." + "c2lnbmF0dXJlX2hlcmU",
]


def _places(flow: Flow, secret: str) -> list[tuple[str, JSON, list[str]]]:
    b = flow.b
    encoded = base64.b64encode(f"log line\n{secret}\n".encode()).decode("ascii")
    return [
        ("content", b.evidence("ev-s") | {"content": f"output: {secret}"}, []),
        ("summary", b.evidence("ev-s") | {"summary": f"Saw {secret}"}, []),
        ("redactions", b.evidence("ev-s") | {"redactions": [secret]}, []),
        ("decoded", b.evidence("ev-s") | {"encoding": "base64", "content": encoded}, []),
        ("body sourceRef", b.evidence("ev-s") | {"sourceRefs": [f"repo://{secret}"]}, []),
        ("caller sourceRef", b.evidence("ev-s"), [f"trace://{b.run_id}/{secret}"]),
    ]


@pytest.mark.rule("EV-NO-SECRETS")
@pytest.mark.parametrize("secret", SECRETS, ids=["aws", "github", "pem", "password", "jwt"])
async def test_a_secret_anywhere_in_evidence_is_refused_and_never_echoed(secret: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        for _, body, refs in _places(flow, secret):
            error = await refuse(flow, "Evidence", body, refs, error=SecretDetected)
            assert "redact before submission" in error.message
            assert secret not in error.message
            assert all(secret not in str(issue) for issue in error.issues)
        await flow.submit("Evidence", flow.b.evidence("ev-s"))


@pytest.mark.parametrize(
    "placeholder", ["password=${DB_PASSWORD}", "token: <redacted>", "api_key=example-key-123"]
)
async def test_placeholders_are_not_secrets(placeholder: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        await flow.submit("Evidence", flow.b.evidence("ev-p") | {"content": placeholder})


@pytest.mark.rule("EV-CONTENT-CANONICAL")
@pytest.mark.parametrize("content", ["aGk", "aGk=\n", "aGl=", "not base64!"])
async def test_base64_content_must_be_canonical(content: str) -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        body = flow.b.evidence("ev-b") | {"encoding": "base64", "content": content}
        await refuse(flow, "Evidence", body)
        await flow.submit("Evidence", body | {"content": "aGk="})


@pytest.mark.rule("EV-QUOTA")
async def test_at_most_128_evidence_per_plan() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)  # evidence-1 is the first of the plan
        for n in range(2, 129):
            await flow.submit("Evidence", flow.b.evidence(f"evidence-{n}"))
        await refuse(flow, "Evidence", flow.b.evidence("evidence-129"))
        await flow.submit("Evidence", flow.b.evidence("evidence-128"))  # a replay still works


@pytest.mark.rule("REF-EXISTS")
async def test_evidence_source_refs_must_exist_in_the_run() -> None:
    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        body = flow.b.evidence("ev-r") | {"sourceRefs": [flow.b.uri("missing")]}
        await refuse(flow, "Evidence", body)
        await flow.submit("Evidence", body | {"sourceRefs": [flow.b.uri("plan-1")]})


async def test_an_identical_evidence_replay_is_idempotent_and_a_divergent_one_conflicts() -> None:
    from telic._errors import LedgerConflict

    async with open_ledger("memory://") as ledger:
        flow = await executing(ledger)
        first = await flow.controller.get_run(flow.b.run_id)
        await flow.submit("Evidence", flow.b.evidence())
        again = await flow.controller.get_run(flow.b.run_id)
        assert (again.run.version, again.artifacts) == (first.run.version, first.artifacts)
        await refuse(
            flow,
            "Evidence",
            flow.b.evidence() | {"content": "different"},
            error=LedgerConflict,
            rules=["ANY-ID-FRESH"],
        )
