"""The scheduler: a background thread in the server that turns QUEUED tasks into running workers.

Policy, with every decision written to the database before it is acted on:

- Order: first submitted first across users (a retried task keeps its place); a user's priority
  reorders only that user's own queued tasks, within the places they hold (`fair_order`), so no
  user can move ahead of another.
- Quota: at most `user.max_running_tasks` (else the server default) RUNNING tasks per user; a user
  at quota is skipped, the tasks of others behind it still start.
- Placement (`demand.py`, `placement.py`): a worker is one process, so a task starts only on one
  node that holds its CPUs and GPUs (a distributed run: each of its workers on a node with room):
  the node's total minus what this scheduler's workers declared there, read again every pass so a
  node that joins starts queued work at once. The worker is pinned to that node. A task that
  waits for room keeps every node that could hold it: later tasks start only on other nodes, so a
  large task is not starved by a stream of small ones. A task that no node could hold even idle
  stays QUEUED, out of the line, until a large enough node joins (the server refuses such a task at
  submission when it knows the cluster). Each waiting task's `queued_reason` says why it waits.
- Stop: the worker sees `stop_requested`, checkpoints and ends STOPPED; a worker that has not
  ended `stop_timeout_s` after the scheduler first saw the request is killed and marked STOPPED.
- Crash: a worker that died (or stopped heartbeating for `heartbeat_timeout_s`) is re-queued to
  resume from its last checkpoint while attempts < max_attempts, else the task FAILS. A worker
  that died with its node (the node left the cluster) is re-queued without using up a retry.
  A stale heartbeat is the worker's fault only while the database takes writes (`liveness.py`).
- Storage: a worker that could not be started for an error of the machine (a full data disk: the
  backend starts no process whose record it cannot write) re-queues its task without using up a
  retry, and the scheduler starts nothing for a while (capped exponential backoff).
- Restart: RUNNING tasks whose worker still runs (found by its `worker_ref`, heartbeat fresh) are
  adopted; the others are re-queued to resume from their checkpoint (this does not use up a retry).
  The same check runs every `heartbeat_timeout_s / 2` while the server runs, so no task stays
  RUNNING without a live worker (say, after a database outage) beyond the heartbeat timeout.
- Database outages: an ended attempt stays tracked until its end is committed; a pass that fails on
  a transient database error is tried again with capped exponential backoff.
- Shutdown: each running worker is asked to checkpoint now and hand its task back (QUEUED, to
  resume at the next start); the scheduler waits up to `stop_timeout_s` for them before Ray stops.

Ray is started by the scheduler thread once there is work (a QUEUED or RUNNING task; at once with
`eager=True`), so a server that never trains, and every test app, neither waits for it nor pays
its memory; the API answers while it starts.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Task, TaskStatus, User, utcnow
from dragdl.runner.base import Backend, LaunchSpec, Outcome, Resources, Runner, WorkerConfig
from dragdl.runner.demand import Demand, Placed, demand_of
from dragdl.runner.failures import backoff_delays, classify, is_transient_db_error
from dragdl.runner.liveness import HeartbeatJudge
from dragdl.runner.placement import Node, QueuedReason, running_limit
from dragdl.runner.suspend import clear_requests, request_suspend
from dragdl.runner.transitions import (
    age_s,
    finish,
    note_queued_reason,
    requeue,
    retry_or_fail,
    start_attempt,
)

if TYPE_CHECKING:
    from dragdl.engine.data.base import DataContext

log = logging.getLogger(__name__)

ContextFor = Callable[[Session, User], "DataContext"]
LAUNCH_BACKOFF_FIRST_S = 2.0
LAUNCH_BACKOFF_MAX_S = 60.0
KillReason = Literal["stop_timeout", "killed", "heartbeat"]


@dataclass
class Attempt:
    """A worker this scheduler launched (or adopted after a restart) and has not seen end yet."""

    task_id: str
    worker_ref: str
    resources: Resources
    handle: Any
    node_id: str | None = None
    """The node it was placed on (None: unknown, e.g. adopted from before nodes were recorded)."""
    held: dict[str, Resources] = field(default_factory=dict)
    """What it holds on each node: its process's resources, or a distributed run's workers."""
    adopted: bool = False
    stop_seen: float | None = None
    killed: KillReason | None = None
    killed_at: float | None = None
    """When the scheduler killed it (monotonic): an end Ray never reports is settled after a grace."""

    def mark_killed(self, reason: KillReason) -> None:
        self.killed = self.killed or reason
        self.killed_at = self.killed_at or time.monotonic()


def task_demand(task: Task, nodes: list[Node]) -> Demand:
    return demand_of(task.resources or {}, task.graph_snapshot, nodes)


def used_per_node(attempts: list[Attempt]) -> dict[str, Resources]:
    used: dict[str, Resources] = {}
    for attempt in attempts:
        for node_id, resources in attempt.held.items():
            used[node_id] = used.get(node_id, Resources()) + resources
    return used


def short_node(node_id: str) -> str:
    return node_id[:8]


Place = tuple[datetime, str]
"""A queued task's place in line: when it was submitted (then its id, for equal times)."""


def fair_order(queued: list[Task], moved: dict[str, Place]) -> list[tuple[Task, Task]]:
    """The queued tasks in line, each paired with the task whose place it takes.

    Places go first come, first served across users; each user's tasks fill that user's places in
    priority order, so a priority reorders only the user's own tasks. `moved` holds the places of
    tasks whose own place a higher-priority task of their owner already took.
    """

    def place(task: Task) -> Place:
        return moved.get(task.id, (task.created_at, task.id))

    by_owner: dict[int, list[Task]] = {}
    for task in sorted(queued, key=lambda task: (-task.priority, place(task))):
        by_owner.setdefault(task.owner_id, []).append(task)
    return [(by_owner[holder.owner_id].pop(0), holder) for holder in sorted(queued, key=place)]


class Scheduler(Runner):
    def __init__(
        self,
        backend: Backend,
        sessions: sessionmaker[Session],
        config: WorkerConfig,
        context_for: ContextFor,
        *,
        max_running_per_user: int,
        stop_timeout_s: float,
        heartbeat_timeout_s: float = 120.0,
        poll_s: float = 0.5,
        idle_poll_s: float = 5.0,
        eager: bool = False,
    ) -> None:
        self.backend, self.sessions, self.config, self.context_for = backend, sessions, config, context_for
        self.max_running_per_user = max_running_per_user
        self.stop_timeout_s = stop_timeout_s
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.poll_s, self.idle_poll_s = poll_s, idle_poll_s
        self.eager = eager
        """Start the cluster at once instead of when the first task is waiting."""
        self.error: str | None = None
        """Why the cluster could not be started or joined (the scheduler keeps trying)."""
        self._attempts: dict[str, Attempt] = {}
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self._nodes: list[Node] | None = None
        """The cluster's alive nodes as last read; None until connected."""
        self._moved: dict[str, Place] = {}
        """Queued tasks whose place a higher-priority task of their owner took: the place they got in
        exchange (see `fair_order`). Kept in memory only: after a restart they queue at their own."""
        self._next_orphan_check = 0.0
        self._judge = HeartbeatJudge(sessions, heartbeat_timeout_s)
        self._launch_paused_until = 0.0
        """No worker is started before then: the last could not be, for an error of the machine."""
        self._launch_backoff = backoff_delays(LAUNCH_BACKOFF_FIRST_S, LAUNCH_BACKOFF_MAX_S)

    # -- Runner ------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="dragdl-scheduler", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=120)

    def wake(self) -> None:
        self._wake.set()

    def capacity(self) -> Resources | None:
        if self._nodes is None:
            return None
        return sum((node.total for node in self._nodes), Resources())

    def nodes(self) -> list[Node] | None:
        return self._nodes

    def kill(self, task_id: str, timeout_s: float = 30.0) -> bool:
        with self._lock:
            attempt = self._attempts.get(task_id)
            if attempt is None:
                return True
            attempt.mark_killed("killed")
        self.backend.kill(attempt.handle)
        ended = self.backend.wait_ended(attempt.handle, timeout_s)
        self.wake()
        return ended

    def suspend_running(self) -> None:
        """Ask each running worker to checkpoint and hand its task back (QUEUED), then wait up to
        `stop_timeout_s` for them: the server is stopping and its Ray with it. Workers on a cluster
        the server joined are left running, to be adopted at the next start."""
        with self._lock:
            attempts = list(self._attempts.values())
        if not attempts or not self.backend.stops_workers_on_close():
            return
        for attempt in attempts:
            request_suspend(self.config.data_dir, attempt.worker_ref)
        log.info("asked %d running task(s) to checkpoint before the server stops", len(attempts))
        deadline = time.monotonic() + self.stop_timeout_s
        while self.running() and time.monotonic() < deadline:
            try:
                self._settle_ended()
            except Exception as exc:
                log.warning("while waiting for the running tasks to checkpoint: %s", exc)
            time.sleep(min(self.poll_s, 0.2))  # between polls of the workers, bounded by the deadline

    def running(self) -> list[str]:
        """Ids of the tasks whose workers this scheduler watches."""
        with self._lock:
            return list(self._attempts)

    # -- the loop ----------------------------------------------------------------------------------

    def _main(self) -> None:
        try:
            self._loop()
        finally:
            if self._nodes is not None:
                try:
                    self.suspend_running()
                except Exception:
                    log.exception("could not hand the running tasks back before shutting down")
                # Ray is shut down from the thread that started it: from any other thread its
                # driver shutdown waits 15 s for a thread that will never answer.
                self.backend.close()

    def _loop(self) -> None:
        next_delay = backoff_delays(self.poll_s, max(self.poll_s, 5.0))
        wait_s = self.poll_s
        while not self._closing.is_set():
            if self._nodes is None and not self._connect_when_needed():
                self._wake.wait(self.idle_poll_s)
                self._wake.clear()
                continue
            try:
                self.tick()
                next_delay = backoff_delays(self.poll_s, max(self.poll_s, 5.0))
                wait_s = self.poll_s
            except Exception as exc:
                if is_transient_db_error(exc):
                    # Nothing was dropped: the next pass redoes what this one could not commit.
                    wait_s = next_delay()
                    log.warning("scheduler pass: database unavailable (%s); retrying in %.1f s", exc, wait_s)
                else:
                    wait_s = self.poll_s
                    log.exception("scheduler pass failed")
            self._wake.wait(wait_s)
            self._wake.clear()

    def _connect_when_needed(self) -> bool:
        try:
            with self.sessions() as db:
                waiting = db.scalar(
                    select(Task.id).where(Task.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING))).limit(1)
                )
            if waiting is None and not self.eager:
                return False
            self.connect()
            return True
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            log.exception("could not start the task runner")
            self._wake.wait(30)
            return False

    def connect(self) -> None:
        """Start or join the cluster, then reconcile the database with what still runs there."""
        self.backend.connect()
        clear_requests(self.config.data_dir)
        self._nodes = self.backend.nodes()
        self.error = None
        total = sum((node.total for node in self._nodes), Resources())
        log.info(
            "task runner connected: %d node(s), %s CPUs, %s GPUs", len(self._nodes), total.cpus, total.gpus
        )
        self.reconcile()
        with self._lock:
            running = {attempt.worker_ref for attempt in self._attempts.values()}
        reaped = self.backend.reap_idle_warm(running)
        if reaped:
            log.info("killed %d idle warm worker(s) a previous server left on the cluster", reaped)

    def tick(self) -> None:
        """One scheduling pass: settle ended workers, enforce stops and heartbeats, requeue orphans,
        launch queued tasks."""
        # Read every pass (one call to the cluster): a node that joined holds work at once, a node
        # that left holds none, and the server checks submissions against a fresh list.
        self._refresh_nodes()
        self._settle_ended()
        self._watch_running()
        self._check_orphans()
        self._launch_queued()

    # -- restart reconciliation ----------------------------------------------------------------------

    def _check_orphans(self) -> None:
        """Every half heartbeat timeout: RUNNING tasks this scheduler does not watch are adopted or
        re-queued, as at a restart (their attempt was lost, e.g. while the database was down)."""
        now = time.monotonic()
        if now < self._next_orphan_check:
            return
        self.reconcile(
            "the task's worker was lost while it ran; re-queued to resume from its last checkpoint"
        )
        self._next_orphan_check = now + self.heartbeat_timeout_s / 2

    def reconcile(
        self,
        message: str = (
            "the server restarted and the task's worker was gone; "
            "re-queued to resume from its last checkpoint"
        ),
    ) -> None:
        with self.sessions() as db:
            tasks = list(db.scalars(select(Task).where(Task.status == TaskStatus.RUNNING)))
            for task in tasks:
                with self._lock:
                    if task.id in self._attempts:
                        continue
                handle = self.backend.find(task.worker_ref) if task.worker_ref else None
                if handle is not None and age_s(task.heartbeat_at) <= self.heartbeat_timeout_s:
                    demand = task_demand(task, self._nodes or [])
                    # Where Ray Train put an adopted run's workers is not recorded: counted on its node.
                    total = demand.own + (demand.workers.total if demand.workers else Resources())
                    held = {task.worker_node: total} if task.worker_node else {}
                    attempt = Attempt(
                        task.id,
                        task.worker_ref or "",
                        demand.own,
                        handle,
                        task.worker_node,
                        held,
                        adopted=True,
                    )
                    with self._lock:
                        self._attempts[task.id] = attempt
                    log.info("adopted the running worker of task %s", task.id)
                    continue
                if handle is not None:
                    self.backend.kill(handle)
                if task.stop_requested:
                    finish(
                        db,
                        task.id,
                        TaskStatus.STOPPED,
                        "stopped while the server was down",
                        worker_ref=task.worker_ref,
                    )
                    continue
                if requeue(db, task.id, message, worker_ref=task.worker_ref, spare_attempt=True):
                    log.info("re-queued orphaned task %s", task.id)

    # -- ended workers -------------------------------------------------------------------------------

    def _settle_ended(self) -> None:
        with self._lock:
            attempts = list(self._attempts.values())
        if not attempts:
            return
        by_handle = {id(a.handle): a for a in attempts}
        ended = self.backend.poll([a.handle for a in attempts])
        reported = {id(handle) for handle, _, _ in ended}
        ended += [end for a in attempts if id(a.handle) not in reported for end in self._unreported_end(a)]
        for handle, outcome, detail in ended:
            attempt = by_handle[id(handle)]
            # Tracked until its end is committed: a database error here leaves it for the next pass.
            self._settle(attempt, outcome, detail)
            with self._lock:
                if self._attempts.get(attempt.task_id) is attempt:
                    del self._attempts[attempt.task_id]

    def _unreported_end(self, attempt: Attempt) -> list[tuple[Any, Outcome, str]]:
        """An end Ray has not reported, judged by the scheduler itself. Ray does not always report a
        worker's end: after its node is removed the call's answer can hang, and so can a kill's. A
        worker whose node is no longer in the cluster, or that was killed `stop_timeout_s` ago, has
        ended, whatever Ray says later."""
        nodes = self._nodes
        if attempt.node_id is not None and nodes is not None and all(n.id != attempt.node_id for n in nodes):
            return [(attempt.handle, "died", "its node left the cluster")]
        if attempt.killed_at is not None and time.monotonic() - attempt.killed_at > self.stop_timeout_s:
            return [(attempt.handle, "died", "the killed worker did not report its end")]
        return []

    def _settle(self, attempt: Attempt, outcome: Outcome, detail: str) -> None:
        self.backend.kill(attempt.handle)  # an actor that returned exits by itself; this makes sure
        with self.sessions() as db:
            task = db.get(Task, attempt.task_id)
            if task is None or task.status != TaskStatus.RUNNING or task.worker_ref != attempt.worker_ref:
                return  # the worker wrote its own end (or the task was stopped, deleted or taken over)
            ref = attempt.worker_ref
            if attempt.killed in ("stop_timeout", "killed") or task.stop_requested:
                message = (
                    f"stopped: the worker did not checkpoint within {self.stop_timeout_s:g} s and was killed"
                    if attempt.killed == "stop_timeout"
                    else "stopped: the worker was killed"
                )
                finish(db, task.id, TaskStatus.STOPPED, message, worker_ref=ref)
                return
            if outcome == "died" and attempt.killed is None and self._node_lost(attempt.node_id):
                # Not the task's fault: its node left the cluster. Resume elsewhere, retries kept.
                message = (
                    f"the node {short_node(attempt.node_id or '')} running the task left the cluster; "
                    "re-queued to resume from its last checkpoint"
                )
                if requeue(db, task.id, message, worker_ref=ref, spare_attempt=True):
                    self.wake()
                return
            if attempt.killed == "heartbeat":
                detail = f"no heartbeat for {self.heartbeat_timeout_s:g} s; the worker was killed"
            elif outcome == "returned":
                detail = f"the worker returned {detail!r} without recording an end"
            failure = f"the worker was lost {task.attempts} times; last: {detail}"
            reason = f"worker lost ({detail})"
            ended = retry_or_fail(
                db, task, worker_ref=ref, reason=reason, code="worker_lost", failure=failure
            )
            if ended == TaskStatus.QUEUED:
                self.wake()

    def _refresh_nodes(self) -> None:
        try:
            self._nodes = self.backend.nodes()
        except Exception as exc:  # the cluster's control store did not answer: the pass goes on
            log.warning("could not read the cluster's nodes (%s); using the last list read", exc)

    def _node_lost(self, node_id: str | None) -> bool:
        """Whether the node is no longer an alive member of the cluster (read afresh)."""
        if node_id is None:
            return False
        self._refresh_nodes()
        return all(node.id != node_id for node in self._nodes or [])

    # -- stops and heartbeats ------------------------------------------------------------------------

    def _watch_running(self) -> None:
        with self._lock:
            attempts = {a.task_id: a for a in self._attempts.values()}
        if not attempts:
            return
        with self.sessions() as db:
            rows = db.execute(
                select(
                    Task.id,
                    Task.status,
                    Task.worker_ref,
                    Task.stop_requested,
                    Task.heartbeat_at,
                    Task.worker_pid,
                ).where(Task.id.in_(list(attempts)))
            ).all()
        now = time.monotonic()
        for row in rows:
            attempt = attempts[row.id]
            if row.status != TaskStatus.RUNNING or row.worker_ref != attempt.worker_ref or attempt.killed:
                continue
            if row.stop_requested:
                if attempt.stop_seen is None:
                    attempt.stop_seen = now
                elif now - attempt.stop_seen >= self.stop_timeout_s:
                    log.warning(
                        "task %s did not stop within %s s: killing its worker", row.id, self.stop_timeout_s
                    )
                    attempt.mark_killed("stop_timeout")
                    self.backend.kill(attempt.handle)
            elif row.worker_pid is not None and self._judge.lost(
                row.id, attempt.worker_ref, row.heartbeat_at
            ):
                log.warning("task %s stopped heartbeating: killing its worker", row.id)
                attempt.mark_killed("heartbeat")
                self.backend.kill(attempt.handle)

    # -- launching -----------------------------------------------------------------------------------

    def _launch_queued(self) -> None:
        if self._nodes is None or time.monotonic() < self._launch_paused_until:
            return
        with self.sessions() as db:
            queued = list(
                db.scalars(
                    select(Task)
                    .where(Task.status == TaskStatus.QUEUED)
                    .order_by(Task.created_at, Task.id)
                    .limit(500)
                )
            )
            self._moved = {task.id: self._moved[task.id] for task in queued if task.id in self._moved}
            if not queued:
                return
            nodes = self._nodes
            recorded = {task.id: task.queued_reason for task in queued}
            counts = db.execute(
                select(Task.owner_id, func.count())
                .where(Task.status == TaskStatus.RUNNING)
                .group_by(Task.owner_id)
            )
            running: dict[int, int] = {owner: count for owner, count in counts}
            owners = {
                u.id: u for u in db.scalars(select(User).where(User.id.in_({t.owner_id for t in queued})))
            }
            with self._lock:
                used = used_per_node(list(self._attempts.values()))
            kept: set[str] = set()  # nodes held for a task earlier in line that waits for room there
            reasons: dict[str, QueuedReason] = {}
            started: set[str] = set()
            for task, holder in fair_order(queued, self._moved):
                demand = task_demand(task, nodes)
                holders = demand.holders(nodes)
                if not holders:
                    reasons[task.id] = demand.never_fits(nodes)
                    continue
                owner = owners.get(task.owner_id)
                if owner is None:
                    continue
                quota = owner.max_running_tasks
                limit = self.max_running_per_user if quota is None else quota
                if running.get(owner.id, 0) >= limit:
                    reasons[task.id] = running_limit(limit)
                    continue
                placed = demand.place(nodes, used, kept)
                if placed is None:
                    kept.update(node.id for node in holders)
                    reasons[task.id] = demand.waits(len(holders))
                    continue
                if time.monotonic() < self._launch_paused_until:
                    break  # a launch just failed for the machine: nothing more this pass
                if self._launch(db, task, owner, demand, placed):
                    if holder is not task:  # the holder gets the later place the task leaves
                        self._moved[holder.id] = self._moved.get(task.id, (task.created_at, task.id))
                    self._moved.pop(task.id, None)
                    for node_id, held in placed.held.items():
                        used[node_id] = used.get(node_id, Resources()) + held
                    running[owner.id] = running.get(owner.id, 0) + 1
                    started.add(task.id)
            self._note_reasons(db, recorded, reasons, started)

    def _note_reasons(
        self,
        db: Session,
        recorded: dict[str, dict[str, Any] | None],
        reasons: dict[str, QueuedReason],
        started: set[str],
    ) -> None:
        """Write each waiting task's reason where it changed (one commit for the pass)."""
        changed = False
        for task_id, before in recorded.items():
            if task_id in started:
                continue
            reason = reasons.get(task_id)
            after = None if reason is None else reason.to_json()
            if after != before:
                changed = note_queued_reason(db, task_id, after) or changed
        if changed:
            db.commit()

    def _launch(
        self,
        db: Session,
        task: Task,
        owner: User,
        demand: Demand,
        placed: Placed,
    ) -> bool:
        node, need = placed.node, demand.own
        try:
            context = self.context_for(db, owner)
        except Exception as exc:
            message = f"the task's data cannot be prepared: {exc}"
            error = {"code": "data_unavailable", "message": message, "node_id": None}
            finish(db, task.id, TaskStatus.FAILED, message, from_statuses=(TaskStatus.QUEUED,), error=error)
            return False
        warm = self.backend.claim_warm(node.id, need)
        resumed = " (resuming)" if task.resume or task.attempts else ""
        where = f" on node {short_node(node.id)} ({node.address})"
        how = " in a warm worker" if warm is not None else ""
        if demand.workers is not None:
            rooms = ", ".join(
                f"{short_node(node_id)} ({held.cpus:g} CPU{'' if held.cpus == 1 else 's'})"
                for node_id, held in placed.held.items()
            )
            how += f", its workers with room on node(s) {rooms}"
        message = f"attempt {task.attempts + 1} starting{where}{how}{resumed}"
        # What the task holds in all (a distributed run: its workers), as the task center shows it.
        total = demand.own + (demand.workers.total if demand.workers else Resources())
        resources = {"cpus": total.cpus, "gpus": total.gpus}
        worker_ref = start_attempt(db, task, message, warm, resources=resources, worker_node=node.id)
        if worker_ref is None:
            if warm is not None:
                self.backend.release_warm(warm)
            return False  # stopped or deleted meanwhile
        spec = LaunchSpec(task.id, worker_ref, need, self.config, context, node.id)
        try:
            handle = self.backend.launch(spec)
        except Exception as exc:
            if warm is not None:
                self.backend.release_warm(warm)
            if classify(exc) == "infrastructure":
                # The machine's fault (a full data disk), not the task's: it waits, retries kept.
                delay = self._launch_backoff()
                self._launch_paused_until = time.monotonic() + delay
                # Behind every task queued now: a fault of this task's own (its owner's disk quota)
                # must not make the others wait behind it at each pause's end.
                self._moved[task.id] = (utcnow(), task.id)
                log.warning("could not start a worker (%s); starting none for %.0f s", exc, delay)
                message = (
                    f"the worker could not be started ({type(exc).__name__}: {exc}); "
                    f"re-queued, workers start again in {delay:.0f} s"
                )
                requeue(db, task.id, message, worker_ref=worker_ref, spare_attempt=True)
                return False
            log.exception("could not launch task %s", task.id)
            message = f"the worker could not be started: {exc}"
            error = {"code": "launch_failed", "message": message, "node_id": None}
            finish(db, task.id, TaskStatus.FAILED, message, worker_ref=worker_ref, error=error)
            return False
        self._launch_backoff = backoff_delays(LAUNCH_BACKOFF_FIRST_S, LAUNCH_BACKOFF_MAX_S)
        with self._lock:
            self._attempts[task.id] = Attempt(task.id, worker_ref, need, handle, node.id, placed.held)
        return True
