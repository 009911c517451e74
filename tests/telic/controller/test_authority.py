"""The controller's run authorization: the permission algebra's answer, asked once per run."""

from __future__ import annotations

from dataclasses import replace

from telic.controller import _authority
from telic.controller._authority import run_authorization
from telic.controller._start import open_run
from telic.controller._state import RunState
from telic.permissions import effective_authorization


def _state(run_id: str, granted: tuple[str, ...] = ("repository.read",)) -> RunState:
    state, _ = open_run(
        run_id=run_id,
        message_id=f"{run_id}-request",
        now="2026-01-01T00:00:00.000Z",
        original_request="Fix the parser",
        mode="analyze_and_fix",
        repository_root="/repo",
        host_capabilities=("repository.read", "repository.write", "shell.inspect"),
        authorization_granted=granted,
    )
    return state


def _expected(state: RunState) -> object:
    grants = state.envelope.authorization
    return effective_authorization(state.run.mode, grants.granted, grants.denied)


def test_the_run_authorization_is_the_algebras_answer_for_the_runs_grants() -> None:
    reading, writing = _state("run-a"), _state("run-b", ("repository.read", "repository.write"))
    assert run_authorization(reading) == _expected(reading)
    assert run_authorization(writing) == _expected(writing)
    assert run_authorization(reading) != run_authorization(writing)


def test_every_state_of_a_run_shares_one_answer() -> None:
    state = _state("run-c")
    later = replace(state, run=replace(state.run, version=5))
    assert run_authorization(later) is run_authorization(state)


def test_the_kept_answers_are_bounded() -> None:
    for index in range(_authority._REMEMBERED + 10):
        run_authorization(_state(f"run-{index}"))
    assert len(_authority._authorizations) == _authority._REMEMBERED
