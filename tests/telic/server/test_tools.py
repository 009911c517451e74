"""Each tool's handler is bound to the argument model its table row names."""

from __future__ import annotations

from telic.server._table import TOOLS
from telic.server._tools import _args_model, _Asking, _Bound, _handlers, _leaf


def test_every_row_has_a_handler_and_every_handler_a_row() -> None:
    assert set(_handlers()) == {spec.name for spec in TOOLS}


def test_each_handler_validates_with_the_model_its_row_names() -> None:
    for spec in TOOLS:
        bound = _handlers()[spec.name]
        # Only telic_submit_artifact may put a form to the user (an accepted clarification).
        kind = _Asking if spec.name == "telic_submit_artifact" else _Bound
        assert isinstance(bound, kind), spec.name
        assert bound.model is _args_model(spec.args), spec.name


def test_an_error_is_unwrapped_from_task_groups_only_when_it_is_alone() -> None:
    alone = ValueError("the one error")
    assert _leaf(ExceptionGroup("outer", [ExceptionGroup("inner", [alone])])) is alone
    two = ExceptionGroup("two", [ValueError("a"), KeyError("b")])
    assert _leaf(two) is two
    assert _leaf(alone) is alone
