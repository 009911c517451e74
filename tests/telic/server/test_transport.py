"""Serving either way: the garbage collector is tuned while serving and restored after."""

from __future__ import annotations

import gc

from telic.server._transport import _YOUNG_COLLECTION, _serving_gc


def test_the_collector_is_tuned_while_serving_and_restored_after() -> None:
    before = gc.get_threshold()
    with _serving_gc():
        assert gc.get_threshold() == (_YOUNG_COLLECTION, *before[1:])
        gc.freeze()  # what the opened backend does
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
