"""Whether telemetry is on: an explicit opt-in, never a side effect of installing a package."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

from telic.telemetry._observer import TelemetryObserver, otel_available

OTEL_ENV: Final = "TELIC_OTEL"
"""Set to ``1`` or ``true`` to export spans through the global tracer provider."""


def telemetry_from_env(environ: Mapping[str, str] | None = None) -> TelemetryObserver | None:
    """Return an observer when ``TELIC_OTEL`` asks for one and OpenTelemetry is installed."""
    env = os.environ if environ is None else environ
    if env.get(OTEL_ENV, "").strip().lower() not in ("1", "true", "yes", "on"):
        return None
    return TelemetryObserver() if otel_available() else None
