"""Casting: native-subagent children that may return only evidence packets.

While a work node executes, its executor may cast children. ``admit_cast`` applies the contract's
checks (routing reason, enabled cast type, need code, budget within the type's ceilings,
``subagent.spawn``, the node's ``maximumChildren``, the run's ``maximumSubagentDepth`` and
``maximumParallelWorkers``) and hands the child a fresh-context ``Handoff`` and permissions that
are a subset of its caller's. ``record_progress`` keeps monotonic counters and marks a cast
exhausted when a cap is crossed; ``seal_return`` verifies the child's quotes against the run's
archive and seals the packet (``seal_unreturned`` seals a child that never came back as
``cancelled``). Every fact of an open cast is chained in the ledger (``reopen_casts`` rebuilds
the open casts after a restart). ``observe`` and ``run_digest`` are the consumption telemetry
and the digest; ``packet_stats`` aggregates packets across runs for tuning.

Cast types are off by default and enabled only by the user's authority: the ``cast_types`` of a
run's start, and the server configuration file (``load_cast_types``, ``find_config``).

Everything here is pure or reads the ledger; the run actor in ``telic.roles`` drives it and is
the only writer. Errors: ``telic_packets.CastRefusal`` and ``PacketRefusal`` (typed codes), and
the ``telic`` error tree (``SchemaViolation``, ``NotFound``, ``ContextSecurityError``, …).
"""

from telic.casting._admit import Admission as Admission
from telic.casting._admit import CastRequest as CastRequest
from telic.casting._admit import admit_cast as admit_cast
from telic.casting._admit import check_pointers as check_pointers
from telic.casting._admit import child_permissions as child_permissions
from telic.casting._admit import parse_handoff as parse_handoff
from telic.casting._book import WALL_GRACE_MS as WALL_GRACE_MS
from telic.casting._book import OpenCast as OpenCast
from telic.casting._book import cap_reached as cap_reached
from telic.casting._book import stop_reason_of as stop_reason_of
from telic.casting._config import CONFIG_NAMES as CONFIG_NAMES
from telic.casting._config import effective_registry as effective_registry
from telic.casting._config import find_config as find_config
from telic.casting._config import load_cast_types as load_cast_types
from telic.casting._config import parse_cast_types as parse_cast_types
from telic.casting._deadline import Bell as Bell
from telic.casting._deadline import Sleeper as Sleeper
from telic.casting._deadline import deadline as deadline
from telic.casting._deadline import next_deadline as next_deadline
from telic.casting._deadline import sleeper_on as sleeper_on
from telic.casting._durable import EXHAUSTED_EVENT as EXHAUSTED_EVENT
from telic.casting._durable import PROGRESS_EVENT as PROGRESS_EVENT
from telic.casting._durable import exhausted_summary as exhausted_summary
from telic.casting._durable import progress_summary as progress_summary
from telic.casting._durable import reopen_casts as reopen_casts
from telic.casting._durable import seconds as seconds
from telic.casting._events import cast_artifact as cast_artifact
from telic.casting._events import cast_uri as cast_uri
from telic.casting._events import consumed_event as consumed_event
from telic.casting._events import event as event
from telic.casting._events import packet_artifact as packet_artifact
from telic.casting._observe import CONSUMED_EVENT as CONSUMED_EVENT
from telic.casting._observe import DECISION_TYPES as DECISION_TYPES
from telic.casting._observe import consumption_records as consumption_records
from telic.casting._observe import consumption_since as consumption_since
from telic.casting._observe import decision_text as decision_text
from telic.casting._observe import observe as observe
from telic.casting._observe import packet_uri as packet_uri
from telic.casting._observe import parent_casts as parent_casts
from telic.casting._observe import run_digest as run_digest
from telic.casting._observe import unobserved_packets as unobserved_packets
from telic.casting._progress import ProgressStatus as ProgressStatus
from telic.casting._progress import record_progress as record_progress
from telic.casting._seal import HARNESS as HARNESS
from telic.casting._seal import packet_id_for as packet_id_for
from telic.casting._seal import run_verifier as run_verifier
from telic.casting._seal import seal_return as seal_return
from telic.casting._seal import seal_unreturned as seal_unreturned
from telic.casting._tuning import PacketStats as PacketStats
from telic.casting._tuning import RouteStats as RouteStats
from telic.casting._tuning import VerdictSpend as VerdictSpend
from telic.casting._tuning import packet_stats as packet_stats
from telic.casting._tuning import render_stats as render_stats

__all__ = [
    "CONFIG_NAMES",
    "CONSUMED_EVENT",
    "DECISION_TYPES",
    "EXHAUSTED_EVENT",
    "HARNESS",
    "PROGRESS_EVENT",
    "WALL_GRACE_MS",
    "Admission",
    "Bell",
    "CastRequest",
    "OpenCast",
    "PacketStats",
    "ProgressStatus",
    "RouteStats",
    "Sleeper",
    "VerdictSpend",
    "admit_cast",
    "cap_reached",
    "cast_artifact",
    "cast_uri",
    "check_pointers",
    "child_permissions",
    "consumed_event",
    "consumption_records",
    "consumption_since",
    "deadline",
    "decision_text",
    "effective_registry",
    "event",
    "exhausted_summary",
    "find_config",
    "load_cast_types",
    "next_deadline",
    "observe",
    "packet_artifact",
    "packet_id_for",
    "packet_stats",
    "packet_uri",
    "parent_casts",
    "parse_cast_types",
    "parse_handoff",
    "progress_summary",
    "record_progress",
    "render_stats",
    "reopen_casts",
    "run_digest",
    "run_verifier",
    "seal_return",
    "seal_unreturned",
    "seconds",
    "sleeper_on",
    "stop_reason_of",
    "unobserved_packets",
]
