"""Training tasks: submit (validate, snapshot, queue), list, stop, retry, clone, delete; events and logs.

Tasks are owner-scoped: another user's task does not exist for the caller (404). The status columns
change only through `dragdl.runner.transitions`, which writes the status event in the same
transaction; the runner is woken after each change so it acts at once.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

from fastapi import HTTPException, status
from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Model, Task, TaskEvent, TaskStatus, User
from dragdl.engine.graph.errors import GraphError
from dragdl.runner.base import DEFAULT_MAX_ATTEMPTS, Runner, WorkerConfig
from dragdl.runner.demand import distributed_workers, needed, train_device
from dragdl.runner.placement import Node, Workers
from dragdl.runner.scheduler import Scheduler
from dragdl.runner.transitions import add_event, finish, guarded_update
from dragdl.server.errors import public_graph_errors
from dragdl.server.schemas.tasks import TaskCreate, TaskLog, TaskResources, TaskSort
from dragdl.server.services import admission
from dragdl.server.services import graphs as graph_service
from dragdl.server.services.data_context import check_graph_policy, data_context_for
from dragdl.server.services.graphs import GraphRejected
from dragdl.server.services.limits import cap_resources, limits_of
from dragdl.server.settings import Settings

LOG_CHUNK_BYTES = 64 * 1024
KILL_TIMEOUT_S = 30.0
EVENTS_PAGE = 500


def create_runner(settings: Settings, sessions: sessionmaker[Session], eager: bool = False) -> Scheduler:
    """The server's runner (Ray starts once there is work, or at once when `eager`; see
    `dragdl.runner.scheduler`)."""
    from dragdl.runner.ray_runner import create_ray_runner

    def context_for(db: Session, user: User) -> Any:
        return data_context_for(db, settings, user)

    return create_ray_runner(
        sessions,
        WorkerConfig(settings.database_url, settings.data_dir),
        context_for,
        ray_address=settings.ray_address,
        max_running_per_user=settings.max_running_per_user,
        stop_timeout_s=settings.stop_timeout_s,
        warm_per_node=settings.warm_workers,
        eager=eager,
    )


def _wake(runner: Runner | None) -> None:
    if runner is not None:
        runner.wake()


# --- submission -----------------------------------------------------------------------------------


def check_graph(db: Session, settings: Settings, user: User, raw: dict[str, Any]) -> dict[str, Any]:
    """The graph to store, after the policy and full engine validation; GraphRejected (422) otherwise."""
    data = graph_service.parse(raw)[1]
    refused = check_graph_policy(data, user)
    if refused:
        raise GraphRejected("the graph reads server paths", refused)
    from dragdl.engine.analysis.validate import validate_graph

    result = validate_graph(data, data_context_for(db, settings, user))
    if not result.ok:
        errors = public_graph_errors(result.errors, settings.data_dir, user.is_admin)
        raise GraphRejected("the graph does not validate", errors)
    return data


def _train_node(graph: dict[str, Any]) -> dict[str, Any] | None:
    from dragdl.engine.nodes.train_node import find_train_node

    found = find_train_node(graph)
    return None if found is None else found[0]


def resources_for(requested: TaskResources, graph: dict[str, Any]) -> dict[str, float | None]:
    """What the worker reserves; GraphRejected (422) when the train node asks for cuda and no GPU."""
    device = train_device(graph)
    gpus = requested.gpus
    if gpus is None and device in ("cuda", "cpu"):
        gpus = 1.0 if device == "cuda" else 0.0
    if device == "cuda" and gpus == 0:
        node = _train_node(graph)  # there is one: without it the device is auto
        problem = GraphError(
            code="param_invalid",
            message=f"device is cuda but the task asks for {gpus:g} GPUs (resources.gpus): "
            "submit with resources.gpus: 1, or set device to auto or cpu",
            node_id=str(node["id"]) if node else None,
            field="device",
        )
        raise GraphRejected("the resources do not fit the graph", [problem])
    return {"cpus": requested.cpus, "gpus": gpus}


def train_node_id(graph: dict[str, Any]) -> str | None:
    node = _train_node(graph)
    return str(node["id"]) if node else None


def within_caps(
    settings: Settings, user: User, resources: dict[str, float | None], graph: dict[str, Any]
) -> dict[str, float | None]:
    """The resources if the user's caps per task allow them; GraphRejected (422) on the train node.
    A distributed run's workers count in all: `workers` times each one's CPUs and GPUs."""
    node = _train_node(graph)
    node_id = str(node["id"]) if node else None
    workers = distributed_workers(graph)
    if workers is not None:
        limits = limits_of(settings, user)
        for unit, asked, cap in (
            ("CPUs", workers.total.cpus, limits.max_cpus_per_task),
            ("GPUs", workers.total.gpus, limits.max_gpus_per_task),
        ):
            if asked > cap:
                message = (
                    f"the run's {workers.count} workers ask for {asked:g} {unit} in all, more than the "
                    f"{cap:g} one task of yours may use: ask for fewer workers or less per worker"
                )
                details = {"requested": asked, "cap": cap}
                error = GraphError(
                    code="resources_over_cap",
                    message=message,
                    node_id=node_id,
                    field="workers",
                    details=details,
                )
                raise GraphRejected("the resources are above your caps", [error])
    else:
        # One process, whatever its share: a sliver of a CPU would let a few accounts start more
        # processes than the machine has cores, each with its own memory.
        share, least = resources.get("cpus"), settings.min_cpus_per_worker
        if share is not None and share < least:
            error = GraphError(
                code="worker_share_too_small",
                message=f"the task asks for {share:g} CPUs (resources.cpus), less than the {least:g} a "
                f"task's process must have: it is a whole process whatever its share. Ask for at least "
                f"{least:g}",
                node_id=node_id,
                field="resources.cpus",
                details={"requested": share, "least": least},
            )
            raise GraphRejected("the task's process asks for too small a CPU share", [error])
    return cap_resources(settings, user, resources, node_id)


def check_fits_a_node(
    runner: Runner | None, resources: dict[str, float | None], graph: dict[str, Any]
) -> None:
    """GraphRejected (422) naming the train node's `resources` when no node of the cluster could hold
    the task: its worker is one process on one node. Unknown until the runner has connected (then
    the scheduler keeps such a task QUEUED and says why)."""
    from dragdl.runner.placement import can_ever_hold

    nodes = runner.nodes() if runner is not None else None
    if nodes is None:
        return
    workers = distributed_workers(graph)
    if workers is not None:
        _check_workers_fit(workers, nodes, graph)
        return
    need = needed(resources, graph, nodes)
    if can_ever_hold(need, nodes):
        return
    node = _train_node(graph)
    problems = []
    for name, unit, asked, most in (
        ("cpus", "CPUs", need.cpus, max((n.total.cpus for n in nodes), default=0.0)),
        ("gpus", "GPUs", need.gpus, max((n.total.gpus for n in nodes), default=0.0)),
    ):
        if asked > most:
            problems.append(
                GraphError(
                    code="resources_exceed_nodes",
                    message=f"the task asks for {asked:g} {unit} (resources.{name}), but no node of the "
                    f"cluster has that many: the largest has {most:g}. A task runs on one node: ask for "
                    f"at most {most:g}",
                    node_id=str(node["id"]) if node else None,
                    field=f"resources.{name}",
                    details={"requested": asked, "largest": most},
                )
            )
    if not problems:  # each fits some node, never both on one
        problems.append(
            GraphError(
                code="resources_exceed_nodes",
                message=f"the task asks for {need.cpus:g} CPUs and {need.gpus:g} GPUs, but no node of "
                "the cluster has both: ask for fewer CPUs on a GPU node",
                node_id=str(node["id"]) if node else None,
                field="resources.cpus",
                details={"requested": need.cpus, "largest": None},
            )
        )
    raise GraphRejected("no node of the cluster can hold the task", problems)


def _check_workers_fit(workers: Workers, nodes: list[Node], graph: dict[str, Any]) -> None:
    """GraphRejected (422) on the train node's `workers` when the idle cluster cannot hold them all."""
    from dragdl.runner.placement import can_ever_hold_workers, slots

    if can_ever_hold_workers(workers, nodes):
        return
    node = _train_node(graph)
    node_id = str(node["id"]) if node else None
    room = sum(slots(n.total, workers.each) for n in nodes if workers.each.fits_in(n.total))
    if room == 0:  # not even one worker fits a node: name the resource no node has enough of
        sizes = [
            ("cpus", "CPUs", workers.each.cpus, max((n.total.cpus for n in nodes), default=0.0)),
            ("gpus", "GPUs", workers.each.gpus, max((n.total.gpus for n in nodes), default=0.0)),
        ]
        short = [size for size in sizes if size[2] > size[3]]
        name, unit, asked, most = short[0] if short else sizes[0]
        message = (
            f"each worker asks for {asked:g} {unit}, but the most on one node of the cluster is {most:g}"
            if short
            else f"each worker asks for {workers.each.cpus:g} CPUs and {workers.each.gpus:g} GPUs, "
            "but no node of the cluster has both"
        )
        field, details = f"{name}_per_worker", {"requested": asked, "largest": most}
    else:
        message = (
            f"the run asks for {workers.count} workers, but the cluster's nodes hold at most {room} "
            f"of {workers.each.cpus:g} CPU(s) and {workers.each.gpus:g} GPU(s) each: ask for fewer "
            "workers or less per worker"
        )
        field, details = "workers", {"requested": float(workers.count), "largest": float(room)}
    error = GraphError(
        code="workers_exceed_cluster", message=message, node_id=node_id, field=field, details=details
    )
    raise GraphRejected("the cluster cannot hold the run's workers", [error])


def _queue(
    db: Session,
    user: User,
    data: dict[str, Any],
    name: str,
    graph_id: str | None,
    priority: int,
    resources: dict[str, float | None],
    message: str,
) -> Task:
    task = Task(
        owner_id=user.id,
        name=name,
        graph_id=graph_id,
        graph_snapshot=data,
        status=TaskStatus.QUEUED,
        priority=priority,
        resources=resources,
        max_attempts=DEFAULT_MAX_ATTEMPTS,
    )
    db.add(task)
    db.flush()
    add_event(db, task.id, "status", {"status": TaskStatus.QUEUED.value, "message": message})
    db.commit()
    return task


def requested_graph(
    db: Session, user: User, graph_id: str | None, graph: dict[str, Any] | None, fallback_name: str
) -> tuple[dict[str, Any], str | None, str]:
    """The graph a request names (a saved graph of the caller's, by id) or sends inline: its JSON,
    the saved graph's id (None inline) and the name to give what is made of it."""
    if graph_id is not None:
        row = graph_service.get_graph(db, user, graph_id)
        if row is None or row.owner_id != user.id:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no graph {graph_id!r}")
        return graph_service.current_data(db, row), row.id, row.name
    assert graph is not None
    return graph, None, str(graph.get("name") or fallback_name)


def submit(db: Session, settings: Settings, user: User, body: TaskCreate, runner: Runner | None) -> Task:
    raw, graph_id, default_name = requested_graph(db, user, body.graph_id, body.graph, "task")
    data = check_graph(db, settings, user, raw)
    resources = admission.admit(db, settings, user, data, body.resources, runner)
    task = _queue(
        db, user, data, body.name or default_name[:200], graph_id, body.priority, resources, "submitted"
    )
    _wake(runner)
    return task


# --- reading --------------------------------------------------------------------------------------


def _order(sort: TaskSort) -> list[ColumnElement[Any]]:
    newest: list[ColumnElement[Any]] = [Task.created_at.desc(), Task.id.desc()]
    if sort == "oldest":
        return [Task.created_at.asc(), Task.id.asc()]
    if sort == "status":
        # The order of a task's life, not the alphabet: waiting and running tasks come first.
        rank = case(*((Task.status == value, index) for index, value in enumerate(TaskStatus)))
        return [rank, *newest]
    if sort == "name":
        return [func.lower(Task.name), *newest]
    return newest


def list_tasks(
    db: Session,
    user: User,
    status_filter: TaskStatus | None,
    offset: int,
    limit: int,
    sort: TaskSort = "newest",
) -> tuple[list[Task], int]:
    """A page of the user's tasks in the order `sort` names (default: newest first), and their count."""
    where = [Task.owner_id == user.id]
    if status_filter is not None:
        where.append(Task.status == status_filter)
    count = db.scalar(select(func.count()).select_from(Task).where(*where)) or 0
    query = select(Task).where(*where).order_by(*_order(sort)).offset(offset).limit(limit)
    return list(db.scalars(query)), count


def get_task(db: Session, user: User, task_id: str) -> Task:
    """The user's task (administrators: anyone's); another user's task does not exist for them (404)."""
    query = select(Task).where(Task.id == task_id)
    if not user.is_admin:
        query = query.where(Task.owner_id == user.id)
    task = db.scalar(query)
    if task is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no task {task_id!r}")
    return task


def train_config(task: Task) -> dict[str, Any]:
    from dragdl.engine.nodes.train_node import find_train_node

    found = find_train_node(task.graph_snapshot)
    if found is None:
        return {}
    node, kind = found
    params = node.get("params") or {}
    try:
        dumped: dict[str, Any] = kind.params_model.model_validate(params).model_dump()
        return dumped
    except ValueError:
        return dict(params)


def events_after(db: Session, task_id: str, after_id: int, limit: int = EVENTS_PAGE) -> list[TaskEvent]:
    query = (
        select(TaskEvent)
        .where(TaskEvent.task_id == task_id, TaskEvent.id > after_id)
        .order_by(TaskEvent.id)
        .limit(limit)
    )
    return list(db.scalars(query))


def task_status(db: Session, task_id: str) -> TaskStatus | None:
    return db.scalar(select(Task.status).where(Task.id == task_id))


def metric_events(db: Session, task_id: str, scope: str | None) -> list[TaskEvent]:
    rows = db.scalars(
        select(TaskEvent)
        .where(TaskEvent.task_id == task_id, TaskEvent.kind == "metric")
        .order_by(TaskEvent.id)
    )
    return [row for row in rows if scope is None or row.data.get("scope") == scope]


def read_log(settings: Settings, task: Task, offset: int, limit: int = LOG_CHUNK_BYTES) -> TaskLog:
    """Up to `limit` bytes of log.txt from `offset`, cut after the last whole line when there is more."""
    path = settings.artifacts_dir / task.id / "log.txt"
    if not path.is_file():
        return TaskLog(text="", offset=0, next_offset=0, size=0)
    size = path.stat().st_size
    offset = min(offset, size)
    with path.open("rb") as f:
        f.seek(offset)
        chunk = f.read(limit)
    if offset + len(chunk) < size and b"\n" in chunk:
        chunk = chunk[: chunk.rindex(b"\n") + 1]
    text = chunk.decode("utf-8", errors="replace")
    return TaskLog(text=text, offset=offset, next_offset=offset + len(chunk), size=size)


def read_report(settings: Settings, task: Task) -> dict[str, Any]:
    """report.json of the run: test metrics, per-class precision/recall/F1, confusion matrix, history."""
    path = settings.artifacts_dir / task.id / "report.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report = None  # written atomically: unreadable means not there
    if not isinstance(report, dict):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"task {task.id} has no report yet")
    return report


# --- actions --------------------------------------------------------------------------------------


def _conflict(task: Task, action: str) -> HTTPException:
    return HTTPException(
        status.HTTP_409_CONFLICT, f"task {task.id} is {task.status.value}: cannot {action} it"
    )


def stop_task(db: Session, task: Task, runner: Runner | None) -> Task:
    """A queued task stops at once; a running one checkpoints first (killed after the stop timeout)."""
    if task.status == TaskStatus.QUEUED:
        finish(
            db, task.id, TaskStatus.STOPPED, "stopped before it started", from_statuses=(TaskStatus.QUEUED,)
        )
        db.refresh(task)
    if task.status == TaskStatus.RUNNING:
        if not task.stop_requested and guarded_update(
            db, [Task.id == task.id, Task.status == TaskStatus.RUNNING], stop_requested=True
        ):
            db.commit()
            _wake(runner)
        db.refresh(task)
    if task.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
        raise _conflict(task, "stop")
    return task


def retry_task(db: Session, task: Task, runner: Runner | None) -> Task:
    """FAILED or STOPPED -> QUEUED, resuming from the newest checkpoint, with a fresh retry budget.

    The stored graph passed the policy when it was submitted; it is checked again against what its
    owner may do now (an administrator since demoted, or a graph stored under an older policy), so
    a retried worker never reads what a new submission could not.
    """
    owner = db.get(User, task.owner_id)
    refused = check_graph_policy(task.graph_snapshot, owner) if owner is not None else []
    if refused:
        raise GraphRejected("the graph reads server paths", refused)
    retryable = (TaskStatus.FAILED, TaskStatus.STOPPED)
    ok = guarded_update(
        db,
        [Task.id == task.id, Task.status.in_(retryable)],
        status=TaskStatus.QUEUED,
        resume=True,
        stop_requested=False,
        error=None,
        finished_at=None,
        max_attempts=Task.attempts + DEFAULT_MAX_ATTEMPTS,
    )
    if not ok:
        db.rollback()
        raise _conflict(task, "retry")
    message = "retry requested: resuming from the last checkpoint"
    add_event(db, task.id, "status", {"status": TaskStatus.QUEUED.value, "message": message})
    db.commit()
    db.refresh(task)
    _wake(runner)
    return task


def clone_task(db: Session, settings: Settings, user: User, task: Task, runner: Runner | None) -> Task:
    """A new queued task training the same graph from scratch (validated again: data may have changed)."""
    data = check_graph(db, settings, user, task.graph_snapshot)
    stored = task.resources or {}
    asked = TaskResources(cpus=float(stored.get("cpus") or 1.0), gpus=stored.get("gpus"))
    requested = admission.admit(db, settings, user, data, asked, runner)
    name = f"{task.name} (copy)"[:200]
    clone = _queue(
        db, user, data, name, task.graph_id, task.priority, requested, f"cloned from task {task.id}"
    )
    _wake(runner)
    return clone


def delete_task(db: Session, settings: Settings, task: Task, runner: Runner | None) -> None:
    """Kill a running worker first, then remove the task, its events and its artifacts folder.

    A model trained by the task keeps its bundle (model.json, weights, report); only the checkpoints
    go. The model row then belongs to no task and deleting the model removes the folder.
    """
    if task.status == TaskStatus.RUNNING:
        guarded_update(db, [Task.id == task.id, Task.status == TaskStatus.RUNNING], stop_requested=True)
        db.commit()
        if runner is not None and not runner.kill(task.id, KILL_TIMEOUT_S):
            raise HTTPException(status.HTTP_409_CONFLICT, f"the worker of task {task.id} could not be killed")
    active = (TaskStatus.QUEUED, TaskStatus.RUNNING)
    finish(db, task.id, TaskStatus.STOPPED, "deleted", from_statuses=active)
    has_model = (db.scalar(select(func.count()).select_from(Model).where(Model.task_id == task.id)) or 0) > 0
    folder = settings.artifacts_dir / task.id
    db.delete(task)
    db.commit()
    shutil.rmtree(folder / "checkpoints" if has_model else folder, ignore_errors=True)
