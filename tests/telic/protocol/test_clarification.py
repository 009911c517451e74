"""ClarificationRequest: golden body, round trip, and one negative test per rule."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from telic.protocol._canonical import canonical_sha256
from telic.protocol._clarification import ClarificationRequest
from tests.telic.protocol.bodies import error_type, load_golden, with_change


def golden() -> dict[str, Any]:
    return load_golden("ClarificationRequest")


def choice(
    n: int, authority: str = "within_current_authority", run: str = "resume"
) -> dict[str, Any]:
    return {
        "id": f"choice-{n}",
        "label": f"Option {n}",
        "consequence": f"Consequence number {n}.",
        "authorityEffect": authority,
        "runEffect": run,
    }


def user_owned(choices: list[dict[str, Any]]) -> dict[str, Any]:
    body = golden()
    body.update(
        reason="user_owned_materially_divergent",
        permissionExpansionRequired=False,
        responseChoices=choices,
    )
    return body


def rejected_with(body: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as exc:
        ClarificationRequest.from_wire(body)
    return error_type(exc)


# --------------------------------------------------------------------------------- golden


def test_golden_request_validates_round_trips_and_keeps_its_digest() -> None:
    body = golden()
    request = ClarificationRequest.from_wire(body)
    assert request.to_wire() == body
    assert ClarificationRequest.from_wire(request.to_wire()) == request
    assert canonical_sha256(request.to_wire()) == canonical_sha256(body)


def test_request_dumps_camel_case() -> None:
    wire = ClarificationRequest.from_wire(golden()).to_wire()
    assert {"evidenceInspected", "responseChoices", "permissionExpansionRequired"} <= wire.keys()
    assert {"authorityEffect", "runEffect"} <= wire["responseChoices"][0].keys()


def test_user_owned_request_within_current_authority_is_accepted() -> None:
    body = user_owned([choice(1), choice(2, run="cancel")])
    assert ClarificationRequest.from_wire(body).reason == "user_owned_materially_divergent"


def test_clarification_with_eight_choices_is_accepted() -> None:
    body = user_owned([choice(n) for n in range(1, 9)])
    assert len(ClarificationRequest.from_wire(body).response_choices) == 8


# --------------------------------------------------------------------------------- choices


def test_clarification_with_one_choice_is_rejected() -> None:
    assert rejected_with(user_owned([choice(1)])) == "too_short"


def test_clarification_with_nine_choices_is_rejected() -> None:
    assert rejected_with(user_owned([choice(n) for n in range(1, 10)])) == "too_long"


def test_clarification_with_duplicate_choice_ids_is_rejected() -> None:
    body = user_owned([choice(1), {**choice(2), "id": "choice-1"}])
    assert rejected_with(body) == "clarification_duplicate_choice_id"


def test_clarification_with_duplicate_consequences_is_rejected() -> None:
    body = user_owned([choice(1), {**choice(2), "consequence": "Consequence number 1."}])
    assert rejected_with(body) == "clarification_duplicate_consequence"


@pytest.mark.parametrize(
    ("authority", "run"),
    [
        ("requires_new_run", "resume"),
        ("requires_new_run", "cancel"),
        ("within_current_authority", "new_run"),
    ],
)
def test_choice_may_require_a_new_run_only_when_it_starts_one(authority: str, run: str) -> None:
    body = with_change(golden(), "responseChoices.2", choice(3, authority, run))
    assert rejected_with(body) == "clarification_new_run_mismatch"


# --------------------------------------------------------------------------------- reasons


@pytest.mark.parametrize(
    ("reason", "flag"),
    [("permission_expanding", False), ("user_owned_materially_divergent", True)],
)
def test_expansion_flag_must_match_the_reason(reason: str, flag: bool) -> None:
    body = golden()
    body.update(reason=reason, permissionExpansionRequired=flag)
    assert rejected_with(body) == "clarification_flag_mismatch"


def test_user_owned_clarification_offering_a_new_run_is_rejected() -> None:
    body = user_owned([choice(1), choice(2, "requires_new_run", "new_run")])
    assert rejected_with(body) == "clarification_user_owned_needs_current_authority"


@pytest.mark.parametrize(
    "choices",
    [
        [choice(1, run="cancel"), choice(2, "requires_new_run", "new_run")],
        [choice(1), choice(2, run="cancel")],
        [choice(1, "requires_new_run", "new_run"), choice(2, "requires_new_run", "new_run")],
    ],
    ids=["no-bounded-resume", "no-new-run", "only-new-runs"],
)
def test_permission_expanding_clarification_needs_resume_and_new_run_choices(
    choices: list[dict[str, Any]],
) -> None:
    assert rejected_with(with_change(golden(), "responseChoices", choices)) == (
        "clarification_permission_choices_missing"
    )


# --------------------------------------------------------------------------------- fields


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("hiddenChainOfThought", "thoughts", "extra_forbidden"),
        ("responseChoices.0.default", True, "extra_forbidden"),
        ("schemaVersion", "2.0", "literal_error"),
        ("reason", "curiosity", "literal_error"),
        ("evidenceInspected", [], "too_short"),
        ("evidenceInspected", ["artifact://run/x"] * 257, "too_long"),
        ("blockedBoundary", "b" * 256, "string_too_long"),
        ("question", "", "string_too_short"),
        ("responseConstraints", "c" * 4097, "string_too_long"),
        ("responseChoices.0.label", "l" * 256, "string_too_long"),
        ("responseChoices.0.runEffect", "pause", "literal_error"),
        ("responseChoices.0.authorityEffect", "expands_authority", "literal_error"),
        ("permissionExpansionRequired", "true", "bool_type"),
    ],
)
def test_request_breaking_a_field_rule_is_rejected(path: str, value: object, code: str) -> None:
    assert rejected_with(with_change(golden(), path, value)) == code


def test_snake_case_keys_on_the_wire_are_refused() -> None:
    body = golden()
    body["response_choices"] = body.pop("responseChoices")
    with pytest.raises(ValidationError) as exc:
        ClarificationRequest.from_wire(body)
    assert {e["type"] for e in exc.value.errors()} == {"missing", "extra_forbidden"}
