"""The controller's secret gates: what a host hands in is refused, what Telic traces is redacted.

Every host-submitted artifact, of any type, is scanned before its schema: every string of the
body (object keys included), the caller's sourceRefs and, for base64 Evidence, the decoded
content. A hit refuses the submission with ``SecretDetected`` — "redact before submission" —
naming the JSON path and the kind of secret, never its text, and the ledger is left as it was
(``ANY-NO-SECRETS``; ``EV-NO-SECRETS`` for Evidence). ``telic_start_run``'s arguments are
refused the same way (``RUN-NO-SECRETS``). Targets Telic records itself in permission
decisions are redacted instead (``telic._secrets.redact``), so the decision stays auditable.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

from telic._errors import Issue, SecretDetected
from telic._secrets import find_secrets, first_secret
from telic.protocol import Evidence, decode_evidence_content, wire_names

_REDACT: Final = "redact before submission"


def _refusal(what: str, rule: str, path: str, kind: str) -> SecretDetected:
    message = f"{what} holds likely secret material ({kind}) at {path}; {_REDACT}"
    return SecretDetected(message, issues=(Issue(path, "secret_detected", message, rule),))


def refuse_secrets(
    what: str, value: object, fields: Collection[str] = (), rule: str = "ANY-NO-SECRETS"
) -> None:
    """Refuse any other host-provided JSON bound for the ledger (a cast request, a child's return).

    ``what`` names it in the message. Paths show only keys the schemas define and the argument
    names in ``fields``; any other key stands as ``(key)``.

    Raises:
        SecretDetected: naming the path and kind of the first hit, never its text.
    """
    names = wire_names()
    hit = first_secret(value, shown=lambda key: key in names or key in fields)
    if hit is not None:
        path, finding = hit
        raise _refusal(what, rule, path, finding.kind)


def scan_submission(artifact_type: str, body: object, source_refs: Sequence[str]) -> None:
    """Refuse a raw body or caller sourceRefs holding a likely secret.

    Runs before the schema, so that no later message can echo a secret back.

    Raises:
        SecretDetected: naming the path and kind of the first hit, never its text.
    """
    rule = "EV-NO-SECRETS" if artifact_type == "Evidence" else "ANY-NO-SECRETS"
    refuse_secrets(artifact_type, body, rule=rule)
    for index, uri in enumerate(source_refs):
        findings = find_secrets(uri)
        if findings:
            raise _refusal(artifact_type, rule, f"source_refs.{index}", findings[0].kind)


def scan_content(evidence: Evidence) -> None:
    """Refuse Evidence whose *decoded* content holds a likely secret (base64 hides nothing).

    Raises:
        SecretDetected: when the decoded bytes, read as text, hold a likely secret.
    """
    if evidence.encoding != "base64":
        return
    try:
        raw = decode_evidence_content(evidence)
    except ValueError:
        return  # EV-CONTENT-CANONICAL reports it
    # latin-1 maps every byte to one character, so ASCII secret shapes survive binary content.
    findings = find_secrets(raw.decode("latin-1"))
    if findings:
        raise _refusal("Evidence", "EV-NO-SECRETS", "content", findings[0].kind)


def refuse_secret_arguments(arguments: Sequence[tuple[str, str | Sequence[str]]]) -> None:
    """Refuse ``telic_start_run`` arguments holding a likely secret (``RUN-NO-SECRETS``).

    ``arguments`` pairs each argument's name with its string or list of strings.

    Raises:
        SecretDetected: naming the argument (and index), never its text.
    """
    for name, value in arguments:
        values = (value,) if isinstance(value, str) else value
        for index, text in enumerate(values):
            findings = find_secrets(text)
            if findings:
                where = name if isinstance(value, str) else f"{name}.{index}"
                message = (
                    f"start_run argument {where} holds likely secret material "
                    f"({findings[0].kind}); redact it before starting the run"
                )
                raise SecretDetected(
                    message,
                    issues=(Issue(where, "secret_detected", message, "RUN-NO-SECRETS"),),
                )
