"""Task kinds by name: the built-in kinds register as any other kind does, with one line."""

from __future__ import annotations

from typing import ClassVar

import pytest

from dragdl.engine.tasks import all_task_kinds, get_task_kind
from dragdl.engine.tasks import registry as kinds
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.registry import register_task_kind
from dragdl.engine.tasks.regression import Regression


class Counted(Regression):
    """A third kind: regression under its own name."""

    name: ClassVar[str] = "counted"
    title: ClassVar[str] = "Counts"


def test_the_built_in_kinds_are_registered_by_name() -> None:
    assert [kind.name for kind in all_task_kinds()][:2] == ["classification", "regression"]
    assert isinstance(get_task_kind("regression"), Regression)
    with pytest.raises(ValueError, match="unknown task kind 'counted'; known: classification, regression"):
        get_task_kind("counted")


def test_a_new_kind_is_one_registration() -> None:
    kind = Counted()
    try:
        assert register_task_kind(kind) is kind
        assert get_task_kind("counted") is kind
        assert kind in all_task_kinds()
        # Its train node holds its own instance of the class: registering that changes nothing.
        register_task_kind(Counted())
        assert get_task_kind("counted") is kind
    finally:
        kinds._KINDS.pop("counted", None)
    with pytest.raises(ValueError, match="unknown task kind 'counted'"):
        get_task_kind("counted")


def test_another_kind_under_a_taken_name_is_refused() -> None:
    class Impostor(Classification):
        name: ClassVar[str] = "regression"

    with pytest.raises(
        ValueError, match=r"'regression' is already registered \(Regression\), not as Impostor"
    ):
        register_task_kind(Impostor())
    assert isinstance(get_task_kind("regression"), Regression)
