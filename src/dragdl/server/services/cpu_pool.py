"""CPU-heavy work of the server in another process, so that it does not hold the server's GIL.

The server is one Python process: while one of its threads runs Python code, no other does. pandas
parsing a table of 10^6 rows held the interpreter lock for over a second, and fANOVA over a sweep's
trials for more, and every other user's requests waited for it, health checks included (issue 23's
soak). Such work runs here instead, in a small pool of worker processes (`Settings.cpu_workers`, 1
by default) with few jobs waiting (`WAITING`): beyond them a job is refused at once (`PoolBusy`; an
upload answers 503 with `Retry-After`) instead of holding one of the server's threads while it
waits.
- Each user has a share: at most `PER_OWNER` of their jobs run or wait (`for_owner`), so that one
  user resubmitting large uploads cannot fill the queue and have every other user's upload refused
  (issue 23 review: 7 uploads of a 9.9-million-row CSV from one user did). Beyond it that user is
  refused, naming their own jobs, while other users' jobs are still queued.

- Workers are spawned, not forked (the server holds threads, a Ray connection and database
  connections, which a fork would copy half-made), start with the first job, run at a lower CPU
  priority than the server's requests, and end with the server's process. One pool per worker
  count is shared by every app a process creates (the tests create hundreds).
- A job is a module-level function and picklable arguments. What it returns or raises comes back;
  an exception that cannot be pickled comes back as a RuntimeError naming it.
- A worker that dies (killed for memory) fails the jobs it had with `PoolBusy`, and a new set of
  workers replaces it for the next job.
- `cpu_workers=0` runs each job in the calling thread, in the server's process: no isolation, for
  hosts where starting processes is not allowed, and for tests that patch what a job reads.
"""

from __future__ import annotations

import copy
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
T = TypeVar("T")

WAITING = 4
"""Jobs that may wait for a worker; more are refused at once."""
NICENESS = 5
"""Added to the workers' nice value: the server's own requests (a health check, a poll) go first."""
PARENT_CHECK_S = 1.0
"""How often a worker checks that the server that started it still runs."""
RETRY_AFTER_S = 5
"""What a client refused with `PoolBusy` is told to wait."""
PER_OWNER = 2
"""Jobs of one user that may run or wait together (fewer in a pool of at most two jobs)."""


class PoolBusy(Exception):
    """The job was not done: too many wait, or its worker died. The message says which."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass
class _State:
    """What a pool and its owners' views of it share."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    executor: ProcessPoolExecutor | None = None
    jobs: int = 0
    owned: dict[str, int] = field(default_factory=dict)


class CpuPool:
    def __init__(self, workers: int, waiting: int = WAITING, per_owner: int = PER_OWNER) -> None:
        self.workers = workers
        self.waiting = waiting
        self.capacity = max(1, workers) + waiting
        # A share of at most all jobs but one, so that another user always has room.
        self.per_owner = max(1, min(per_owner, self.capacity - 1))
        self.owner: str | None = None
        self._state = _State()

    def for_owner(self, owner: str) -> CpuPool:
        """This pool, its jobs counted as `owner`'s (a user's id): PoolBusy for that user alone
        while `per_owner` of theirs run or wait."""
        view = copy.copy(self)
        view.owner = owner
        return view

    @classmethod
    def shared(cls, workers: int) -> CpuPool:
        """The process's pool of `workers` workers (made on the first call)."""
        with _SHARED_LOCK:
            pool = _SHARED.get(workers)
            if pool is None:
                pool = _SHARED[workers] = cls(workers)
            return pool

    def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`function(*args, **kwargs)` in a worker, waiting for it (call it from a thread, never the
        event loop); PoolBusy when too many jobs wait already or the worker died."""
        self._admit()
        try:
            if self.workers == 0:
                return function(*args, **kwargs)
            executor = self._started()
            try:
                return cast(T, executor.submit(_call, function, args, kwargs).result())
            except BrokenProcessPool:
                self._discard(executor)
                raise PoolBusy(
                    "the server's worker process for this stopped before it was done (out of "
                    "memory?); try again in a moment"
                ) from None
        finally:
            self._leave()

    def check_room(self) -> None:
        """PoolBusy if a job would be refused now: an upload asks before its body is received."""
        with self._state.lock:
            self._refused()

    def _admit(self) -> None:
        state, owner = self._state, self.owner
        with state.lock:
            self._refused()
            state.jobs += 1
            if owner is not None:
                state.owned[owner] = state.owned.get(owner, 0) + 1

    def _refused(self) -> None:
        """PoolBusy if there is no room for a job of this owner (with the state's lock held)."""
        state, owner = self._state, self.owner
        owned = state.owned.get(owner, 0) if owner is not None else 0
        if owner is not None and owned >= self.per_owner:
            raise PoolBusy(
                f"your own {owned} uploads are still being read (at most {self.per_owner} at a "
                f"time); try again in {RETRY_AFTER_S} seconds, once one of them is done"
            )
        if state.jobs >= self.capacity:
            raise PoolBusy(
                f"the server is busy with {self.capacity} other uploads or computations; try "
                f"again in {RETRY_AFTER_S} seconds"
            )

    def _leave(self) -> None:
        state, owner = self._state, self.owner
        with state.lock:
            state.jobs -= 1
            if owner is not None:
                left = state.owned.pop(owner) - 1
                if left:
                    state.owned[owner] = left

    def close(self) -> None:
        """End the workers (after the jobs they have); the next job starts new ones."""
        with self._state.lock:
            executor, self._state.executor = self._state.executor, None
        if executor is not None:
            executor.shutdown(wait=True)

    def _started(self) -> ProcessPoolExecutor:
        with self._state.lock:
            if self._state.executor is None:
                self._state.executor = ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker
                )
            return self._state.executor

    def _discard(self, broken: ProcessPoolExecutor) -> None:
        with self._state.lock:
            if self._state.executor is broken:
                self._state.executor = None
        broken.shutdown(wait=False, cancel_futures=True)


_SHARED: dict[int, CpuPool] = {}
_SHARED_LOCK = threading.Lock()


def _start_worker() -> None:
    """In each new worker: a lower CPU priority, and an end of its own when the server is gone.

    A server killed with SIGKILL (or by the OOM killer) cannot end its pool, and a spawned worker
    waiting for jobs would wait forever with its hundreds of megabytes: a test suite that starts and
    kills servers left dozens. The worker watches its parent and exits once it has changed."""
    os.nice(NICENESS)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="cpu-pool-parent-watch", daemon=True).start()


def _call(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """In the worker: the job, with an exception the server could not unpickle made one it can."""
    try:
        return function(*args, **kwargs)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise RuntimeError(f"{type(exc).__name__}: {exc}") from None
        raise
