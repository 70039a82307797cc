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
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Sweep, SweepStatus, SweepTrial, Task, TaskEvent, TaskStatus, utcnow
from dragdl.runner.base import DEFAULT_MAX_ATTEMPTS
from dragdl.runner.failures import is_transient_db_error
from dragdl.runner.transitions import add_event, finish, guarded_update

log = logging.getLogger(__name__)

SWEEP_TASK_PRIORITY = 0


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
        self, sessions: sessionmaker[Session], wake_runner: Callable[[], None], poll_s: float = 1.0
    ) -> None:
        self.sessions, self.wake_runner, self.poll_s = sessions, wake_runner, poll_s
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
                if sweep is not None:
                    self.step(db, sweep)

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
            rows.append(self._launch(db, sweep, plan, rows))
        if len(rows) >= sweep.trials and all(row.state != "RUNNING" for row in rows):
            sweep.status, sweep.finished_at = SweepStatus.SUCCEEDED, utcnow()
            db.commit()
            log.info("sweep %s finished its %d trials", sweep.id, sweep.trials)

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
                self._stop(db, task)
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

    def _stop(self, db: Session, task: Task) -> None:
        """The task center's stop: a queued task ends at once, a running one checkpoints and stops."""
        if task.status == TaskStatus.QUEUED:
            finish(db, task.id, TaskStatus.STOPPED, "pruned by its sweep", from_statuses=(TaskStatus.QUEUED,))
        elif guarded_update(db, [Task.id == task.id, Task.status == TaskStatus.RUNNING], stop_requested=True):
            add_event(db, task.id, "log", {"level": "info", "message": "pruned by its sweep: stopping"})
        db.commit()
        self.wake_runner()

    # -- a new trial ---------------------------------------------------------------------------------

    def _launch(self, db: Session, sweep: Sweep, plan: Any, rows: list[SweepTrial]) -> SweepTrial:
        from dragdl.engine.graph.search import substitute
        from dragdl.engine.sweep.study import ask

        params, attrs = ask(plan, stored_trials(rows))
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
