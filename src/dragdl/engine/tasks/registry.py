"""The task kinds, by name."""

from __future__ import annotations

from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.regression import Regression

_KINDS: dict[str, TaskKind] = {kind.name: kind for kind in (Classification(), Regression())}


def get_task_kind(name: str) -> TaskKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise ValueError(f"unknown task kind {name!r}; known: {', '.join(_KINDS)}") from None


def all_task_kinds() -> list[TaskKind]:
    return list(_KINDS.values())
