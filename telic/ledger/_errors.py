"""Errors of the ledger's own that the shared error tree (``telic._errors``) does not name."""

from __future__ import annotations

from telic._errors import LedgerError


class SecretRefused(LedgerError):
    """A record bound for the ledger holds likely secret material; nothing was written.

    The message and its one issue name the record (run, artifact or trace event, by position
    in the mutation) and the field path, and the kind of secret, never the text.
    """

    code = "ledger_secret_refused"
