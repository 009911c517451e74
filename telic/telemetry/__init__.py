"""Optional OpenTelemetry export of runs: spans per run, phase submission and cast.

Off unless configured: install the ``otel`` extra, then either call ``export_run`` for a
recorded run or keep one ``TelemetryObserver`` for the service and call
``await observer.observe(ledger, run_id)`` after every committed step (start, ground, submit,
answer, cancel, cast, packet return) and ``observer.on_rejection(run_id, error, ...)`` when the
controller refuses a submission; ``observer.close()`` on shutdown. ``telemetry_from_env``
returns an observer only when ``TELIC_OTEL`` is ``1``/``true`` (spans then go to the global
tracer provider the deployment configured, e.g. with an OTLP exporter).

GenAI semantic-convention names are used where they exist (``invoke_workflow``,
``invoke_agent``, ``gen_ai.agent.name``, ``gen_ai.usage.*``), ``telic.*`` attributes otherwise.
Only ids, types, verdicts, rule ids and counts leave the process: never request, claim, quote,
summary, path or target text. Importing this package never requires ``opentelemetry``.
"""

from __future__ import annotations

from telic.telemetry._facts import (
    artifact_facts as artifact_facts,
    packet_facts as packet_facts,
)
from telic.telemetry._observer import (
    OTEL_ENV as OTEL_ENV,
    TelemetryObserver as TelemetryObserver,
    export_run as export_run,
    otel_available as otel_available,
    telemetry_from_env as telemetry_from_env,
)

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
