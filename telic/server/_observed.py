"""OpenTelemetry for a served Telic: the service wrapped so every state change is observed.

``observed(service, ledger, observer)`` returns an object with the service's methods. After each
state-changing call that succeeds, the observer turns the run's new ledger records into spans;
when the run refuses a call, the refusal (its code and rule ids, never its text) becomes a span
event. Reads pass straight through. With no observer configured the service is returned as it
is, so telemetry costs nothing unless ``TELIC_OTEL`` asks for it.
"""

from __future__ import annotations

from typing import Any, Final

from telic._errors import TelicError
from telic.ledger import Ledger
from telic.telemetry import TelemetryObserver

_STATE_CHANGES: Final = frozenset(
    {
        "ground",
        "submit_artifact",
        "answer_clarification",
        "cancel_run",
        "cast",
        "cast_progress",
        "return_packet",
        "broker_check",
    }
)
"""The service's methods (``telic.roles.Service``) whose first argument is a run id and which
may append to that run's ledger (a message to the run's actor); ``start_run`` is observed by
its result."""


class ObservedService:
    """A service whose state changes are reported to a ``TelemetryObserver``."""

    def __init__(self, service: Any, ledger: Ledger, observer: TelemetryObserver) -> None:
        self._service = service
        self._ledger = ledger
        self._observer = observer

    async def start_run(self, *args: Any, **kwargs: Any) -> Any:
        """Start a run, then observe it."""
        result = await self._service.start_run(*args, **kwargs)
        await self._observer.observe(self._ledger, result.run.run_id)
        return result

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._service, name)
        if name not in _STATE_CHANGES:
            return method

        async def call(run_id: str, *args: Any, **kwargs: Any) -> Any:
            try:
                result = await method(run_id, *args, **kwargs)
            except TelicError as error:
                artifact_type = args[2] if name == "submit_artifact" and len(args) > 2 else None
                self._observer.on_rejection(run_id, error, artifact_type=artifact_type)
                raise
            await self._observer.observe(self._ledger, run_id)
            return result

        return call


def observed(service: Any, ledger: Ledger, observer: TelemetryObserver | None) -> Any:
    """Return ``service`` reporting to ``observer``, or ``service`` itself when there is none."""
    return service if observer is None else ObservedService(service, ledger, observer)
