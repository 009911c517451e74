"""Shell commands, typed inspect targets, host names and network URLs.

Host names are compared in one canonical form: lower-case ASCII, an IPv6 address compressed and
without brackets, and nothing else inferred. A trailing dot is kept, so ``example.com.`` is a
different name from ``example.com``: the fully-qualified spelling may reach another virtual host,
and Telic never infers equivalence between names. A start_run domain may therefore not end with a
dot, and a URL whose host does is never authorized. Internationalised names must be given in their
``xn--`` form. Numeric forms that are not a dotted-quad IPv4 address (``2130706433``, ``0x7f.1``)
are not host names at all.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from telic.permissions._paths import Refusal

TYPED_INSPECT_TARGETS: Final[tuple[str, ...]] = (
    "git.status",
    "git.diff",
    "git.log",
    "network.listen",
    "process.list",
    "runtime.logs",
)
"""The only targets a ``shell.inspect`` action may name: typed reads, never shell text."""

_PLACEHOLDERS: Final = frozenset({"authorized", "**"})
GLOB_CHARS: Final = frozenset("*?[]")
"""The glob characters: no exact command holds one, and a protected grant's first segment none."""
_COMPOUND: Final = (";", "&", "|", ">", "<", "`", "\n", "\r", "\x00", "$(")
_LABEL: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_SCHEME: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_UNSAFE_URL: Final = re.compile(r"[\x00-\x20\x7f]")
_MAX_HOST: Final = 253


def shell_command_problem(command: str) -> str | None:
    """Say why ``command`` is not one exact, non-compound command, or return ``None``."""
    if command in _PLACEHOLDERS:
        return "the command is a wildcard placeholder, not a command"
    if any(char in GLOB_CHARS for char in command):
        return "the command contains a glob character"
    if any(token in command for token in _COMPOUND):
        return "the command contains a compound-command operator, redirection or substitution"
    return None


def canonical_host(host: str, *, allow_trailing_dot: bool = False) -> str | None:
    """Return the canonical form of a DNS name, IP address or ``localhost``, or ``None``."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:
            return None
    if ":" in host:
        if "%" in host:
            return None
        try:
            return ipaddress.IPv6Address(host).compressed
        except ValueError:
            return None
    name = host.lower()
    if allow_trailing_dot and name.endswith("."):
        base = canonical_host(name[:-1])
        return None if base is None else base + "."
    if not name or len(name) > _MAX_HOST or not name.isascii():
        return None
    try:
        return str(ipaddress.IPv4Address(name))
    except ValueError:
        pass
    labels = name.split(".")
    if not all(_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        return None
    return name


def domain_problem(domain: str) -> str | None:
    """Say why ``domain`` is not a bare DNS name, IP address or ``localhost``, or ``None``."""
    if "*" in domain:
        return "the domain contains a wildcard"
    if "@" in domain:
        return "the domain contains credentials"
    if "/" in domain:
        return "the domain contains a scheme or a path"
    if domain.endswith("."):
        return "the domain ends with a dot; give the bare name"
    if canonical_host(domain) is None:
        if ":" in domain:
            return "the domain contains a scheme or a port"
        return "the domain is not a bare DNS name, IP address or localhost"
    return None


def _split_authority(target: str) -> tuple[str, str] | None:
    """Return ``(scheme, authority)`` of ``scheme://authority/...``, or ``None``."""
    match = _SCHEME.match(target)
    if match is None or not target[match.end() :].startswith("//"):
        return None
    rest = target[match.end() + 2 :]
    end = min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))
    return match.group(1).lower(), rest[:end]


def _host_of(authority: str) -> str | None:
    """Split off a port (digits only, ≤ 65535) and return the raw host."""
    if authority.startswith("["):
        close = authority.find("]")
        host, rest = authority[: close + 1], authority[close + 1 :]
        if close == -1 or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        host, _, port = authority.partition(":")
    if port and (not port.isdigit() or int(port) > 65535):
        return None
    return host


def url_host(target: str) -> str | Refusal:
    """Return the canonical host of an ``http``/``https`` URL without credentials."""
    if _UNSAFE_URL.search(target) or "\\" in target:
        return Refusal("invalid_url", "the URL contains whitespace, a control char or a backslash")
    scheme_match = _SCHEME.match(target)
    if scheme_match is not None and scheme_match.group(1).lower() not in ("http", "https"):
        return Refusal("url_scheme", "only http and https URLs may be read")
    parts = _split_authority(target)
    if parts is None:
        return Refusal("invalid_url", "the target is not an absolute http or https URL")
    authority = parts[1]
    if "@" in authority:
        return Refusal("url_userinfo", "the URL carries credentials")
    host = _host_of(authority)
    if host is None or "%" in host:
        return Refusal("invalid_url", "the URL authority is malformed")
    canonical = canonical_host(host, allow_trailing_dot=True)
    if canonical is None:
        return Refusal("invalid_host", "the URL host is not a DNS name, IP address or localhost")
    return canonical


def network_trace_target(target: str) -> str | None:
    """Reduce a network target to its bare canonical host name for a permission trace.

    Credentials, port, path, query and fragment are dropped, so a URL secret is never persisted.
    Returns ``None`` when no host name can be recognised.
    """
    if _UNSAFE_URL.search(target):
        return None
    parts = _split_authority(target)
    if parts is None:
        return None if "/" in target else canonical_host(target, allow_trailing_dot=True)
    host = _host_of(parts[1].rpartition("@")[2].split("\\")[0])
    return None if host is None else canonical_host(host, allow_trailing_dot=True)
