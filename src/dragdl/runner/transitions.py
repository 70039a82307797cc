"""Task status transitions: conditional updates written to the database before anything acts on them.

Every transition is one transaction that first updates the task row, guarded by the status it
expects (and, for a running task, by the attempt's `worker_ref`, a fencing token), then appends
the event. Two writers racing on one task therefore serialise on the row: the loser's update
matches no row and it backs off, and event ids follow commit order for each task.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, func, update
from sqlalchemy.orm import Session

from dragdl.db.models import Model, Task, TaskEvent, TaskStatus, utcnow

FINAL_STATUSES = (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.STOPPED)


def as_utc(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes for timezone-aware columns; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def age_s(moment: datetime | None) -> float:
    """Seconds since `moment` (infinite for None)."""
    if moment is None:
        return float("inf")
    return (utcnow() - as_utc(moment)).total_seconds()


def worker_ref_for(task_id: str, attempt: int) -> str:
    return f"dragdl-{task_id}-{attempt}"


def add_event(db: Session, task_id: str, kind: str, data: dict[str, Any]) -> TaskEvent:
    """Append an event; `data` gets `type` = kind first, like the engine's `Event.to_json()`."""
    event = TaskEvent(task_id=task_id, kind=kind, data={"type": kind, **data})
    db.add(event)
    return event


def guarded_update(db: Session, where: Iterable[ColumnElement[bool]], **values: Any) -> bool:
    """UPDATE tasks ... WHERE all of `where`; True when exactly one row changed."""
    statement = update(Task).where(*where).values(**values).execution_options(synchronize_session=False)
    result = cast(CursorResult[Any], db.execute(statement))
    return result.rowcount == 1


def _running(task_id: str, worker_ref: str | None) -> list[ColumnElement[bool]]:
    where = [Task.id == task_id, Task.status == TaskStatus.RUNNING]
    if worker_ref is not None:
        where.append(Task.worker_ref == worker_ref)
    return where


def start_attempt(
    db: Session, task: Task, message: str, worker_ref: str | None = None, **values: Any
) -> str | None:
    """QUEUED -> RUNNING for the next attempt (also setting `values`); returns the attempt's worker_ref
    (`worker_ref` when given: a warm worker's name), or None when the task is no longer QUEUED
    (stopped or deleted meanwhile)."""
    attempt = task.attempts + 1
    worker_ref = worker_ref or worker_ref_for(task.id, attempt)
    now = utcnow()
    ok = guarded_update(
        db,
        [Task.id == task.id, Task.status == TaskStatus.QUEUED, Task.attempts == task.attempts],
        status=TaskStatus.RUNNING,
        attempts=attempt,
        worker_ref=worker_ref,
        worker_pid=None,
        heartbeat_at=now,
        started_at=func.coalesce(Task.started_at, now),
        finished_at=None,
        error=None,
        queued_reason=None,
        **values,
    )
    if not ok:
        db.rollback()
        return None
    add_event(
        db, task.id, "status", {"status": TaskStatus.RUNNING.value, "attempt": attempt, "message": message}
    )
    db.commit()
    return worker_ref


def finish(
    db: Session,
    task_id: str,
    status: TaskStatus,
    message: str,
    *,
    worker_ref: str | None = None,
    from_statuses: tuple[TaskStatus, ...] = (TaskStatus.RUNNING,),
    error: dict[str, Any] | None = None,
    model: Model | None = None,
) -> bool:
    """Move the task to a final status (with its error event, and a model row for SUCCEEDED)."""
    where = [Task.id == task_id, Task.status.in_(from_statuses)]
    if worker_ref is not None:
        where.append(Task.worker_ref == worker_ref)
    values: dict[str, Any] = {
        "status": status,
        "finished_at": utcnow(),
        "stop_requested": False,
        "error": error,
        "queued_reason": None,
    }
    if status == TaskStatus.SUCCEEDED:
        values["progress"] = 1.0
    if not guarded_update(db, where, **values):
        db.rollback()
        return False
    if error is not None:
        add_event(db, task_id, "error", error)
    if model is not None:
        db.add(model)
    add_event(db, task_id, "status", {"status": status.value, "message": message})
    db.commit()
    return True


def requeue(
    db: Session, task_id: str, message: str, *, worker_ref: str | None, spare_attempt: bool = False
) -> bool:
    """RUNNING -> QUEUED, to resume from the newest checkpoint.

    `spare_attempt` adds one to max_attempts: the attempt ended through no fault of the task
    (the server restarted), so it must not use up the crash-retry budget.
    """
    values: dict[str, Any] = {"status": TaskStatus.QUEUED, "resume": True, "worker_pid": None}
    if spare_attempt:
        values["max_attempts"] = Task.max_attempts + 1
    if not guarded_update(db, _running(task_id, worker_ref), **values):
        db.rollback()
        return False
    add_event(db, task_id, "status", {"status": TaskStatus.QUEUED.value, "message": message})
    db.commit()
    return True


def note_queued_reason(db: Session, task_id: str, reason: dict[str, Any] | None) -> bool:
    """Record why a QUEUED task waits (None: it no longer does). Does not commit: a scheduling pass
    writes the reasons of all its waiting tasks in one transaction."""
    where = [Task.id == task_id, Task.status == TaskStatus.QUEUED]
    return guarded_update(db, where, queued_reason=reason)


def heartbeat(db: Session, task_id: str, worker_ref: str, **values: Any) -> bool:
    """The worker's lease check: refresh heartbeat_at (and `values`) while the attempt still owns the
    task. False means another attempt (or a stop, or a delete) took it over: the worker must quit.
    Does not commit (the caller may add an event to the same transaction)."""
    ok = guarded_update(db, _running(task_id, worker_ref), heartbeat_at=utcnow(), **values)
    if not ok:
        db.rollback()
    return ok


def retry_or_fail(
    db: Session, task: Task, *, worker_ref: str | None, reason: str, code: str, failure: str
) -> TaskStatus | None:
    """An attempt ended through no fault of the graph (`reason`): re-queue the task to resume from its
    checkpoint while it has attempts left, else FAIL it with `code` and the message `failure`.
    Returns the status written, or None when the attempt no longer owned the task."""
    if task.attempts < task.max_attempts:
        attempt = f"attempt {task.attempts + 1} of {task.max_attempts}"
        message = f"{reason}; retrying from the last checkpoint ({attempt})"
        return TaskStatus.QUEUED if requeue(db, task.id, message, worker_ref=worker_ref) else None
    error = {"code": code, "message": failure, "node_id": None}
    done = finish(db, task.id, TaskStatus.FAILED, failure, worker_ref=worker_ref, error=error)
    return TaskStatus.FAILED if done else None
