"""Host names, the permission-trace network normaliser and shell command shapes."""

from __future__ import annotations

import pytest

from telic.permissions import canonical_host, network_trace_target, shell_command_problem


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("Example.COM", "example.com"),
        ("localhost", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("[2001:DB8::1]", "2001:db8::1"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("example.com.", None),
        ("*.example.com", None),
        ("127.1", None),
        ("0127.0.0.1", None),
        ("[127.0.0.1]", None),
        ("fe80::1%eth0", None),
        ("a..b", None),
        ("", None),
        ("a" * 64 + ".com", None),
    ],
)
def test_hosts_have_one_canonical_form(host: str, canonical: str | None) -> None:
    assert canonical_host(host) == canonical


def test_a_trailing_dot_is_kept_when_allowed_not_stripped() -> None:
    assert canonical_host("Example.com.", allow_trailing_dot=True) == "example.com."
    assert canonical_host("example.com..", allow_trailing_dot=True) is None


@pytest.mark.parametrize(
    ("target", "host"),
    [
        ("https://user:hunter2@Example.com:8443/p?token=abc#f", "example.com"),
        ("http://a:b@c@localhost/", "localhost"),
        ("http://[::1]:80/x", "::1"),
        ("ftp://user:pw@example.com/", "example.com"),
        ("https://example.com./", "example.com."),
        ("example.com", "example.com"),
        ("javascript:alert(1)", None),
        ("file:///etc/passwd", None),
        ("https://exa mple.com", None),
        ("https://u:p/w@example.com/", None),
        ("not a url", None),
        ("http://[::1/x", None),
        ("http://[::1]x/", None),
    ],
)
def test_the_trace_normaliser_keeps_only_the_bare_host(target: str, host: str | None) -> None:
    assert network_trace_target(target) == host


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("npm test", None),
        ("npm test ", None),
        ("git log --oneline -n 5", None),
        ("authorized", "placeholder"),
        ("**", "placeholder"),
        ("ls *.py", "glob"),
        ("ls [a]", "glob"),
        ("make;make", "compound"),
        ("make\x00", "compound"),
        ("echo $(id)", "compound"),
        ("echo $HOME", None),
    ],
)
def test_shell_commands_must_be_exact_and_simple(command: str, problem: str | None) -> None:
    found = shell_command_problem(command)
    assert (found is None) is (problem is None)
    assert problem is None or problem in str(found)
