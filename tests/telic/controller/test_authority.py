"""The controller's run authorization: the permission algebra's answer, asked once per run."""

from __future__ import annotations

from dataclasses import replace

from telic.controller import _authority
from telic.controller._authority import decide, run_authorization
from telic.controller._start import StartRequest, open_run
from telic.controller._state import RunState
from telic.permissions import effective_authorization
from telic.protocol._types import PermissionSet, RepositoryPermissions


def _state(
    run_id: str,
    granted: tuple[str, ...] = ("repository.read",),
    protected: tuple[str, ...] = (),
) -> RunState:
    request = StartRequest(
        "Fix the parser",
        "analyze_and_fix",
        host_capabilities=("repository.read", "repository.write", "shell.inspect"),
        authorization_granted=granted,
        protected_paths_granted=protected,
    )
    state, _ = open_run(
        request,
        run_id=run_id,
        message_id=f"{run_id}-request",
        now="2026-01-01T00:00:00.000Z",
        repository_root="/repo",
    )
    return state


def _expected(state: RunState) -> object:
    grants = state.envelope.authorization
    return effective_authorization(state.run.requested_mode, grants.granted, grants.denied)


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


def test_a_node_writing_everything_reaches_protected_paths_only_through_the_users_grant() -> None:
    writing = ("repository.read", "repository.write")
    node = PermissionSet.empty().model_copy(
        update={"repository": RepositoryPermissions(read=["**"], write=["**"], delete=[])}
    )
    plain = _state("run-p", writing)
    hook = decide(plain, node, "repository.write", ".git/hooks/pre-commit")
    assert (hook.allowed, hook.deciding_layer, hook.code) == (False, "protected", "protected_path")
    assert decide(plain, node, "repository.write", "src/parser.py").allowed
    granted = _state("run-q", writing, (".git/hooks/pre-commit",))
    assert granted.envelope.authorization.protected_paths_granted == [".git/hooks/pre-commit"]
    assert decide(granted, node, "repository.write", ".git/hooks/pre-commit").allowed
    assert not decide(granted, node, "repository.write", ".git/config").allowed


def test_an_envelope_without_protected_grants_keeps_the_telic_1_0_wire_form() -> None:
    plain = _state("run-r").envelope.to_wire()["authorization"]
    assert set(plain) == {"granted", "denied"}
    granted = _state("run-s", ("repository.read", "repository.write"), (".env",))
    assert granted.envelope.to_wire()["authorization"]["protectedPathsGranted"] == [".env"]
