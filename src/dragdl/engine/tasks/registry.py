"""The task kinds, by name.

Built-in kinds register here; another module registers its own with `register_task_kind` (one
line), as an input type registers with `inputs/registry.register_input_type`.
"""

from __future__ import annotations

from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.classification import Classification
from dragdl.engine.tasks.regression import Regression

_KINDS: dict[str, TaskKind] = {}


def register_task_kind(kind: TaskKind) -> TaskKind:
    """Make `kind` known under its name. Registering the same kind again changes nothing (a train
    node holds its own instance of its kind's class); another kind under a taken name is refused."""
    known = _KINDS.get(kind.name)
    if known is not None and type(known) is not type(kind):
        raise ValueError(
            f"task kind {kind.name!r} is already registered ({type(known).__name__}), "
            f"not as {type(kind).__name__}"
        )
    _KINDS.setdefault(kind.name, kind)
    return kind


def get_task_kind(name: str) -> TaskKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise ValueError(f"unknown task kind {name!r}; known: {', '.join(_KINDS)}") from None


def all_task_kinds() -> list[TaskKind]:
    return list(_KINDS.values())


for _builtin in (Classification(), Regression()):
    register_task_kind(_builtin)
