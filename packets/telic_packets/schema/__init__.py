"""The committed JSON Schema of ``telic.evidence-packet/1``, generated from the models.

Run ``python -m telic_packets.schema --write`` after changing a model, and
``python -m telic_packets.schema --check`` in CI (exit status 1 when the file has drifted).
"""

from __future__ import annotations

from telic_packets.schema._generate import (
    SCHEMA_PATH as SCHEMA_PATH,
    generate_schema as generate_schema,
    main as main,
    render_schema as render_schema,
)

__all__ = ["SCHEMA_PATH", "generate_schema", "main", "render_schema"]
