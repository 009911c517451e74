"""Casting: native-subagent children that may return only evidence packets.

While a work node executes, its executor may cast children. ``admit_cast`` applies the contract's
checks in its precedence and hands the child a fresh-context ``Handoff`` and permissions that are
a subset of its caller's. ``record_progress`` keeps monotonic counters and
marks a cast exhausted when a cap is crossed; ``seal_return`` verifies the child's quotes against
the run's archive and seals the packet (``seal_unreturned`` seals a child that never came back as
``cancelled``). Every fact of an open cast is chained in the ledger (``reopen_casts`` rebuilds the
open casts after a restart). A native child (a host's own subagent) is held to its cast through the
host's hook: its ``agent_id`` is bound to the cast, each of its calls is judged against the cast's
scope and counted as observed spend, and its return is checked (``judge_child_call``,
``children_of``, ``child_scope``). ``observe`` and ``run_digest`` are the consumption telemetry and
the digest (``run_digest_view``: the contract's lines, marks beside them); ``packet_stats``
aggregates packets across runs for tuning.

Cast types are off by default and enabled only by the user's authority: the ``cast_types`` of a
run's start, and the server configuration file (``load_cast_types``, ``find_config``).

Everything here is pure or reads the ledger; the run actor in ``telic.roles`` drives it and is
the only writer. Errors: ``telic_packets.CastRefusal`` and ``PacketRefusal`` (typed codes), and
the ``telic`` error tree (``SchemaViolation``, ``NotFound``, ``ContextSecurityError``, …).
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.casting._admit import (
        Admission as Admission,
        CastRequest as CastRequest,
        admit_cast as admit_cast,
        check_pointers as check_pointers,
        child_permissions as child_permissions,
        executing_node as executing_node,
        parse_handoff as parse_handoff,
        spawn_problem as spawn_problem,
    )
    from telic.casting._book import (
        WALL_GRACE_MS as WALL_GRACE_MS,
        OpenCast as OpenCast,
        cap_reached as cap_reached,
        stop_reason_of as stop_reason_of,
    )
    from telic.casting._child import (
        BOUND_EVENT as BOUND_EVENT,
        CALL_EVENT as CALL_EVENT,
        CHILD_EVENTS as CHILD_EVENTS,
        EXHAUSTED_EVENT as EXHAUSTED_EVENT,
        HANDOFF_EVENT as HANDOFF_EVENT,
        SEALED_EVENT as SEALED_EVENT,
        STARTED_EVENT as STARTED_EVENT,
        STOPPED_EVENT as STOPPED_EVENT,
        ChildJudgement as ChildJudgement,
        Children as Children,
        ChildScope as ChildScope,
        Observed as Observed,
        bind_target as bind_target,
        bound_summary as bound_summary,
        call_summary as call_summary,
        children_of as children_of,
        handed_cast as handed_cast,
        handoff_summary as handoff_summary,
        judge_child_call as judge_child_call,
        open_casts_of as open_casts_of,
        pointer_paths as pointer_paths,
        returned_packet as returned_packet,
        stopped_summary as stopped_summary,
    )
    from telic.casting._config import (
        CONFIG_NAMES as CONFIG_NAMES,
        effective_registry as effective_registry,
        find_config as find_config,
        load_cast_types as load_cast_types,
        parse_cast_types as parse_cast_types,
    )
    from telic.casting._deadline import (
        Bell as Bell,
        Sleeper as Sleeper,
        deadline as deadline,
        next_deadline as next_deadline,
        sleeper_on as sleeper_on,
    )
    from telic.casting._durable import (
        PROGRESS_EVENT as PROGRESS_EVENT,
        child_scope as child_scope,
        exhausted_summary as exhausted_summary,
        load_child_scope as load_child_scope,
        parse_time as parse_time,
        progress_summary as progress_summary,
        reopen_casts as reopen_casts,
        seconds as seconds,
    )
    from telic.casting._events import (
        cast_artifact as cast_artifact,
        cast_uri as cast_uri,
        consumed_event as consumed_event,
        event as event,
        packet_artifact as packet_artifact,
    )
    from telic.casting._observe import (
        CONSUMED_EVENT as CONSUMED_EVENT,
        DECISION_TYPES as DECISION_TYPES,
        consumption_records as consumption_records,
        consumption_since as consumption_since,
        decision_text as decision_text,
        observe as observe,
        observed_spend as observed_spend,
        packet_uri as packet_uri,
        parent_casts as parent_casts,
        read_trace as read_trace,
        run_digest as run_digest,
        run_digest_view as run_digest_view,
        unobserved_packets as unobserved_packets,
    )
    from telic.casting._progress import (
        ProgressStatus as ProgressStatus,
        record_progress as record_progress,
    )
    from telic.casting._seal import (
        HARNESS as HARNESS,
        packet_id_for as packet_id_for,
        run_verifier as run_verifier,
        seal_return as seal_return,
        seal_unreturned as seal_unreturned,
    )
    from telic.casting._tuning import (
        PacketStats as PacketStats,
        RouteStats as RouteStats,
        VerdictSpend as VerdictSpend,
        packet_stats as packet_stats,
        render_stats as render_stats,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
