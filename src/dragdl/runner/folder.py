"""Noticing that a running task's folder was deleted, instead of writing on into deleted files.

The log and event files stay open while a task trains; deleting the folder unlinks them and the
writes go nowhere, while the next checkpoint would quietly create a new, empty folder. The guard
remembers the identity (device and inode) of the task's `events.jsonl` and checks at every metric
and checkpoint that the same file is still there; when it is not, `TaskFolderDeleted` ends the run.
"""

from __future__ import annotations

import os
from pathlib import Path

from dragdl.engine.train.events import ArtifactEvent, Event, MetricEvent
from dragdl.runner.failures import TaskFolderDeleted


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


class FolderGuard:
    """A `Reporter` that sends nothing anywhere; put it first so the check runs before the writes."""

    def __init__(self, out_dir: Path, marker: Path) -> None:
        self.out_dir, self.marker = out_dir, marker
        self._identity = _identity(marker)

    def emit(self, event: Event) -> None:
        if isinstance(event, MetricEvent | ArtifactEvent):
            self.check()

    def check(self) -> None:
        if self._identity is not None and _identity(self.marker) != self._identity:
            raise TaskFolderDeleted()
