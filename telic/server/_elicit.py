"""Put an accepted ClarificationRequest to the user through the client's form (MCP elicitation).

When the client declared form elicitation, ``telic_submit_artifact`` of a ClarificationRequest
does not stop at storing it: the server asks the user the question, the choices as one
single-select field (each choice's label, its consequence in the message), and records the
answer the user picked exactly as ``clarification_response`` would, traced as chosen by the
user (``clarification_elicited``). Up to protocol 2025-11-25 the form goes out during the call;
on 2026-07-28 the call answers ``input_required`` and the client repeats it with the answer.
The result then carries the run after the answer and an ``elicitation`` key telling the host's
model what happened; on decline, cancel, or an answer that could not be recorded the run stays
awaiting clarification, as stored, and the ``elicitation`` key says so and what to do
(``docs/protocol.md`` §3.2, Clarification).

The form and the reading of the answer are pure functions; ``elicit_answer`` is the shell.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from telic._errors import TelicError, UsageError

if TYPE_CHECKING:
    from telic.controller import StepResult
    from telic.roles import Service
    from telic.server._tools import Payload


CHOICE_FIELD: Final = "choice"
"""The one field of the form: the id of the choice the user picked."""
INPUT_KEY: Final = "telic_clarification"
"""The key of the form among a 2026-07-28 ``input_required`` result's ``inputRequests``."""
_STATE: Final = "telic.clarification.v1"

Action = Literal["accept", "decline", "cancel", "failed"]


@dataclass(frozen=True, slots=True)
class Elicited:
    """What the client answered: the user's action and, on accept, the form's content.

    ``failed``: the client answered the request with an error, or not at all (``problem``).
    """

    action: Action
    content: Mapping[str, object] | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Pending:
    """The clarification a form answers: the run, its version and action id, the request."""

    run_id: str
    version: int
    action_id: str
    request_id: str

    def state(self) -> str:
        """The ``requestState`` of a 2026-07-28 ``input_required`` result."""
        fields = [_STATE, self.run_id, self.version, self.action_id, self.request_id]
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def from_state(cls, text: str) -> Pending | None:
        """The pending clarification a client echoed back, or None if Telic wrote no such state.

        The state is the client's to echo and so not trusted: it only says which clarification
        the repeated call answers, and the controller checks its tokens like any answer's.
        """
        try:
            fields = json.loads(text)
        except ValueError:
            return None
        if not (isinstance(fields, list) and len(fields) == 5 and fields[0] == _STATE):
            return None
        _, run_id, version, action_id, request_id = fields
        texts = (run_id, action_id, request_id)
        if not all(isinstance(f, str) and 0 < len(f) <= 256 for f in texts):
            return None
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            return None
        return cls(run_id, version, action_id, request_id)


class InputRequired(Exception):
    """A 2026-07-28 ``ask``: the call answers with this ``input_required`` result instead."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("input required")
        self.result = result


Ask = Callable[[str, dict[str, Any], Pending], Awaitable[Elicited]]
"""Put one form (message, requested schema) to the caller's user, for the ``Pending`` answer."""


def clarification_form(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The message and requested schema that put a ClarificationRequest body to the user."""
    choices = _choices(body)
    lines = [str(body.get("question", "")).strip(), ""]
    lines += [f"- {c.get('label', '')}: {c.get('consequence', '')}" for c in choices]
    schema = {
        "type": "object",
        "properties": {
            CHOICE_FIELD: {
                "type": "string",
                "title": "Your answer",
                "description": "Pick one; the list above says what each choice leads to.",
                "oneOf": [
                    {"const": str(c.get("id")), "title": str(c.get("label"))} for c in choices
                ],
            }
        },
        "required": [CHOICE_FIELD],
    }
    return "\n".join(lines).strip(), schema


def read_answer(answer: Elicited, choice_ids: Sequence[str]) -> str | None:
    """The offered choice id the user picked, or None (declined, cancelled, or not a choice)."""
    if answer.action != "accept" or answer.content is None:
        return None
    picked = answer.content.get(CHOICE_FIELD)
    return picked if isinstance(picked, str) and picked in choice_ids else None


def _note(action: str, picked: str | None, recorded: bool, problem: str | None) -> str:
    if recorded:
        return (
            f"The user answered this clarification directly in the client's form ({picked!r}); "
            "do not ask it again. Continue with nextAction; when the run resumed, the phase's "
            "next artifact cites requestRef and answerRef in its sourceRefs."
        )
    if picked is not None:
        why = f"The user's choice {picked!r} could not be recorded ({problem})"
    elif action == "failed":
        why = f"The client's form could not be shown ({problem})"
    else:
        why = {
            "decline": "The user declined to answer in the client's form",
            "cancel": "The user dismissed the client's form without answering",
        }.get(action, "The client's form did not return one of the offered choices")
    return (
        f"{why}; the run still awaits the clarification. Ask the user in your own words and "
        "answer with clarification_response, or cancel the run if the user wants to stop."
    )


async def elicit_answer(
    service: Service, ask: Ask, run_id: str, asked: StepResult, payload: Payload
) -> Payload:
    """Ask the user the question ``asked`` left pending; return the payload to answer with.

    ``asked`` is the accepted ClarificationRequest's step, ``payload`` its result. Only an
    accepted, offered choice is recorded (as ``answer_clarification`` with ``elicited``); any
    other outcome leaves the run as ``asked`` left it and returns ``payload`` with the note.
    A 2026-07-28 ``ask`` raises ``InputRequired`` instead of answering: the client asks the
    user and repeats the call, which ``resume_answer`` finishes.
    """
    action = asked.next_action
    request_id = str(getattr(action, "clarification_request_ref", "")).rsplit("/", 1)[-1]
    request = await service.get_artifact(run_id, request_id)
    message, schema = clarification_form(request.body)
    pending = Pending(run_id, asked.run.version, action.id, request_id)
    answer = await ask(message, schema, pending)
    return await _record(service, pending, request.body, answer, payload)


async def resume_answer(
    service: Service, arguments: Mapping[str, object], pending: Pending, answer: Elicited
) -> Payload:
    """Finish the repeated call (``arguments``) of a 2026-07-28 client with the user's answer."""
    from telic.server._args import SubmitArgs

    args = SubmitArgs.model_validate(arguments)
    if args.run_id != pending.run_id or args.artifact_type != "ClarificationRequest":
        raise UsageError(
            "a call with requestState repeats the telic_submit_artifact call that returned it"
        )
    request = await service.get_artifact(pending.run_id, pending.request_id)
    if request.record.type != "ClarificationRequest":
        raise UsageError(
            "requestState names no ClarificationRequest of this run; repeat the original call "
            "with the requestState Telic returned"
        )
    details = await service.get_run(pending.run_id)
    payload: Payload = {"run": details.run, "nextAction": details.next_action}
    return await _record(service, pending, request.body, answer, payload)


async def _record(
    service: Service,
    pending: Pending,
    request: Mapping[str, Any],
    answer: Elicited,
    payload: Payload,
) -> Payload:
    run_id = pending.run_id
    request_ref = f"artifact://{run_id}/{pending.request_id}"
    picked = read_answer(answer, [str(c.get("id")) for c in _choices(request)])
    if picked is None:
        outcome = _outcome(answer.action, request_ref, problem=answer.problem)
        return payload | {"elicitation": outcome}
    try:
        answered = await service.answer_clarification(
            run_id, pending.action_id, pending.version, picked, elicited=True
        )
    except TelicError as refused:
        outcome = _outcome(answer.action, request_ref, picked=picked, problem=refused.code)
        return payload | {"elicitation": outcome}
    details = await service.get_run(run_id)
    messages = [a for a in details.artifacts if a.type == "UserMessage"]
    answer_ref = f"artifact://{run_id}/{messages[-1].artifact_id}"
    accepted = _outcome("accept", request_ref, picked=picked, answer_ref=answer_ref)
    resumed: Payload = {"run": answered.run, "nextAction": answered.next_action}
    if answered.draft is not None:  # the resumed phase's draft, as every step result carries
        resumed["draft"] = answered.draft
    return resumed | {"elicitation": accepted}


def _choices(body: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    choices = body.get("responseChoices")
    return choices if isinstance(choices, list) else []


def _outcome(
    action: str,
    request_ref: str,
    *,
    picked: str | None = None,
    answer_ref: str | None = None,
    problem: str | None = None,
) -> dict[str, object]:
    """The ``elicitation`` key: what the user did, what was recorded, what the host does next."""
    outcome: dict[str, object] = {
        "action": action,
        "answered": answer_ref is not None,
        "requestRef": request_ref,
    }
    if picked is not None:
        outcome["choiceId"] = picked
    if answer_ref is not None:
        outcome["answerRef"] = answer_ref
    if problem is not None:
        outcome["problem"] = problem
    outcome["note"] = _note(action, picked, answer_ref is not None, problem)
    return outcome
