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

Ray is imported only here and only when connecting: importing the server stays fast.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from dragdl.runner.base import LaunchSpec, Outcome, Resources, WorkerConfig
from dragdl.runner.leftovers import end_leftover_ray, forget_ray_processes, record_ray_processes
from dragdl.runner.placement import Node
from dragdl.runner.scheduler import ContextFor, Scheduler

log = logging.getLogger(__name__)

NAMESPACE = "dragdl"
OBJECT_STORE_BYTES = 256 * 1024**2
"""Tasks pass only small specs through Ray; a small object store leaves the memory to training."""


def machine_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def ensure_ray(address: str | None, num_cpus: int | None = None) -> bool:
    """Start a local Ray (address None) or join a cluster, unless this process is connected already.

    Returns True when this call connected (the caller then owns the connection and shuts it down).
    """
    if address is None:
        # Ray binds its services to the node address; with clusters disabled that is 127.0.0.1,
        # so nothing of the embedded Ray listens beyond loopback. Read when ray is imported.
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
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
        with contextlib.suppress(ImportError):  # in case ray was imported before the variable was set
            from ray._private import ray_constants

            ray_constants.ENABLE_RAY_CLUSTER = False
        ray.init(
            # "local": always a Ray of its own. Without an address, ray.init joins the cluster a
            # `ray start` on this machine recorded in /tmp/ray/ray_current_cluster.
            address="local",
            namespace=NAMESPACE,
            num_cpus=num_cpus or machine_cpus(),
            include_dashboard=False,
            object_store_memory=OBJECT_STORE_BYTES,
            logging_level=logging.ERROR,
            log_to_driver=False,
            _node_ip_address="127.0.0.1",
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
        self, address: str | None, num_cpus: int | None = None, data_dir: Path | None = None
    ) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.data_dir = data_dir
        """Where the embedded Ray's processes are recorded, to be ended after a killed server."""
        self._owned = False
        self._actor_class: Any = None

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

    def launch(self, spec: LaunchSpec) -> RayHandle:
        import ray

        if self._actor_class is None:
            from dragdl.runner.worker import TaskWorker

            self._actor_class = ray.remote(TaskWorker)
        placement: dict[str, Any] = {}
        if spec.node_id is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            # Not soft: the scheduler chose this node because it holds the task; elsewhere it
            # might not fit, or take room the scheduler promised to another task.
            placement["scheduling_strategy"] = NodeAffinitySchedulingStrategy(spec.node_id, soft=False)
        actor = self._actor_class.options(
            name=spec.worker_ref,
            namespace=NAMESPACE,
            lifetime="detached",
            num_cpus=spec.resources.cpus,
            num_gpus=spec.resources.gpus,
            max_restarts=0,
            max_task_retries=0,
            **placement,
        ).remote()
        ref = actor.run.remote(spec)
        actor.__ray_terminate__.remote()
        self._record()  # Ray's agents start after ray.init returns: by now they run
        return RayHandle(spec.worker_ref, actor, ref)

    def find(self, worker_ref: str) -> RayHandle | None:
        import ray

        try:
            actor = ray.get_actor(worker_ref, namespace=NAMESPACE)
        except ValueError:
            return None
        return RayHandle(worker_ref, actor, None)

    def poll(self, handles: list[Any]) -> list[tuple[Any, Outcome, str]]:
        import ray
        from ray.exceptions import RayActorError, RayError, RayTaskError

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
    **options: Any,
) -> Scheduler:
    """The server's runner: the scheduler over a Ray backend. Ray processes that a killed server with
    this data dir left behind are ended first (never a cluster's: those are not recorded)."""
    if ray_address is None:
        end_leftover_ray(config.data_dir)
    return Scheduler(
        RayBackend(ray_address, data_dir=config.data_dir),
        sessions,
        config,
        context_for,
        max_running_per_user=max_running_per_user,
        stop_timeout_s=stop_timeout_s,
        **options,
    )
