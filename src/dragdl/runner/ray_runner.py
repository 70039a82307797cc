"""The Ray backend: one detached, named Ray actor (one process) per task attempt.

Embedded mode (no address): the server starts a local Ray on loopback only, dashboard off, logs
quiet, all the machine's CPUs. Cluster mode (`ray_address`): joins that cluster instead.

Actors are named after the attempt's `worker_ref` in the "dragdl" namespace and detached, so that
on a cluster they outlive a server restart and the new server adopts them (`find`). Each actor runs
`TaskWorker.run` once and then exits by itself (`__ray_terminate__` is queued right behind it),
so no actor lingers when no server is left to kill it. Ray never retries (max_restarts=0,
max_task_retries=0): retries are the scheduler's, from checkpoints.

Each actor is pinned to the node the scheduler placed it on (`NodeAffinitySchedulingStrategy`, not
soft), and `nodes()` reads the alive nodes with their totals from `ray.nodes()` for that placement.

Warm workers: starting a process and importing torch takes seconds, longer than a small task's
first epoch. So once a node has run a CPU task, `warm_per_node` actors wait there with the training
code imported (`TaskWorker(warm=True)`, named `dragdl-warm-<id>`, reserving no CPU while idle: the
scheduler's own per-node accounting holds the task's CPUs once one runs in it). The scheduler claims
one for an attempt, whose worker_ref becomes the actor's name, so a restarted server adopts it like
any worker; a new one is started in its place. Tasks with GPUs get a fresh actor (Ray assigns the
GPU when an actor is created). Idle warm actors are killed on close; after a killed server, those
of an embedded Ray end with it, and a cluster's are killed at the next start (`reap_idle_warm`).

GPUs: Ray gives an actor with GPUs their ids in CUDA_VISIBLE_DEVICES, but since Ray 2.4x it leaves
the variable alone for one with none, so a CPU task (or a user capped at 0 GPUs) saw every GPU of
its node and `device: auto` trained on someone else's. `RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1` (set
for the embedded Ray by `engine/run/local_ray.py`, in the deployment files for a cluster) has Ray
hide them from every worker without GPUs, Ray Train's included; `TaskWorker` hides them itself as
well, for a cluster started without it.

Authentication: the embedded Ray uses Ray's token authentication (`RAY_AUTH_MODE=token`) with a
random token per server process, in the environment its Ray processes inherit, so another account on
the host cannot join the cluster on loopback and run code as DragDL's. These settings are
`engine/run/local_ray.py`'s, which `dragdl run` uses for its own local Ray as well.

A process is started only when the record of the embedded Ray's processes can be written first
(`leftovers.py`): a full data disk starts nothing, instead of leaking a warm worker per pass.

Ray is imported only here and only when connecting: importing the server stays fast.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from dragdl.engine.run.local_ray import prepare_environment, start_local_ray
from dragdl.runner.base import LaunchSpec, Outcome, Resources, WorkerConfig
from dragdl.runner.leftovers import end_leftover_ray, forget_ray_processes, record_ray_processes
from dragdl.runner.placement import Node
from dragdl.runner.scheduler import ContextFor, Scheduler

log = logging.getLogger(__name__)

NAMESPACE = "dragdl"
WARM_PREFIX = "dragdl-warm-"
OBJECT_STORE_BYTES = 256 * 1024**2
"""Tasks pass only small specs through Ray; a small object store leaves the memory to training."""


def machine_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def ensure_ray(
    address: str | None,
    num_cpus: int | None = None,
    *,
    num_gpus: int | None = None,
) -> bool:
    """Start a local Ray (address None) or join a cluster, unless this process is connected already.

    `num_gpus`: what a local Ray declares (None: the GPUs it finds; the tests fake some).
    Returns True when this call connected (the caller then owns the connection and shuts it down).
    """
    # Loopback, token authentication, GPUs hidden from workers given none: as `dragdl run`'s Ray.
    prepare_environment(local=address is None)
    import ray

    if ray.is_initialized():
        return False
    # Ray's C++ core installs a crash handler in the driver that also takes SIGTERM from the server's
    # own handler: it dumps a stack into the log and arms a 3 s alarm that aborts the process (SIGABRT)
    # while the server is still shutting down (suspending tasks takes longer). Crashes of the server
    # are Python's to report; the workers keep Ray's handler (they read their own environment).
    from ray._private import ray_constants as driver_constants

    driver_constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = True
    if address is None:
        start_local_ray(
            namespace=NAMESPACE,
            num_cpus=num_cpus or machine_cpus(),
            num_gpus=num_gpus,
            object_store_memory=OBJECT_STORE_BYTES,
        )
    else:
        ray.init(address=address, namespace=NAMESPACE, logging_level=logging.WARNING, log_to_driver=False)
    return True


@dataclass(eq=False)
class RayHandle:
    name: str
    actor: Any
    ref: Any | None
    """The ObjectRef of `run`; None for an actor adopted after a restart (its caller is gone)."""


_EXIT_DETAIL = re.compile(r"Worker exit detail: ([^.\n]*)")


def _died(exc: BaseException) -> str:
    text = str(exc)
    match = _EXIT_DETAIL.search(text)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return f"worker process died: {match[1]}" if match else f"worker process died: {first}"


class RayBackend:
    """`Backend` on Ray (see the module docstring)."""

    def __init__(
        self,
        address: str | None,
        num_cpus: int | None = None,
        data_dir: Path | None = None,
        warm_per_node: int = 1,
    ) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.data_dir = data_dir
        """Where the embedded Ray's processes are recorded, to be ended after a killed server."""
        self.warm_per_node = warm_per_node
        self._owned = False
        self._actor_class: Any = None
        self._idle: dict[str, list[tuple[str, Any]]] = {}
        """Per node id, the idle warm actors (name, handle), oldest first."""
        self._claimed: dict[str, tuple[str, Any]] = {}
        """Warm actors claimed for an attempt not launched yet: name -> (node id, handle)."""
        self._warm_lock = threading.Lock()

    def connect(self) -> None:
        self._owned = ensure_ray(self.address, self.num_cpus)
        self._record()

    def _record(self) -> None:
        if self._owned and self.address is None and self.data_dir is not None:
            record_ray_processes(self.data_dir)

    def stops_workers_on_close(self) -> bool:
        return self._owned

    def nodes(self) -> list[Node]:
        """The alive nodes and their total CPUs and GPUs (one call to Ray's control store)."""
        import ray

        found: list[Node] = []
        for entry in ray.nodes():  # type: ignore[no-untyped-call]
            if not entry.get("Alive"):
                continue
            total = entry.get("Resources") or {}
            resources = Resources(float(total.get("CPU", 0.0)), float(total.get("GPU", 0.0)))
            found.append(Node(str(entry["NodeID"]), str(entry.get("NodeManagerAddress", "")), resources))
        return found

    def _actor(self, name: str, node_id: str | None, cpus: float, gpus: float, warm: bool = False) -> Any:
        import ray

        if self._actor_class is None:
            from dragdl.runner.worker import TaskWorker

            self._actor_class = ray.remote(TaskWorker)
        placement: dict[str, Any] = {}
        if node_id is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            # Not soft: the scheduler chose this node because it holds the task; elsewhere it
            # might not fit, or take room the scheduler promised to another task.
            placement["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id, soft=False)
        return self._actor_class.options(
            name=name,
            namespace=NAMESPACE,
            lifetime="detached",
            num_cpus=cpus,
            num_gpus=gpus,
            max_restarts=0,
            max_task_retries=0,
            **placement,
        ).remote(warm)

    def launch(self, spec: LaunchSpec) -> RayHandle:
        # Nothing starts whose record cannot be written (a full data disk): the OSError goes to the
        # scheduler, which re-queues the task, and a claimed warm worker stays claimed for release.
        self._record()  # Ray's agents start after ray.init returns: by now they run
        with self._warm_lock:
            claimed = self._claimed.pop(spec.worker_ref, None)
        if claimed is not None:
            actor = claimed[1]
        else:
            actor = self._actor(spec.worker_ref, spec.node_id, spec.resources.cpus, spec.resources.gpus)
        ref = actor.run.remote(spec)
        actor.__ray_terminate__.remote()
        return RayHandle(spec.worker_ref, actor, ref)

    # -- warm workers --------------------------------------------------------------------------------

    def claim_warm(self, node_id: str | None, need: Resources) -> str | None:
        if self.warm_per_node <= 0 or node_id is None or need.gpus > 0:
            return None
        with self._warm_lock:
            idle = self._idle.setdefault(node_id, [])
            taken = idle.pop(0) if idle else None
            if taken is not None:
                self._claimed[taken[0]] = (node_id, taken[1])
            missing = self.warm_per_node - len(idle)
        # Refilled at once: the next task on this node finds one ready (the first found none).
        for _ in range(missing):
            self._start_warm(node_id)
        return None if taken is None else taken[0]

    def release_warm(self, name: str) -> None:
        with self._warm_lock:
            claimed = self._claimed.pop(name, None)
            if claimed is not None:
                self._idle.setdefault(claimed[0], []).insert(0, (name, claimed[1]))

    def _start_warm(self, node_id: str) -> None:
        name = f"{WARM_PREFIX}{uuid.uuid4().hex[:16]}"
        try:
            # Its process is one a killed server leaves behind, like a task's: none is started
            # while the record cannot be written (a full data disk leaked one per pass).
            self._record()
            actor = self._actor(name, node_id, 0, 0, warm=True)
        except Exception as exc:  # a full disk, the node just left, or Ray refuses: tasks start cold
            log.warning("could not start a warm worker on node %s: %s", node_id, exc)
            return
        with self._warm_lock:
            self._idle.setdefault(node_id, []).append((name, actor))

    def warm_workers(self) -> list[str]:
        """The names of the warm workers this backend holds, idle or claimed."""
        with self._warm_lock:
            return [name for pool in self._idle.values() for name, _ in pool] + list(self._claimed)

    def reap_idle_warm(self, running_refs: set[str]) -> int:
        """Kill warm actors of this namespace that neither wait in this backend's pool nor run an
        attempt in `running_refs` (a killed server's pool on a cluster); returns how many."""
        import ray
        from ray.util import list_named_actors

        with self._warm_lock:
            ours = {name for pool in self._idle.values() for name, _ in pool} | set(self._claimed)
        reaped = 0
        for entry in list_named_actors(all_namespaces=True):
            name = str(entry.get("name", ""))
            if entry.get("namespace") != NAMESPACE or not name.startswith(WARM_PREFIX):
                continue
            if name in ours or name in running_refs:
                continue
            with contextlib.suppress(Exception):  # it ended meanwhile
                ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=True)
                reaped += 1
        return reaped

    def find(self, worker_ref: str) -> RayHandle | None:
        import ray

        try:
            actor = ray.get_actor(worker_ref, namespace=NAMESPACE)
        except ValueError:
            return None
        return RayHandle(worker_ref, actor, None)

    def poll(self, handles: list[Any]) -> list[tuple[Any, Outcome, str]]:
        import ray
        from ray.exceptions import ActorUnavailableError, RayActorError, RayError, RayTaskError

        refs = [h.ref for h in handles if h.ref is not None]
        ready = set(ray.wait(refs, num_returns=len(refs), timeout=0)[0]) if refs else set()
        ended: list[tuple[Any, Outcome, str]] = []
        for handle in handles:
            if handle.ref is None:
                if self.find(handle.name) is None:
                    ended.append((handle, "died", "the worker is no longer running"))
                continue
            if handle.ref not in ready:
                continue
            try:
                ended.append((handle, "returned", str(ray.get(handle.ref, timeout=0))))
            except ActorUnavailableError as exc:
                # The call's answer was lost, not the actor: its node may be going, or only the
                # connection. Ended once Ray no longer knows the actor (by then a lost node is
                # marked dead, so the scheduler re-queues the task without using a retry).
                if self.find(handle.name) is None:
                    ended.append((handle, "died", _died(exc)))
            except RayActorError as exc:
                ended.append((handle, "died", _died(exc)))
            except RayTaskError as exc:
                ended.append((handle, "raised", str(exc.cause) if exc.cause else str(exc)))
            except RayError as exc:
                ended.append((handle, "died", _died(exc)))
        return ended

    def kill(self, handle: Any) -> None:
        import ray

        try:
            ray.kill(handle.actor, no_restart=True)
        except Exception as exc:  # already gone
            log.debug("ray.kill(%s): %s", handle.name, exc)

    def wait_ended(self, handle: Any, timeout_s: float) -> bool:
        import time

        import ray

        if handle.ref is not None:
            return bool(ray.wait([handle.ref], timeout=timeout_s)[0])
        deadline = time.monotonic() + timeout_s
        while self.find(handle.name) is not None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)  # no ref to wait on for an adopted actor: poll its name
        return True

    def close(self) -> None:
        import ray

        with self._warm_lock:
            idle = [actor for pool in self._idle.values() for _, actor in pool]
            idle += [actor for _, actor in self._claimed.values()]
            self._idle.clear()
            self._claimed.clear()
        # An embedded Ray ends below with every actor in it; killing them one by one first would
        # only wait on a control store that may already be going (a Ctrl+C reaches it too).
        if not self._owned and ray.is_initialized():
            for actor in idle:
                with contextlib.suppress(Exception):  # already gone
                    ray.kill(actor, no_restart=True)
        if self._owned and ray.is_initialized():
            # The embedded cluster ends with the server; its workers with it. The tasks stay RUNNING
            # in the database and are re-queued from their checkpoints at the next start.
            ray.shutdown()
            self._owned = False
            if self.address is None and self.data_dir is not None:
                forget_ray_processes(self.data_dir)


def create_ray_runner(
    sessions: sessionmaker[Session],
    config: WorkerConfig,
    context_for: ContextFor,
    *,
    ray_address: str | None,
    max_running_per_user: int,
    stop_timeout_s: float,
    warm_per_node: int = 1,
    **options: Any,
) -> Scheduler:
    """The server's runner: the scheduler over a Ray backend. Ray processes that a killed server with
    this data dir left behind are ended first (never a cluster's: those are not recorded)."""
    if ray_address is None:
        end_leftover_ray(config.data_dir)
    return Scheduler(
        RayBackend(ray_address, data_dir=config.data_dir, warm_per_node=warm_per_node),
        sessions,
        config,
        context_for,
        max_running_per_user=max_running_per_user,
        stop_timeout_s=stop_timeout_s,
        **options,
    )
