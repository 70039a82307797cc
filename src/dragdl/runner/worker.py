"""One attempt of a task, inside its own worker process: the entry point the runner launches.

The attempt opens its own database connection, takes the task (guarded by its `worker_ref`), trains
with `engine.run.run_graph`, and writes how it ended: SUCCEEDED (with the `Model` row), STOPPED,
or FAILED with `{code, message, node_id}`. Errors of the graph and its data are deterministic (the
same run fails the same way again), so they end the task at once; infrastructure errors (the
database, storage, Ray; see `failures.classify`) re-queue it to resume from its last checkpoint while
attempts are left, and so does a worker that dies (the scheduler sees to that one). Every write of
the attempt rides out a database outage (`failures.retry_db`, the reporter's buffer).

A monitor thread heartbeats every second, relays a stop request from the database to the trainer
(which checkpoints and returns "stopped"), relays the server's shutdown (`suspend.py`: checkpoint
now, then hand the task back QUEUED), and quits the process if the attempt lost the task to another
one (a re-queue after a server restart): two attempts must never write one run folder. A folder
deleted under a running task is noticed at the next metric or checkpoint and fails the task.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Model, Task, TaskStatus, User
from dragdl.db.session import make_engine, make_session_factory
from dragdl.paths import hide_server_paths
from dragdl.runner.base import LaunchSpec
from dragdl.runner.failures import DB_RETRY_S, TaskFolderDeleted, classify, retry_db
from dragdl.runner.folder import FolderGuard
from dragdl.runner.reporter import DBReporter, PathHidingReporter
from dragdl.runner.suspend import suspend_requested
from dragdl.runner.transitions import add_event, finish, heartbeat, requeue, retry_or_fail

if TYPE_CHECKING:
    from dragdl.engine.inputs.base import InputType
    from dragdl.engine.tasks.base import TaskKind

log = logging.getLogger(__name__)

HEARTBEAT_S = 1.0
MODEL_METRIC_KEYS = ("test", "averages", "best_epoch", "best_score", "monitor", "epochs_completed")
"""What a Model row keeps from report.json (the same keys the bundle's model.json carries)."""
SUPERSEDED = "superseded"
"""The attempt found the task taken over (stopped, deleted or re-queued) and wrote nothing."""
LEASE_LOST_EXIT_CODE = 75


class TaskWorker:
    """The Ray actor class: one actor (one process) per attempt, named after its worker_ref.

    A warm worker is started ahead of its attempt, under a name of its own that becomes the attempt's
    worker_ref: it imports the training code while it waits, so a task's first step does not wait
    for a process to start and torch to load."""

    def __init__(self, warm: bool = False) -> None:
        hide_unassigned_gpus()
        if warm:
            import dragdl.engine.run  # noqa: F401  (torch, torchvision and the engine)

    def visible_gpus(self) -> str | None:
        """CUDA_VISIBLE_DEVICES as this process sees it ("" hides every GPU; None: all visible)."""
        return os.environ.get("CUDA_VISIBLE_DEVICES")

    def run(self, spec: LaunchSpec) -> str:
        import torch

        # Ray sizes a process's thread pools by the CPUs its actor reserved, and a warm worker
        # reserves none while it waits: size them by what the scheduler gave the task.
        torch.set_num_threads(max(1, round(spec.resources.cpus)))
        return execute_attempt(spec)


def hide_unassigned_gpus() -> None:
    """Hide every GPU from a worker Ray gave none: Ray leaves CUDA_VISIBLE_DEVICES alone then (unset
    or inherited), and `device: auto` would train on another user's GPU. Before CUDA is initialised,
    which reads the variable once."""
    import ray

    if not ray.is_initialized() or ray.get_gpu_ids():
        return
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


def execute_attempt(
    spec: LaunchSpec, *, exit_on_lost_lease: bool = True, heartbeat_s: float = HEARTBEAT_S
) -> str:
    """Run one attempt to its end; returns the final status written, or SUPERSEDED."""
    engine = make_engine(spec.config.database_url)
    try:
        return _Attempt(spec, make_session_factory(engine), exit_on_lost_lease, heartbeat_s).run()
    finally:
        engine.dispose()


class _Monitor(threading.Thread):
    """Heartbeats, relays stop requests, and notices when the attempt no longer owns the task."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        spec: LaunchSpec,
        stop: threading.Event,
        on_lost: Callable[[], None],
        interval_s: float,
    ) -> None:
        super().__init__(name=f"dragdl-monitor-{spec.task_id}", daemon=True)
        self.sessions, self.spec, self.stop, self.on_lost, self.interval_s = (
            sessions,
            spec,
            stop,
            on_lost,
            interval_s,
        )
        self.lost = False
        self.suspended = False
        """The server is shutting down: checkpoint now and hand the task back."""
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(self.interval_s):
            if not self.suspended and suspend_requested(self.spec.config.data_dir, self.spec.worker_ref):
                self.suspended = True
                self.stop.set()
            try:
                owned, stop_requested = self._beat()
            except SQLAlchemyError as exc:  # a busy or restarting database: try again next beat
                log.warning("heartbeat of task %s failed: %s", self.spec.task_id, exc)
                continue
            if not owned:
                self.lost = True
                log.warning(
                    "task %s was taken over; attempt %s quits", self.spec.task_id, self.spec.worker_ref
                )
                self.on_lost()
                return
            if stop_requested and not self.stop.is_set():
                self.stop.set()

    def _beat(self) -> tuple[bool, bool]:
        task_id, ref = self.spec.task_id, self.spec.worker_ref
        with self.sessions() as db:
            if not heartbeat(db, task_id, ref):
                return False, False
            stop_requested = bool(db.scalar(select(Task.stop_requested).where(Task.id == task_id)))
            if stop_requested and not self.stop.is_set():
                message = "stop requested: the run stops after its next checkpoint"
                add_event(db, task_id, "log", {"level": "info", "message": message})
            db.commit()
            return True, stop_requested

    def finish(self) -> None:
        self._done.set()
        self.join()


class _Attempt:
    def __init__(
        self, spec: LaunchSpec, sessions: sessionmaker[Session], exit_on_lost_lease: bool, heartbeat_s: float
    ) -> None:
        self.spec, self.sessions = spec, sessions
        self.exit_on_lost_lease, self.heartbeat_s = exit_on_lost_lease, heartbeat_s
        self.out_dir = spec.config.artifacts_dir / spec.task_id
        self.stop = threading.Event()

    def run(self) -> str:
        from dragdl.engine.run import run_graph
        from dragdl.engine.train.events import ErrorEvent, LogEvent
        from dragdl.engine.train.reporter import JsonlReporter, MultiReporter, Reporter

        taken = self._take()
        if taken is None:
            return SUPERSEDED
        task = taken
        resume = task.resume or task.attempts > 1
        monitor = _Monitor(self.sessions, self.spec, self.stop, self._lost_lease, self.heartbeat_s)
        data_dir = self.spec.config.data_dir
        db_reporter = DBReporter(
            self.sessions, task.id, self.spec.worker_ref, data_dir, task=_task_kind(task.graph_snapshot)
        )
        files = JsonlReporter(self.out_dir)
        hide_paths = not self._owner_is_admin(task)
        reporter: Reporter = MultiReporter(db_reporter, files)
        if hide_paths:
            reporter = PathHidingReporter(reporter, data_dir)
        note = "resuming from the newest checkpoint" if resume else "starting from scratch"
        reporter.emit(LogEvent("info", f"attempt {task.attempts} in process {os.getpid()}: {note}"))
        monitor.start()
        error: dict[str, Any] | None = None
        infrastructure: str | None = None
        status = "failed"
        try:
            result = run_graph(
                task.graph_snapshot,
                self.spec.context,
                self.out_dir,
                MultiReporter(FolderGuard(self.out_dir, files.events_path), reporter),
                resume=resume,
                stop=self.stop,
            )
            status = result.status
        except Exception as exc:
            if classify(exc) == "infrastructure":
                infrastructure = f"{type(exc).__name__}: {_first_line(str(exc))}"
                if hide_paths:
                    infrastructure = hide_server_paths(infrastructure, data_dir)
                log.warning("task %s: infrastructure error: %s", task.id, infrastructure)
                db_reporter.emit(LogEvent("warning", f"infrastructure error: {infrastructure}"))
            else:
                error = describe_error(exc, task.graph_snapshot)
                log.info("task %s failed: %s", task.id, error["message"])
                if hide_paths:
                    error["message"] = hide_server_paths(error["message"], data_dir)
                db_reporter.emit(LogEvent("error", error["message"]))
                if not files.error_logged:  # an error in training is in log.txt already, from the trainer
                    files.emit(ErrorEvent(error["code"], error["message"], error["node_id"]))
        finally:
            monitor.finish()
            files.close()
        db_reporter.flush(DB_RETRY_S)
        if monitor.lost or db_reporter.lost:
            return SUPERSEDED
        if infrastructure is not None:
            return self._retry(task, infrastructure)
        if status == "stopped" and monitor.suspended:
            return self._hand_back(task)
        return self._finish(task, status, error)

    def _owner_is_admin(self, task: Task) -> bool:
        with self.sessions() as db:
            return bool(db.scalar(select(User.is_admin).where(User.id == task.owner_id)))

    def _take(self) -> Task | None:
        """Record this process as the task's worker; None when the task is no longer this attempt's."""

        def take(db: Session) -> Task | None:
            if not heartbeat(db, self.spec.task_id, self.spec.worker_ref, worker_pid=os.getpid()):
                return None
            db.commit()
            return db.get(Task, self.spec.task_id)

        return retry_db(self.sessions, take, f"task {self.spec.task_id}: taking the task")

    def _retry(self, task: Task, reason: str) -> str:
        failure = f"the task failed on infrastructure errors {task.attempts} times; last: {reason}"

        def write(db: Session) -> TaskStatus | None:
            current = db.get(Task, task.id) or task
            return retry_or_fail(
                db,
                current,
                worker_ref=self.spec.worker_ref,
                reason=f"infrastructure error ({reason})",
                code="infrastructure_failed",
                failure=failure,
            )

        ended = retry_db(self.sessions, write, f"task {task.id}: recording a retry")
        return ended.value if ended is not None else SUPERSEDED

    def _hand_back(self, task: Task) -> str:
        message = "the server is shutting down: checkpointed, the task resumes when the server is back"

        def write(db: Session) -> bool:
            return requeue(db, task.id, message, worker_ref=self.spec.worker_ref, spare_attempt=True)

        handed = retry_db(self.sessions, write, f"task {task.id}: handing the task back")
        return TaskStatus.QUEUED.value if handed else SUPERSEDED

    def _lost_lease(self) -> None:
        if self.exit_on_lost_lease:
            # Another attempt owns the run folder now; exiting at once is the only way to be sure
            # this one writes nothing more (the trainer would otherwise write a checkpoint on stop).
            os._exit(LEASE_LOST_EXIT_CODE)
        self.stop.set()

    def _finish(self, task: Task, status: str, error: dict[str, Any] | None) -> str:
        ref = self.spec.worker_ref

        def write(db: Session) -> TaskStatus | None:
            if status == "succeeded":
                # A fresh row each try: a rolled-back try must not leave the object half-persisted.
                model = self._model_row(task)
                done = finish(
                    db, task.id, TaskStatus.SUCCEEDED, "training finished", worker_ref=ref, model=model
                )
                final = TaskStatus.SUCCEEDED
            elif status == "stopped":
                message = "stopped after a checkpoint; resume to continue"
                done = finish(db, task.id, TaskStatus.STOPPED, message, worker_ref=ref)
                final = TaskStatus.STOPPED
            else:
                assert error is not None
                done = finish(db, task.id, TaskStatus.FAILED, error["message"], worker_ref=ref, error=error)
                final = TaskStatus.FAILED
            return final if done else None

        ended = retry_db(self.sessions, write, f"task {task.id}: recording its end")
        return ended.value if ended is not None else SUPERSEDED

    def _model_row(self, task: Task) -> Model:
        return Model(
            owner_id=task.owner_id,
            task_id=task.id,
            name=task.name,
            path=f"artifacts/{task.id}",
            **model_fields(self.out_dir),
        )


def _task_kind(graph: dict[str, Any]) -> TaskKind | None:
    from dragdl.engine.nodes.train_node import find_train_node

    found = find_train_node(graph)
    return found[1].task if found is not None else None


def model_fields(out_dir: Path) -> dict[str, Any]:
    """What a Model row keeps of a finished run folder's report.json and model.json: classes, test
    metrics, input spec, the task kind, the input type and what the input type keeps of its own
    (`InputType.model_fields`: a table model's input columns and target)."""
    report = _read_json(out_dir / "report.json")
    manifest = _read_json(out_dir / "model.json")
    kind = model_task(manifest, report)
    # A regressor's dataset "classes" are its distinct target values, not classes it answers.
    from dragdl.engine.tasks.registry import get_task_kind

    listed = get_task_kind(kind).classes_are_vocabulary
    classes = (manifest.get("classes") or report.get("classes") or []) if listed else []
    input_type = model_input_type(manifest)
    fields: dict[str, Any] = {"input_columns": None, "target": None}
    fields.update(input_type.model_fields(manifest))
    return {
        "classes": list(classes),
        "metrics": {key: report[key] for key in MODEL_METRIC_KEYS if key in report},
        "input_spec": dict(manifest.get("input") or {}),
        "task": kind,
        "input_type": input_type.name,
        **fields,
    }


def model_input_type(manifest: dict[str, Any]) -> InputType:
    """The input type of a finished run's bundle: its dataset node's (model.json's `dataset.type`), as
    load_bundle reads it; the images' for a bundle whose dataset node this DragDL does not know."""
    from dragdl.engine.inputs.images import IMAGES
    from dragdl.engine.nodes.base import DatasetNode
    from dragdl.engine.nodes.registry import get_node_type

    dataset = manifest.get("dataset")
    node_type = dataset.get("type") if isinstance(dataset, dict) else None
    kind = get_node_type(node_type) if isinstance(node_type, str) else None
    return kind.input_type if isinstance(kind, DatasetNode) else IMAGES


def model_task(manifest: dict[str, Any], report: dict[str, Any]) -> str:
    """The task kind of a finished run: model.json's `task`, else report.json's, else classification
    (what every bundle written before task kinds is)."""
    for source in (manifest, report):
        kind = source.get("task")
        if isinstance(kind, str) and kind:
            return kind
    return "classification"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- errors -------------------------------------------------------------------------------------------


def describe_error(exc: BaseException, graph: dict[str, Any]) -> dict[str, Any]:
    """`{code, message, node_id}` for a failed run; the message names the node when one is known."""
    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.errors import EngineError
    from dragdl.engine.graph.errors import GraphInvalid
    from dragdl.engine.graph.expr import ExprError

    code, node_id = "train_failed", None
    message = _clean(str(exc)) or type(exc).__name__
    if isinstance(exc, GraphInvalid):
        code = "graph_invalid"
        node_id = next((e.node_id for e in exc.errors if e.node_id), None)
        message = "; ".join(e.describe() for e in exc.errors)
    elif isinstance(exc, EngineError):  # every other engine error carries its code and node
        code, node_id, message = exc.code, exc.node_id, _clean(exc.message)
        if node_id is None and isinstance(exc, DatasetError):
            node_id = _first_node(graph, "dataset.")  # the graph has one dataset node
    elif isinstance(exc, ExprError):
        code, node_id = "expression_failed", _first_node(graph, "op.Lambda")
    elif isinstance(exc, TaskFolderDeleted):
        code = "folder_deleted"
    else:
        message = f"{type(exc).__name__}: {message}"
    if node_id and not isinstance(exc, GraphInvalid) and not message.startswith(f"node {node_id}"):
        message = f"node {node_id}: {message}"
    return {"code": code, "message": message, "node_id": node_id}


_EXCEPTION_PREFIX = re.compile(r"^[\w.]+(Error|Exception): ")


def _clean(message: str) -> str:
    """The last line of an error re-raised from a DataLoader worker, without its traceback."""
    if "Original Traceback" in message:
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        message = _EXCEPTION_PREFIX.sub("", lines[-1]) if lines else message
    return message.strip()


def _first_line(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[0] if lines else ""


def _first_node(graph: dict[str, Any], type_prefix: str) -> str | None:
    nodes = graph.get("nodes", [])
    found = [
        n.get("id") for n in nodes if isinstance(n, dict) and str(n.get("type", "")).startswith(type_prefix)
    ]
    return found[0] if len(found) == 1 and isinstance(found[0], str) else None
