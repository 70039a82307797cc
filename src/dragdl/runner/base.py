"""What the server needs from a task runner, and what a runner needs from an execution backend.

The `Runner` is the server's view: start it, wake it when work arrives, kill a task's worker.
The `Backend` is the execution mechanism under the scheduler: launch one worker process per
attempt, report how it ended, kill it, find it again by name after a restart. Ray is the real
backend (`ray_runner.py`); the scheduler's policy is written against this protocol only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from dragdl.engine.data.base import DataContext
    from dragdl.runner.placement import Node

DEFAULT_MAX_ATTEMPTS = 3
"""Attempts a task gets (the first run plus retries after worker crashes)."""


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker process needs to find the database and the files (no server settings import)."""

    database_url: str
    data_dir: Path

    @property
    def artifacts_dir(self) -> Path:
        return self.data_dir / "artifacts"


@dataclass(frozen=True)
class Resources:
    cpus: float = 0.0
    gpus: float = 0.0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpus + other.cpus, self.gpus + other.gpus)

    def fits_in(self, capacity: Resources) -> bool:
        eps = 1e-9
        return self.cpus <= capacity.cpus + eps and self.gpus <= capacity.gpus + eps

    @classmethod
    def of_task(cls, resources: dict[str, Any]) -> Resources:
        return cls(float(resources.get("cpus", 1.0)), float(resources.get("gpus", 0.0)))


@dataclass(frozen=True)
class LaunchSpec:
    task_id: str
    worker_ref: str
    """Unique per attempt (`dragdl-<task_id>-<attempt>`, or the name of the warm worker it runs in):
    the Ray actor name and the DB fencing token."""
    resources: Resources
    config: WorkerConfig
    context: DataContext
    node_id: str | None = None
    """The cluster node the worker must run on (the scheduler's placement); None: anywhere."""


Outcome = Literal["returned", "died", "raised"]
"""How a worker ended: its entry point returned (it wrote the final status itself), its process
died (crash, SIGKILL, ray.kill), or an exception escaped the entry point."""


class Backend(Protocol):
    """Launches and watches worker processes. Called from the scheduler thread (and `kill` from others)."""

    def connect(self) -> None:
        """Start or join the cluster; blocking, may take seconds."""

    def nodes(self) -> list[Node]:
        """The cluster's alive nodes with the CPUs and GPUs each offers to tasks; called every
        scheduling pass, so it must be cheap."""

    def claim_warm(self, node_id: str | None, need: Resources) -> str | None:
        """The name of an idle warm worker on `node_id` (a process started ahead, with the training
        code imported) that can run a task needing `need`, taken out of the pool: the attempt's
        `worker_ref`, so `launch` runs the attempt in it. None: `launch` starts a new process."""

    def release_warm(self, name: str) -> None:
        """Give back a claimed warm worker whose attempt did not start."""

    def reap_idle_warm(self, running_refs: set[str]) -> int:
        """At connecting: kill the idle warm workers a previous server left (those not running an
        attempt in `running_refs`); returns how many."""

    def launch(self, spec: LaunchSpec) -> Any:
        """Start one attempt in its own process, on `spec.node_id` when set (in the claimed warm
        worker when `spec.worker_ref` names one); returns a handle."""

    def find(self, worker_ref: str) -> Any | None:
        """A handle to a worker still alive under that name (after a server restart), else None."""

    def poll(self, handles: list[Any]) -> list[tuple[Any, Outcome, str]]:
        """The handles whose worker has ended, with the outcome and a detail message; does not block."""

    def kill(self, handle: Any) -> None:
        """Kill the worker process now (no checkpoint); a dead worker is fine."""

    def wait_ended(self, handle: Any, timeout_s: float) -> bool:
        """Block until the worker has ended (True) or the timeout passed (False)."""

    def close(self) -> None:
        """Disconnect; a cluster this backend started is shut down (with its workers)."""

    def stops_workers_on_close(self) -> bool:
        """Whether `close` ends the running workers (an embedded cluster) rather than leaving them
        to be adopted at the next start (a cluster this backend joined)."""


class Runner(ABC):
    """The server's handle on task execution (`app.state.runner`)."""

    @abstractmethod
    def start(self) -> None:
        """Begin scheduling in the background; returns at once."""

    @abstractmethod
    def shutdown(self) -> None:
        """Stop scheduling. Running workers are left to the cluster (re-queued or adopted on restart)."""

    @abstractmethod
    def wake(self) -> None:
        """Something changed (a task was submitted, stopped or retried): schedule now."""

    @abstractmethod
    def kill(self, task_id: str, timeout_s: float = 30.0) -> bool:
        """Kill the task's worker without waiting for a checkpoint; True once its process has ended
        (or when this runner was not running it)."""

    @abstractmethod
    def capacity(self) -> Resources | None:
        """The cluster's CPUs and GPUs; None until connected."""

    def nodes(self) -> list[Node] | None:
        """The cluster's alive nodes as last seen; None until connected (or when unknown)."""
        return None
