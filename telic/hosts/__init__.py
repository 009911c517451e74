"""Host kits and hooks (rank 6): what a real host needs to drive Telic from its own project.

``telic init <host>`` writes (or merges into) the host's project files in its documented format
(``plan_kit``, ``write_kit``, ``check_kits``); ``telic hook <host>`` decides a host's native tool
call from the ledger in a fresh process (``host_hook``: one decision, each host's payloads read
and answered by its ``Dialect``), failing closed while a run is live.

The facade is lazy (``telic._lazy``): the hook imports only what a decision needs.
"""

from __future__ import annotations

import typing

from telic._lazy import lazy_facade as _lazy_facade

if typing.TYPE_CHECKING:
    from telic.hosts._dialects import (
        DIALECTS as DIALECTS,
        HOOK_HOSTS as HOOK_HOSTS,
        Call as Call,
        Dialect as Dialect,
        HookInputError as HookInputError,
        Verdict as Verdict,
        read_event as read_event,
    )
    from telic.hosts._hook import (
        host_hook as host_hook,
        select_run as select_run,
    )
    from telic.hosts._kits import (
        DEFAULT_CAST_TURNS as DEFAULT_CAST_TURNS,
        HOSTS as HOSTS,
        RESIDENT_BY_DEFAULT as RESIDENT_BY_DEFAULT,
        KitCheck as KitCheck,
        cast_turn_ceiling as cast_turn_ceiling,
        check_kits as check_kits,
        diff as diff,
        plan_kit as plan_kit,
        write_kit as write_kit,
    )

if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _lazy_facade(globals())
