"""Which errors are the graph's and which are the machinery's, and how a write rides out a database outage.

A task fails at once only for a deterministic error of its graph or data (the same run would fail
the same way again): invalid graph, dataset or node errors, shape errors, a bad Lambda, a loss that
is not finite. Everything else that can go away by itself is infrastructure: the database refusing
connections or holding a lock past its busy timeout, a lost worker, a storage error. Those are
retried from the last checkpoint within the task's retry budget, and the task's log says why.

`retry_db` runs one database write (its own session and transaction each try) until it succeeds,
waiting with capped exponential backoff while the error is transient, for at most `deadline_s`.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError, TimeoutError
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger(__name__)

T = TypeVar("T")
Kind = Literal["graph", "infrastructure"]

DB_RETRY_S = 300.0
"""How long a state change keeps trying through a database outage before it gives up."""
BACKOFF_FIRST_S = 0.1
BACKOFF_MAX_S = 5.0

_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.ESTALE, errno.EROFS})
"""OSErrors of the machine's storage (not of a user's file): a full, failing or read-only disk."""


class TaskFolderDeleted(RuntimeError):
    """The task's artifact folder vanished while it trained: there is nothing left to resume from."""

    def __init__(self) -> None:
        super().__init__("the task's folder was deleted during training; its checkpoints and logs are gone")


def is_transient_db_error(exc: BaseException) -> bool:
    """A database error that may pass: refused or dropped connections, a busy SQLite file, a pool timeout."""
    if isinstance(exc, OperationalError | DisconnectionError | TimeoutError):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


def classify(exc: BaseException) -> Kind:
    """`infrastructure` for errors worth a retry from the checkpoint, `graph` for the task's own."""
    from dragdl.engine.distributed import WorkersFailed

    if is_transient_db_error(exc) or isinstance(exc, MemoryError | WorkersFailed):
        return "infrastructure"
    if isinstance(exc, OSError) and exc.errno in _STORAGE_ERRNOS:
        return "infrastructure"
    try:
        from ray.exceptions import RayError
    except ImportError:  # the engine also runs without Ray (dragdl run)
        return "graph"
    return "infrastructure" if isinstance(exc, RayError) else "graph"


def backoff_delays(first_s: float = BACKOFF_FIRST_S, cap_s: float = BACKOFF_MAX_S) -> Callable[[], float]:
    """The next wait each call: first_s, doubling, at most cap_s."""
    delay = first_s / 2

    def next_delay() -> float:
        nonlocal delay
        delay = min(cap_s, delay * 2)
        return delay

    return next_delay


def retry_db(
    sessions: sessionmaker[Session],
    write: Callable[[Session], T],
    what: str,
    *,
    deadline_s: float = DB_RETRY_S,
    stop: Callable[[], bool] = lambda: False,
) -> T:
    """`write(db)` in a fresh session, retried through transient database errors until `deadline_s`
    passed (or `stop()` says to give up); the last error is raised then, and any other error at once."""
    deadline = time.monotonic() + deadline_s
    next_delay = backoff_delays()
    failures = 0
    while True:
        try:
            with sessions() as db:
                result = write(db)
            if failures:
                log.info("%s succeeded after %d failed tries", what, failures)
            return result
        except Exception as exc:
            if not is_transient_db_error(exc):
                raise
            failures += 1
            delay = next_delay()
            if time.monotonic() + delay > deadline or stop():
                raise
            if failures == 1:
                log.warning("%s failed (%s); retrying", what, str(exc).splitlines()[0])
            time.sleep(delay)  # backoff between tries of a write the database refused
