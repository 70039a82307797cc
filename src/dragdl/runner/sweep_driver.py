"""The sweep driver: a thread beside the scheduler that runs every sweep's trials as normal tasks.

Each pass, for every sweep with work left (ask-and-tell, the study rebuilt from the stored trials):

- reads the new epoch metrics of each running trial's task and hands the objective's value per epoch
  to the pruner; a trial the pruner stops is marked PRUNED and its task is stopped the ordinary way
  (a queued task at once, a running one checkpoints and ends STOPPED);
- settles the trials whose task ended: SUCCEEDED -> COMPLETE with the task's best objective value,
  FAILED -> FAILED, STOPPED by its owner -> STOPPED (the sampler sees both as failed);
- asks the study for new trials up to the sweep's parallelism and budget, and queues each as a task
  of the sweep's owner, so the scheduler's quota, the task center, monitoring, stop and resume all
  apply to it unchanged;
- ends the sweep once its budget is spent and no trial runs.

Every decision is committed before the next is taken, and the driver holds nothing in memory across
passes: after a server restart it continues from the rows (the scheduler resumes the tasks).

Sweeps are isolated from each other: an error in one sweep's pass (a value its param refuses, a row
no study can read) fails that sweep with the error as its message, and the pass goes on with the
others. A trial is queued only while its sweep is still RUNNING, checked in the same transaction
(a row lock on PostgreSQL), so a sweep stopped during a pass starts nothing more.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, cast

from pydantic import TypeAdapter
from sqlalchemy import CursorResult, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Sweep, SweepStatus, SweepTrial, Task, TaskEvent, TaskStatus, utcnow
from dragdl.runner.base import DEFAULT_MAX_ATTEMPTS
from dragdl.runner.failures import is_transient_db_error
from dragdl.runner.transitions import add_event, guarded_update

log = logging.getLogger(__name__)

SWEEP_TASK_PRIORITY = 0
MAX_ERROR_CHARS = 1000
"""The `sweeps.error` column's size."""


class SweepError(Exception):
    """A sweep cannot go on (a trial's value its param refuses): the sweep fails with this message."""


def plan_of(sweep: Sweep) -> Any:
    """The engine's view of a sweep (`SweepPlan`); imported here so the server starts without Optuna."""
    from dragdl.engine.graph.search import SearchSection
    from dragdl.engine.sweep.study import SweepPlan

    section = TypeAdapter(SearchSection).validate_python(sweep.base_graph.get("search") or {})
    return SweepPlan(
        section,
        "maximize" if sweep.direction == "maximize" else "minimize",
        sampler=sweep.sampler,  # type: ignore[arg-type]  # checked when the sweep was created
        pruner=sweep.pruner,  # type: ignore[arg-type]
        seed=sweep.seed,
        trials=sweep.trials,
    )


def stored_trials(rows: list[SweepTrial]) -> list[Any]:
    from dragdl.engine.sweep.study import StoredTrial

    return [
        StoredTrial(
            row.number,
            dict(row.params),
            row.state,  # type: ignore[arg-type]
            row.value,
            {int(epoch): float(value) for epoch, value in (row.intermediate or {}).items()},
            dict(row.system_attrs or {}),
        )
        for row in rows
    ]


def best_value(values: list[float], direction: str) -> float | None:
    if not values:
        return None
    return max(values) if direction == "maximize" else min(values)


class SweepDriver:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        wake_runner: Callable[[], None],
        poll_s: float = 1.0,
        admit: Callable[[Session, int, dict[str, Any], dict[str, Any]], str | None] | None = None,
    ) -> None:
        self.sessions, self.wake_runner, self.poll_s = sessions, wake_runner, poll_s
        self.admit = admit
        """The server's admission of a task (`services/admission.trial_admission`): why a trial's
        task may not be queued (caps, cluster, artifact quota), or None."""
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="dragdl-sweeps", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def wake(self) -> None:
        self._wake.set()

    def _main(self) -> None:
        while not self._closing.is_set():
            try:
                self.tick()
            except Exception as exc:
                if is_transient_db_error(exc):
                    log.warning("sweep pass: database unavailable (%s); retrying", exc)
                else:
                    log.exception("sweep pass failed")
            self._wake.wait(self.poll_s)
            self._wake.clear()

    def tick(self) -> None:
        """One pass over the sweeps that are running or still have a running trial."""
        with self.sessions() as db:
            busy = select(SweepTrial.sweep_id).where(SweepTrial.state == "RUNNING")
            ids = list(
                db.scalars(
                    select(Sweep.id).where(or_(Sweep.status == SweepStatus.RUNNING, Sweep.id.in_(busy)))
                )
            )
        for sweep_id in ids:
            if self._closing.is_set():
                return
            with self.sessions() as db:
                sweep = db.get(Sweep, sweep_id)
                if sweep is None:
                    continue
                try:
                    self.step(db, sweep)
                except Exception as exc:
                    if is_transient_db_error(exc):
                        raise  # the whole pass waits for the database, then redoes this sweep
                    db.rollback()
                    self.fail(db, sweep_id, exc)

    def fail(self, db: Session, sweep_id: str, exc: Exception) -> None:
        """The sweep ends FAILED with the error as its message; its running trials end FAILED and
        their tasks stop (a queued one at once). Other sweeps are not touched."""
        if isinstance(exc, SweepError):
            message = str(exc)
            log.warning("sweep %s failed: %s", sweep_id, message)
        else:
            message = f"the sweep driver failed on this sweep: {type(exc).__name__}: {exc}"
            log.exception("sweep %s failed", sweep_id)
        failed = db.execute(
            update(Sweep)
            .where(Sweep.id == sweep_id, Sweep.status == SweepStatus.RUNNING)
            .values(status=SweepStatus.FAILED, error=message[:MAX_ERROR_CHARS], finished_at=utcnow())
            .execution_options(synchronize_session=False)
        )
        running = list(
            db.scalars(
                select(SweepTrial).where(SweepTrial.sweep_id == sweep_id, SweepTrial.state == "RUNNING")
            )
        )
        for row in running:
            row.state, row.finished_at = "FAILED", utcnow()
            task = db.get(Task, row.task_id) if row.task_id else None
            if task is not None and not task.status.finished:
                self._stop(db, task, "its sweep failed")
        if not running and cast(CursorResult[Any], failed).rowcount == 0:
            db.rollback()
            return
        db.commit()
        self.wake_runner()

    def step(self, db: Session, sweep: Sweep) -> None:
        plan = plan_of(sweep)
        rows = self._trials(db, sweep)
        for row in rows:
            if row.state == "RUNNING":
                self._follow(db, sweep, plan, row, rows)
        if sweep.status != SweepStatus.RUNNING:
            return
        active = sum(1 for row in rows if row.state == "RUNNING")
        room = min(sweep.parallel - active, sweep.trials - len(rows))
        for _ in range(max(room, 0)):
            launched = self._launch(db, sweep, plan, rows)
            if launched is None:
                return  # stopped meanwhile
            rows.append(launched)
        if len(rows) >= sweep.trials and all(row.state != "RUNNING" for row in rows):
            if self._still_running(db, sweep.id, SweepStatus.SUCCEEDED, finished_at=utcnow()):
                db.commit()
                log.info("sweep %s finished its %d trials", sweep.id, sweep.trials)
            else:
                db.rollback()

    def _still_running(self, db: Session, sweep_id: str, status: SweepStatus, **values: Any) -> bool:
        """UPDATE the sweep WHERE it is still RUNNING (status unchanged or the new one); on PostgreSQL
        the row stays locked until the commit, so a concurrent stop waits for it or wins."""
        result = db.execute(
            update(Sweep)
            .where(Sweep.id == sweep_id, Sweep.status == SweepStatus.RUNNING)
            .values(status=status, **values)
            .execution_options(synchronize_session=False)
        )
        return cast(CursorResult[Any], result).rowcount == 1

    def _trials(self, db: Session, sweep: Sweep) -> list[SweepTrial]:
        return list(
            db.scalars(select(SweepTrial).where(SweepTrial.sweep_id == sweep.id).order_by(SweepTrial.number))
        )

    # -- a running trial -----------------------------------------------------------------------------

    def _follow(self, db: Session, sweep: Sweep, plan: Any, row: SweepTrial, rows: list[SweepTrial]) -> None:
        task = db.get(Task, row.task_id) if row.task_id else None
        if task is None:
            self._end(db, row, "STOPPED")  # its task was deleted
            return
        reported = self._read_metrics(db, sweep, row)
        if task.status.finished:
            self._settle(db, sweep, row, task)
            return
        if reported and plan.pruner != "none":
            from dragdl.engine.sweep.study import should_prune

            pruned, attrs = should_prune(plan, stored_trials(rows), row.number)
            row.system_attrs = attrs
            if pruned:
                self._end(
                    db, row, "PRUNED", value=best_value(list(row.intermediate.values()), sweep.direction)
                )
                self._stop(db, task, "pruned by its sweep")
                db.commit()
                self.wake_runner()
                log.info(
                    "sweep %s: trial %d pruned at epoch %s",
                    sweep.id,
                    row.number,
                    max(row.intermediate, key=int),
                )
                return
            db.commit()

    def _read_metrics(self, db: Session, sweep: Sweep, row: SweepTrial) -> bool:
        """Copy the objective of the task's new epoch metrics into the trial; True when there were any."""
        events = db.scalars(
            select(TaskEvent)
            .where(
                TaskEvent.task_id == row.task_id, TaskEvent.kind == "metric", TaskEvent.id > row.last_event_id
            )
            .order_by(TaskEvent.id)
        )
        intermediate = dict(row.intermediate or {})
        last, found = row.last_event_id, False
        for event in events:
            last = event.id
            value = (event.data.get("values") or {}).get(sweep.objective)
            if event.data.get("scope") == "epoch" and isinstance(value, int | float):
                intermediate[str(int(event.data.get("epoch", 0)))] = float(value)
                found = True
        if last != row.last_event_id:
            row.intermediate, row.last_event_id = intermediate, last
            db.commit()
        return found

    def _settle(self, db: Session, sweep: Sweep, row: SweepTrial, task: Task) -> None:
        if task.status == TaskStatus.SUCCEEDED:
            best = (task.best_metrics or {}).get(sweep.objective)
            value = (
                float(best)
                if isinstance(best, int | float)
                else best_value(list(row.intermediate.values()), sweep.direction)
            )
            self._end(db, row, "COMPLETE" if value is not None else "FAILED", value=value)
        else:
            self._end(db, row, "FAILED" if task.status == TaskStatus.FAILED else "STOPPED")

    def _end(self, db: Session, row: SweepTrial, state: str, value: float | None = None) -> None:
        row.state, row.value, row.finished_at = state, value, utcnow()
        db.commit()

    def _stop(self, db: Session, task: Task, why: str) -> None:
        """The task center's stop, in the caller's transaction: a queued task ends at once, a running
        one checkpoints and stops."""
        stop_task_now(db, task.id, why)

    # -- a new trial ---------------------------------------------------------------------------------

    def _launch(self, db: Session, sweep: Sweep, plan: Any, rows: list[SweepTrial]) -> SweepTrial | None:
        """Queue the next trial's task, unless the sweep stopped meanwhile (None)."""
        from dragdl.engine.graph.search import substitute
        from dragdl.engine.sweep.check import check_values
        from dragdl.engine.sweep.study import ask

        params, attrs = ask(plan, stored_trials(rows))
        problem = check_values(sweep.base_graph, params)
        if problem is not None:
            raise SweepError(f"trial {len(rows) + 1}: {problem}")
        if self.admit is not None:  # every trial passes a task's admission (caps, cluster, quota)
            refused = self.admit(db, sweep.owner_id, substitute(sweep.base_graph, params), sweep.resources)
            if refused is not None:
                raise SweepError(f"trial {len(rows) + 1}: {refused}")
        if not self._still_running(db, sweep.id, SweepStatus.RUNNING):
            db.rollback()
            return None
        number = len(rows)
        task = Task(
            owner_id=sweep.owner_id,
            name=f"{sweep.name} #{number + 1}"[:200],
            graph_id=sweep.graph_id,
            graph_snapshot=substitute(sweep.base_graph, params),
            status=TaskStatus.QUEUED,
            priority=SWEEP_TASK_PRIORITY,
            resources=dict(sweep.resources or {}),
            max_attempts=DEFAULT_MAX_ATTEMPTS,
        )
        db.add(task)
        db.flush()
        described = ", ".join(f"{name}={value}" for name, value in params.items())
        add_event(
            db,
            task.id,
            "status",
            {
                "status": TaskStatus.QUEUED.value,
                "message": f"trial {number + 1} of sweep {sweep.id}: {described}",
            },
        )
        row = SweepTrial(
            sweep_id=sweep.id,
            number=number,
            task_id=task.id,
            params=params,
            state="RUNNING",
            intermediate={},
            system_attrs=attrs,
            last_event_id=0,
        )
        db.add(row)
        db.commit()
        self.wake_runner()
        return row


def stop_task_now(db: Session, task_id: str, why: str) -> None:
    """Stop a task in the caller's transaction (nothing is committed): QUEUED -> STOPPED at once, so
    the scheduler can no longer start it; a RUNNING one is asked to checkpoint and stop."""
    now = utcnow()
    queued = [Task.id == task_id, Task.status == TaskStatus.QUEUED]
    if guarded_update(
        db, queued, status=TaskStatus.STOPPED, finished_at=now, stop_requested=False, queued_reason=None
    ):
        add_event(db, task_id, "status", {"status": TaskStatus.STOPPED.value, "message": why})
    elif guarded_update(db, [Task.id == task_id, Task.status == TaskStatus.RUNNING], stop_requested=True):
        add_event(db, task_id, "log", {"level": "info", "message": f"{why}: stopping"})
