"""Fabricated secrets made fresh on every test run, for the boundary tests of issue 28.

Each value is drawn from the operating system's random source when it is asked for, so no run
stores the same value twice and no value is written in this repository for a scanner to learn.
Every value holds both a digit and a letter, so a generated value never falls into the detector's
"letters only" exemption by chance.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

ALNUM: Final = string.ascii_letters + string.digits
HEX: Final = "0123456789abcdef"


def draw(alphabet: str, length: int) -> str:
    """``length`` random characters of ``alphabet``, holding at least one digit and one letter
    when the alphabet has both."""
    digits, letters = any(c.isdigit() for c in alphabet), any(c.isalpha() for c in alphabet)
    while True:
        text = "".join(secrets.choice(alphabet) for _ in range(length))
        if _ANOTHER_KIND in text:
            continue  # a JSON Web Token's anchor: the token rule would claim the text after it
        if (not digits or any(c.isdigit() for c in text)) and (
            not letters or any(c.isalpha() for c in text)
        ):
            return text


_ANOTHER_KIND: Final = "eyJ"
"""The start of a JSON Web Token. Drawn inside another kind's value (about once in 3,000 Stripe
keys), it makes the detector see a second, longer secret running on into the text that follows
(``sk_live_…eyJ….json`` is redacted up to and including ``.json``): redacted safely, but no
longer the one kind and span a test of that kind expects."""


@dataclass(frozen=True, slots=True)
class Fresh:
    """One fresh secret: the text that carries it, the kind the detector names, the secret."""

    name: str
    text: str
    kind: str
    secret: str


_MAKERS: Final[dict[str, Callable[[], tuple[str, str, str]]]] = {
    "github": lambda: (lambda s: (s, "github-token", s))("ghp_" + draw(ALNUM, 36)),
    "aws": lambda: (lambda s: (s, "aws-access-key", s))(
        "AKIA" + draw(string.ascii_uppercase + "234567", 16)
    ),
    "slack": lambda: (lambda s: (s, "slack-token", s))(
        "xoxb-" + draw(string.digits, 11) + "-" + draw(string.digits, 12) + "-" + draw(ALNUM, 24)
    ),
    "stripe": lambda: (lambda s: (s, "stripe-access-key", s))("sk_live_" + draw(ALNUM, 24)),
    "google": lambda: (lambda s: (s, "google-api-key", s))("AIza" + draw(ALNUM + "_-", 35)),
}


def fresh(name: str) -> Fresh:
    """A fresh secret of the named kind (``github``, ``aws``, ``slack``, ``stripe``, ``google``)."""
    text, kind, secret = _MAKERS[name]()
    return Fresh(name, text, kind, secret)


NAMES: Final = tuple(_MAKERS)
