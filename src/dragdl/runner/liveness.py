"""Whether a worker that stopped heartbeating is lost, or only kept from writing by the database.

A worker heartbeats into its task's row every second; a row not touched for the heartbeat timeout
means its worker is lost, and the scheduler kills and re-queues it. But a locked or unreachable
database stops every heartbeat too: a 155 s SQLite lock made the 120 s timeout kill a healthy
worker. So before judging, the scheduler writes to the database itself (a no-op update of the row,
which waits for the same lock as the worker's write): while that write fails, no worker is judged,
and once the database answers again each worker gets the whole timeout to beat again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task
from dragdl.runner.failures import is_transient_db_error
from dragdl.runner.transitions import age_s

log = logging.getLogger(__name__)


class HeartbeatJudge:
    """Tells a lost worker from a stalled database, for one scheduler."""

    def __init__(
        self, sessions: sessionmaker[Session], timeout_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.sessions, self.timeout_s, self.clock = sessions, timeout_s, clock
        self.writable_since: float | None = clock()
        """Since when the database has taken the scheduler's writes (None: it refused the last)."""

    def lost(self, task_id: str, worker_ref: str, heartbeat_at: datetime | None) -> bool:
        if age_s(heartbeat_at) <= self.timeout_s:
            return False
        try:
            with self.sessions() as db:
                db.execute(
                    update(Task)
                    .where(Task.id == task_id, Task.worker_ref == worker_ref)
                    .values(heartbeat_at=Task.heartbeat_at)
                )
                db.commit()
        except Exception as exc:
            if not is_transient_db_error(exc):
                raise
            if self.writable_since is not None:
                log.warning("the database refuses writes (%s): no worker is judged by its heartbeat", exc)
            self.writable_since = None
            return False
        now = self.clock()
        if self.writable_since is None:
            self.writable_since = now
            log.info("the database takes writes again: heartbeats count from now on")
        return now - self.writable_since > self.timeout_s
