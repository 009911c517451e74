"""Server options from the environment and flags: the schema mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from telic._errors import UsageError
from telic.server._config import (
    HTTP_READ_TIMEOUT_ENV,
    SCHEMAS_ENV,
    ServerConfig,
    schema_mode,
)


def test_schemas_are_sent_once_per_session_unless_full_is_asked_for(tmp_path: Path) -> None:
    root = str(tmp_path)
    assert ServerConfig.from_env({}, repository_root=root).schemas == "once"
    assert ServerConfig.from_env({SCHEMAS_ENV: "full"}, repository_root=root).schemas == "full"
    assert ServerConfig.from_env({SCHEMAS_ENV: " FULL "}, repository_root=root).schemas == "full"
    flagged = ServerConfig.from_env({SCHEMAS_ENV: "full"}, repository_root=root, schemas="once")
    assert flagged.schemas == "once", "the flag wins over the environment"


@pytest.mark.parametrize(
    ("environ", "flag", "named"),
    [({SCHEMAS_ENV: "always"}, None, SCHEMAS_ENV), ({}, "twice", "--schemas")],
)
def test_an_unknown_schema_mode_is_a_usage_error_naming_its_source(
    environ: dict[str, str], flag: str | None, named: str
) -> None:
    with pytest.raises(UsageError, match=rf"^{named}: the schema mode is 'full' or 'once', not"):
        schema_mode(environ, flag)


def test_a_schema_mode_is_full_or_once() -> None:
    assert [schema_mode({}, text) for text in ("full", "once")] == ["full", "once"]
    with pytest.raises(UsageError, match="'sometimes'"):
        schema_mode({}, "sometimes")


def test_the_http_read_deadline_defaults_to_30_seconds_and_is_read_from_the_environment(
    tmp_path: Path,
) -> None:
    root = str(tmp_path)
    assert ServerConfig.from_env({}, repository_root=root).read_timeout == 30.0
    timed = ServerConfig.from_env({HTTP_READ_TIMEOUT_ENV: " 2.5 "}, repository_root=root)
    assert timed.read_timeout == 2.5


@pytest.mark.parametrize("text", ["0", "-1", "3601", "soon", "nan", "inf"])
def test_a_read_deadline_that_is_no_seconds_in_range_is_a_usage_error(
    text: str, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match=r"TELIC_HTTP_READ_TIMEOUT=.* \(0, 3600\]"):
        ServerConfig.from_env({HTTP_READ_TIMEOUT_ENV: text}, repository_root=str(tmp_path))
