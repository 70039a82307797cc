"""Which errors are the graph's and which are the machinery's, and how a write rides out a database outage.

A task fails at once only for a deterministic error of its graph or data (the same run would fail
the same way again): invalid graph, dataset or node errors, shape errors, a bad Lambda, a loss that
is not finite. Everything else that can go away by itself is infrastructure: the database refusing
connections or holding a lock past its busy timeout, a lost worker, a storage error. Those are
retried from the last checkpoint within the task's retry budget, and the task's log says why.

A full disk is a storage error however it is reported: `OSError(ENOSPC)` from Python's own writes,
but PyTorch's checkpoint writer (`torch.save`) raises a bare `RuntimeError` from its C++ stream
writer (`[enforce fail at inline_container.cc:...] unexpected pos ...` or `... file write failed`),
with no errno. `is_disk_full` recognises both, for the runner and for the server's 507.

`retry_db` runs one database write (its own session and transaction each try) until it succeeds,
waiting with capped exponential backoff while the error is transient, for at most `deadline_s`.
"""

from __future__ import annotations

import errno
import logging
import re
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


_TORCH_WRITE_FAILED = re.compile(
    r"PytorchStreamWriter failed|inline_container\.cc.*(unexpected pos|file write failed|writing)",
    re.IGNORECASE | re.DOTALL,
)
"""PyTorch's zip writer failing to write (torch.save): the only ways it reports a full disk."""


class TaskFolderDeleted(RuntimeError):
    """The task's artifact folder vanished while it trained: there is nothing left to resume from."""

    def __init__(self) -> None:
        super().__init__("the task's folder was deleted during training; its checkpoints and logs are gone")


def is_transient_db_error(exc: BaseException) -> bool:
    """A database error that may pass: refused or dropped connections, a busy SQLite file, a pool timeout."""
    if isinstance(exc, OperationalError | DisconnectionError | TimeoutError):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


def _chain(exc: BaseException) -> list[BaseException]:
    """The error and those it was raised from or during (bounded: a chain may loop)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found and len(found) < 16:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _torch_write_failed(exc: BaseException) -> bool:
    return isinstance(exc, RuntimeError) and bool(_TORCH_WRITE_FAILED.search(str(exc)))


def is_disk_full(exc: BaseException) -> bool:
    """Whether writing failed for want of space: ENOSPC or EDQUOT anywhere in the chain, or PyTorch's
    checkpoint writer failing (it reports a full disk without an errno)."""
    for error in _chain(exc):
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if _torch_write_failed(error):
            return True
    return False


def is_storage_error(exc: BaseException) -> bool:
    """An error of the machine's storage (not of a user's file): full, failing or read-only."""
    if is_disk_full(exc):
        return True
    return any(isinstance(e, OSError) and e.errno in _STORAGE_ERRNOS for e in _chain(exc))


def classify(exc: BaseException) -> Kind:
    """`infrastructure` for errors worth a retry from the checkpoint, `graph` for the task's own."""
    from dragdl.engine.run.distributed import WorkersFailed

    if is_transient_db_error(exc) or isinstance(exc, MemoryError | WorkersFailed):
        return "infrastructure"
    if is_storage_error(exc):
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
