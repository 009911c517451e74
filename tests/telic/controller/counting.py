"""A ledger that counts the calls it serves, to show what a call costs in ledger round trips."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, cast

from telic.ledger import Ledger


class CountingLedger:
    """Any ledger, counting each method's calls by name (``calls``); everything else passes."""

    def __init__(self, inner: Ledger) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute
        method = cast(Callable[..., Any], attribute)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted

    @property
    def ledger(self) -> Ledger:
        """This counter, typed as the ledger it stands for."""
        return cast(Ledger, self)

    def reads(self) -> int:
        """How many reads of a run's rows were asked for (changes, artifacts, the run row)."""
        return sum(self.calls[n] for n in ("read_changes", "list_artifacts", "get_run"))
