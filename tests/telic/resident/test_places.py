"""Where a resident server lives: a private directory, keys that separate what must differ."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from telic.resident._places import (
    DEFAULT_IDLE_SECONDS,
    ResidentError,
    check_private,
    code_fingerprint,
    home_runtime_dir,
    idle_seconds,
    places_for,
    private_dir,
    runtime_dir,
)

ENV = {"TELIC_RUNTIME_DIR": "/run/t", "TELIC_STATE_DIR": "/s"}


def test_the_runtime_dir_prefers_the_override_then_xdg_then_a_per_user_tmp_dir() -> None:
    assert runtime_dir({"TELIC_RUNTIME_DIR": "/a", "XDG_RUNTIME_DIR": "/b"}) == "/a"
    assert runtime_dir({"XDG_RUNTIME_DIR": "/b"}) == "/b/telic"
    assert runtime_dir({}) == f"/tmp/telic-{os.getuid()}"


def _taken(tmp_path: Path, how: str) -> tuple[dict[str, str], Path]:
    """An environment whose default runtime directory someone else got to first."""
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    default = xdg / "telic"
    if how == "open to others":
        default.mkdir()
        default.chmod(0o755)
    elif how == "a symlink":
        (tmp_path / "theirs").mkdir(mode=0o700)
        default.symlink_to(tmp_path / "theirs")
    else:  # a file in the way
        default.write_text("")
    return {"XDG_RUNTIME_DIR": str(xdg), "HOME": str(tmp_path / "home")}, default


@pytest.mark.parametrize("how", ["open to others", "a symlink", "a file"])
def test_a_default_runtime_dir_someone_else_took_is_passed_over_for_the_home_one(
    tmp_path: Path, how: str
) -> None:
    env, _ = _taken(tmp_path, how)
    fallback = str(tmp_path / "home" / ".cache" / "telic" / "run")
    assert home_runtime_dir(env) == fallback
    assert runtime_dir(env) == fallback
    assert os.stat(private_dir(runtime_dir(env))).st_mode & 0o777 == 0o700
    assert runtime_dir({**env, "XDG_CACHE_HOME": str(tmp_path / "c")}) == str(
        tmp_path / "c" / "telic" / "run"
    )


def test_a_default_runtime_dir_owned_by_another_user_is_passed_over(tmp_path: Path) -> None:
    # No second user to be: the ownership check is asked for a uid that does not own it.
    xdg = tmp_path / "xdg"
    (xdg / "telic").mkdir(parents=True, mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(xdg), "HOME": str(tmp_path / "home")}
    other = os.getuid() + 1
    with pytest.raises(ResidentError, match=r"resident.runtime_dir: .* is owned by uid"):
        check_private(str(xdg / "telic"), uid=other)
    assert runtime_dir(env, uid=other) == str(tmp_path / "home" / ".cache" / "telic" / "run")
    assert runtime_dir(env) == str(xdg / "telic")  # ours: kept


def test_a_missing_default_is_kept_and_a_chosen_directory_is_never_passed_over(
    tmp_path: Path,
) -> None:
    env, default = _taken(tmp_path, "open to others")
    assert runtime_dir({**env, "XDG_RUNTIME_DIR": str(tmp_path / "none")}) == str(
        tmp_path / "none" / "telic"
    )
    assert runtime_dir({**env, "TELIC_RUNTIME_DIR": str(default)}) == str(default)
    # Without a home to fall back to, the default stays and is refused with the rule.
    assert runtime_dir({"XDG_RUNTIME_DIR": env["XDG_RUNTIME_DIR"]}) == str(default)
    assert runtime_dir({**env, "HOME": "relative"}) == str(default)


def test_a_missing_directory_is_created_private(tmp_path: Path) -> None:
    made = private_dir(tmp_path / "a" / "rt")
    assert os.path.isdir(made)
    assert os.stat(made).st_mode & 0o777 == 0o700


@pytest.mark.parametrize("mode", [0o750, 0o705, 0o777])
def test_a_directory_others_can_reach_is_refused(tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "rt"
    shared.mkdir()
    shared.chmod(mode)
    with pytest.raises(ResidentError, match=r"resident.runtime_dir: .* must be 0700"):
        private_dir(shared)


def test_a_symlink_or_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("")
    for name in ("link", "file"):
        with pytest.raises(ResidentError, match=r"resident.runtime_dir: .* not a directory"):
            private_dir(tmp_path / name)


def test_the_key_separates_repository_ledger_schema_mode_and_code() -> None:
    base = places_for("/r", "once", ENV, fingerprint="code-1")
    others = [
        places_for("/r2", "once", ENV, fingerprint="code-1"),
        places_for("/r", "full", ENV, fingerprint="code-1"),
        places_for("/r", "once", ENV, fingerprint="code-2"),
        places_for("/r", "once", {**ENV, "TELIC_STATE_DIR": "/t"}, fingerprint="code-1"),
        places_for("/r", "once", {**ENV, "TELIC_DATABASE_URL": "memory://"}, fingerprint="code-1"),
    ]
    assert len({p.socket for p in [base, *others]}) == 6
    assert base == places_for("/r", "once", dict(ENV), fingerprint="code-1")
    folders = {os.path.dirname(p) for p in (base.socket, base.hook_socket, base.lock, base.log)}
    assert folders == {"/run/t"}


def test_the_hook_socket_does_not_depend_on_the_schema_mode() -> None:
    once = places_for("/r", "once", ENV, fingerprint="c")
    full = places_for("/r", "full", ENV, fingerprint="c")
    assert once.hook_socket == full.hook_socket != once.socket
    assert once.hook_socket != places_for("/r", "once", ENV, fingerprint="d").hook_socket


def test_a_runtime_dir_too_deep_for_a_socket_path_is_refused() -> None:
    deep = {"TELIC_RUNTIME_DIR": "/" + "d" * 90}
    with pytest.raises(ResidentError, match=r"resident.socket_path: .* TELIC_RUNTIME_DIR"):
        places_for("/r", "once", deep, fingerprint="c")


def test_the_fingerprint_changes_when_a_module_is_edited(tmp_path: Path) -> None:
    package = Path(__file__).resolve().parents[3] / "telic" / "resident"
    copy = tmp_path / "pkg"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_fingerprint(copy)
    assert code_fingerprint(copy) == before
    module = copy / "_places.py"
    module.write_text(module.read_text() + "\n# edited\n")
    assert code_fingerprint(copy) != before
    assert code_fingerprint() != before  # the installed tree is another tree


def test_the_idle_period_is_read_from_the_environment_and_checked() -> None:
    assert idle_seconds({}) == DEFAULT_IDLE_SECONDS
    assert idle_seconds({"TELIC_RESIDENT_IDLE": "2.5"}) == 2.5
    for bad in ("0", "-1", "soon", "100000"):
        with pytest.raises(ResidentError, match=r"resident.idle: TELIC_RESIDENT_IDLE"):
            idle_seconds({"TELIC_RESIDENT_IDLE": bad})
