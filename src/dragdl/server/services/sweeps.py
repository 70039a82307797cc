"""Sweeps: create (validate the graph and its search section), list, inspect, stop, resume; the best
trial's graph and model. Owner-scoped like tasks: another user's sweep does not exist for the caller.

The trials are run by `dragdl.runner.sweep_driver`; this module only writes what a user asked for
and wakes the driver.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from fastapi import HTTPException, status
from sqlalchemy import CursorResult, func, select, update
from sqlalchemy.orm import Session

from dragdl.db.models import Model, Sweep, SweepStatus, SweepTrial, Task, TaskStatus, User, utcnow
from dragdl.engine.graph.errors import GraphError
from dragdl.runner.base import Runner
from dragdl.server.schemas.sweeps import SweepCreate, SweepDetail, SweepSummary, TrialPublic
from dragdl.server.services import tasks as task_service
from dragdl.server.services.admission import admit_sweep
from dragdl.server.services.graphs import GraphRejected
from dragdl.server.services.sweep_importance import ImportanceCache, meaningful_trials
from dragdl.server.settings import Settings


class Waker(Protocol):
    """The sweep driver (`app.state.sweeps`), woken after a change so it acts at once."""

    def wake(self) -> None: ...


TRIAL_STATES = ("RUNNING", "COMPLETE", "PRUNED", "FAILED", "STOPPED")


def _rejected(message: str, field: str, node_id: str | None = None) -> GraphRejected:
    return GraphRejected(
        message, [GraphError(code="sweep_invalid", message=message, node_id=node_id, field=field)]
    )


def create(
    db: Session,
    settings: Settings,
    user: User,
    body: SweepCreate,
    runner: Runner | None,
    driver: Waker | None,
) -> Sweep:
    from dragdl.engine.nodes.train_node import find_train_node
    from dragdl.engine.sweep.objective import direction, objectives

    raw, graph_id, default_name = task_service.requested_graph(db, user, body.graph_id, body.graph, "sweep")
    data = task_service.check_graph(db, settings, user, raw)
    if not data.get("search"):
        raise _rejected("the graph searches no parameter: mark at least one as searched", "search")
    train = find_train_node(data)
    train_id = str(train[0]["id"]) if train else None
    choices = objectives(data)
    objective = body.objective or (choices[0] if choices else "")
    if objective not in choices:
        raise _rejected(f"objective {objective!r} is not one of {', '.join(choices)}", "objective", train_id)
    trials = body.trials
    if body.sampler == "grid":
        trials = min(trials, _grid_size(data))
    resources = admit_sweep(db, settings, user, data, body.resources, runner)
    sweep = Sweep(
        owner_id=user.id,
        name=(body.name or default_name)[:180],
        graph_id=graph_id,
        base_graph=data,
        status=SweepStatus.RUNNING,
        trials=trials,
        parallel=body.parallel,
        objective=objective,
        direction=direction(data, objective),
        sampler=body.sampler,
        pruner=body.pruner,
        seed=body.seed,
        resources=resources,
    )
    db.add(sweep)
    db.commit()
    _wake(runner, driver)
    return sweep


def _grid_size(data: dict[str, Any]) -> int:
    """The grid's points, counted from the specs (never listed); refused above MAX_GRID_POINTS."""
    from pydantic import TypeAdapter

    from dragdl.engine.graph.search import SearchSection, searched
    from dragdl.engine.sweep.check import MAX_GRID_POINTS, grid_count, grid_points

    section = TypeAdapter(SearchSection).validate_python(data["search"])
    for node_id, param, spec in searched(section):
        if grid_count(spec) is None:
            raise _rejected(
                f"a grid sweep needs a step for {param} (a real range), or choices", param, node_id
            )
    points = grid_points(section)
    if points > MAX_GRID_POINTS:
        counts = " x ".join(f"{param}: {grid_count(spec)}" for _, param, spec in searched(section)[:6])
        raise _rejected(
            f"the grid has more than {MAX_GRID_POINTS} points, the limit for a grid sweep ({counts}"
            f"{' ...' if len(searched(section)) > 6 else ''} values): use larger steps, or the random "
            "or tpe sampler",
            "sampler",
        )
    return points


def _wake(runner: Runner | None, driver: Waker | None) -> None:
    for part in (runner, driver):
        if part is not None:
            part.wake()


# --- reading --------------------------------------------------------------------------------------


def list_sweeps(db: Session, user: User, offset: int, limit: int) -> tuple[list[SweepSummary], int]:
    where = [Sweep.owner_id == user.id]
    count = db.scalar(select(func.count()).select_from(Sweep).where(*where)) or 0
    rows = db.scalars(
        select(Sweep).where(*where).order_by(Sweep.created_at.desc(), Sweep.id).offset(offset).limit(limit)
    )
    return [_summary(sweep, _trials(db, sweep)) for sweep in rows], count


def get_sweep(db: Session, user: User, sweep_id: str) -> Sweep:
    """The user's sweep (administrators: anyone's); another user's is a 404."""
    query = select(Sweep).where(Sweep.id == sweep_id)
    if not user.is_admin:
        query = query.where(Sweep.owner_id == user.id)
    sweep = db.scalar(query)
    if sweep is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no sweep {sweep_id!r}")
    return sweep


def _trials(db: Session, sweep: Sweep) -> list[SweepTrial]:
    return list(
        db.scalars(select(SweepTrial).where(SweepTrial.sweep_id == sweep.id).order_by(SweepTrial.number))
    )


def _best(sweep: Sweep, trials: list[SweepTrial]) -> SweepTrial | None:
    complete = [t for t in trials if t.state == "COMPLETE" and t.value is not None]
    if not complete:
        return None
    sign = 1.0 if sweep.direction == "maximize" else -1.0
    return max(complete, key=lambda t: (sign * (t.value or 0.0), -t.number))


def _summary(sweep: Sweep, trials: list[SweepTrial]) -> SweepSummary:
    counts = {state: sum(1 for t in trials if t.state == state) for state in TRIAL_STATES}
    best = _best(sweep, trials)
    public = SweepSummary.model_validate(
        {**_columns(sweep), "counts": counts, "best_value": None if best is None else best.value}
    )
    return public


def _columns(sweep: Sweep) -> dict[str, Any]:
    from dragdl.server.schemas.sweeps import SweepPublic

    return SweepPublic.model_validate(sweep).model_dump()


def detail(db: Session, sweep: Sweep, importance: ImportanceCache | None = None) -> SweepDetail:
    """The sweep and its trials; the params' importance as `importance` last computed it (never
    computed here: see `sweep_importance`), empty without one."""
    trials = _trials(db, sweep)
    tasks = {
        t.id: t for t in db.scalars(select(Task).where(Task.id.in_([r.task_id for r in trials if r.task_id])))
    }
    best = _best(sweep, trials)
    summary = _summary(sweep, trials)
    based_on, found = (0, {}) if importance is None else importance.read(sweep, trials)
    search = sweep.base_graph.get("search") or {}
    params = sum(len(node) for node in search.values() if isinstance(node, dict))
    return SweepDetail(
        **summary.model_dump(),
        base_graph=sweep.base_graph,
        search=search,
        trial_list=[_trial(row, tasks.get(row.task_id or "")) for row in trials],
        best_trial=None if best is None else best.number,
        importance=found,
        importance_trials=based_on,
        importance_min_trials=meaningful_trials(params),
    )


def _trial(row: SweepTrial, task: Task | None) -> TrialPublic:
    return TrialPublic(
        number=row.number,
        task_id=row.task_id,
        task_status=None if task is None else task.status,
        params=row.params,
        state=row.state,
        value=row.value,
        intermediate={str(k): float(v) for k, v in (row.intermediate or {}).items()},
        created_at=row.created_at,
        started_at=None if task is None else task.started_at,
        finished_at=row.finished_at or (None if task is None else task.finished_at),
    )


# --- actions --------------------------------------------------------------------------------------


def stop(db: Session, sweep: Sweep, runner: Runner | None, driver: Waker | None) -> Sweep:
    """No new trials; the running trials' tasks stop the task center's way (their trials end STOPPED).

    One transaction: the sweep's status (a guarded UPDATE, which locks its row on PostgreSQL until
    the commit, so a driver pass queueing a trial either finishes first or queues nothing), and every
    trial task: a queued one ends STOPPED at once, so the scheduler cannot start it after the stop."""
    from dragdl.runner.sweep_driver import stop_task_now

    stopped = db.execute(
        update(Sweep)
        .where(Sweep.id == sweep.id, Sweep.status == SweepStatus.RUNNING)
        .values(status=SweepStatus.STOPPED, finished_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    if cast(CursorResult[Any], stopped).rowcount != 1:
        db.rollback()
        db.refresh(sweep)
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"sweep {sweep.id} is {sweep.status.value}: cannot stop it"
        )
    # Read after the row lock: on PostgreSQL this statement sees a trial the driver committed meanwhile.
    task_ids = db.scalars(
        select(SweepTrial.task_id).where(
            SweepTrial.sweep_id == sweep.id, SweepTrial.state == "RUNNING", SweepTrial.task_id.is_not(None)
        )
    )
    for task_id in list(task_ids):
        if task_id is not None:
            stop_task_now(db, task_id, "stopped with its sweep")
    db.commit()
    _wake(runner, driver)
    db.refresh(sweep)
    return sweep


def resume(db: Session, sweep: Sweep, runner: Runner | None, driver: Waker | None) -> Sweep:
    """A stopped sweep continues: its stopped trials resume their tasks from their last checkpoint,
    and new trials are asked for until the budget is spent."""
    if sweep.status != SweepStatus.STOPPED:
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"sweep {sweep.id} is {sweep.status.value}: cannot resume it"
        )
    for row in _trials(db, sweep):
        task = db.get(Task, row.task_id) if row.task_id and row.state == "STOPPED" else None
        if task is not None and task.status in (TaskStatus.STOPPED, TaskStatus.FAILED):
            task_service.retry_task(db, task, runner)
            row.state, row.finished_at = "RUNNING", None
    sweep.status, sweep.finished_at = SweepStatus.RUNNING, None
    db.commit()
    _wake(runner, driver)
    db.refresh(sweep)
    return sweep


def best_graph(db: Session, sweep: Sweep) -> dict[str, Any]:
    """The base graph with the best trial's values, for "open the best in the editor"."""
    from dragdl.engine.graph.search import substitute

    best = _best(sweep, _trials(db, sweep))
    if best is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"sweep {sweep.id} has no complete trial yet")
    graph = substitute(sweep.base_graph, best.params)
    graph["name"] = f"{sweep.name} (best: trial {best.number + 1})"[:200]
    return graph


def register_best(db: Session, sweep: Sweep, name: str | None = None) -> Model:
    """The best trial's model (every succeeded task leaves one), named `name` or after the sweep."""
    best = _best(sweep, _trials(db, sweep))
    model = None
    if best is not None and best.task_id is not None:
        model = db.scalar(
            select(Model).where(Model.task_id == best.task_id, Model.owner_id == sweep.owner_id)
        )
    if model is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND, f"sweep {sweep.id} has no complete trial with a model yet"
        )
    model.name = name or f"{sweep.name} (best of sweep)"[:200]
    sweep.best_model_id = model.id
    db.commit()
    return model
