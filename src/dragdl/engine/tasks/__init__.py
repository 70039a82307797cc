"""Task kinds: what a train node learns (classes, values) and everything that follows from it."""

from dragdl.engine.tasks.base import RunningMetrics, TaskKind
from dragdl.engine.tasks.registry import all_task_kinds, get_task_kind

__all__ = ["RunningMetrics", "TaskKind", "all_task_kinds", "get_task_kind"]
