"""Live task events for many viewers: one database watcher per task, shared by all its streams.

A stream holds no database session or connection while it is open. It reads the history it missed
(after `Last-Event-ID`) page by page, each page in one short session, then joins the task's watcher:
one loop per task in the server that reads the `task_events` table once per `poll_s` for all of the
task's viewers and hands each new event, rendered once, to every viewer's queue. The watcher stops
when its last viewer leaves, and ends every stream after the task's final status.

Joining is gap-free: a viewer subscribes first and then reads once more from its last event, so what
the watcher handed out before the viewer joined is read from the database, and what it hands out
afterwards is queued; ids at or below the last one sent are dropped, so nothing repeats.

Database reads run in worker threads behind one limiter of `readers` slots, so a crowd of viewers
arriving at once takes at most that many threads and connections from everyone else.

A viewer that still has `backlog` events unsent when more arrive (a stalled client: its socket does
not drain) is ended instead of buffering without bound; its client reconnects with `Last-Event-ID`
and catches up from the database. Each user may hold `max_per_user` open streams (`TooManyStreams`
beyond).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TypeVar

import anyio
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import TaskEvent, TaskStatus
from dragdl.server.services import tasks as service

log = logging.getLogger(__name__)

T = TypeVar("T")
Rendered = tuple[int, bytes]
"""An event's id and its server-sent event text."""

POLL_S = 0.5
KEEPALIVE_S = 15.0
BACKLOG = 2000
"""Events a viewer may have waiting when more arrive before it is ended (a watcher's batch is at most a
page, 500)."""
READERS = 4
RETRY = b"retry: 2000\n\n"
KEEPALIVE = b": keep-alive\n\n"


class TooManyStreams(Exception):
    def __init__(self, open_streams: int, limit: int) -> None:
        super().__init__(f"{open_streams} of {limit} event streams open")
        self.open_streams = open_streams
        self.limit = limit


def render(event: TaskEvent) -> Rendered:
    data = {**event.data, "time": event.created_at.isoformat()}
    return event.id, f"id: {event.id}\nevent: {event.kind}\ndata: {json.dumps(data)}\n\n".encode()


def read_page(
    sessions: sessionmaker[Session], task_id: str, after: int
) -> tuple[TaskStatus | None, list[Rendered]]:
    """The task's status and up to a page of its events after `after`, rendered, in one short session.

    The status is read before the events: once it is final, the final status event is committed, so
    this one read returns everything up to the end.
    """
    with sessions() as db:
        current = service.task_status(db, task_id)
        return current, [render(event) for event in service.events_after(db, task_id, after)]


def ends(current: TaskStatus | None, page: list[Rendered]) -> bool:
    """Whether a read shows everything there will be: the task is gone, or final and fully read."""
    return current is None or (current.finished and len(page) < service.EVENTS_PAGE)


class Viewer:
    """One open stream: a slot of its user's allowance and, once live, a subscription to a watcher."""

    def __init__(self, hub: EventHub, user_id: int, task_id: str, after: int) -> None:
        self.hub = hub
        self.user_id = user_id
        self.task_id = task_id
        self.last = after
        self.pending: deque[Rendered] = deque()
        self.arrived = asyncio.Event()
        self.ended = False
        """No more will be queued: the task ended, the watcher failed, or the viewer fell behind."""
        self.closed = False

    def push(self, events: list[Rendered]) -> None:
        if self.ended:
            return
        if len(self.pending) >= self.hub.backlog:  # not one batch too many: a backlog left unsent
            self.pending.clear()
            self.end()
            return
        self.pending.extend(events)
        self.arrived.set()

    def end(self) -> None:
        self.ended = True
        self.arrived.set()

    def close(self) -> None:
        """Leave the watcher and give the user's slot back (once; the stream's response calls it)."""
        if not self.closed:
            self.closed = True
            self.hub._leave(self)

    async def stream(self) -> AsyncIterator[bytes]:
        """The server-sent events: `retry:`, the history after `after`, then live ones until the end."""
        try:
            yield RETRY
            async for chunk in self._catch_up():
                yield chunk
            if self.ended:
                return
            self.hub._join(self)
            async for chunk in self._catch_up():  # what the watcher sent before this viewer joined
                yield chunk
            while not self.ended or self.pending:
                if not self.pending:
                    self.arrived.clear()
                    try:
                        await asyncio.wait_for(self.arrived.wait(), self.hub.keepalive_s)
                    except TimeoutError:
                        yield KEEPALIVE
                    continue
                chunk = self._newer(self.pending)
                self.pending.clear()
                if chunk:
                    yield chunk
        finally:
            self.close()

    def _newer(self, events: Iterable[Rendered]) -> bytes:
        """The events after the last one sent, as one chunk: one write per batch, not per event."""
        texts = []
        for event_id, text in events:
            if event_id > self.last:
                self.last = event_id
                texts.append(text)
        return b"".join(texts)

    async def _catch_up(self) -> AsyncIterator[bytes]:
        while not self.ended:
            current, page = await self.hub.read(self.task_id, self.last)
            chunk = self._newer(page)
            if chunk:
                yield chunk
            if ends(current, page):
                self.ended = True
            if len(page) < service.EVENTS_PAGE:
                return


class Watcher:
    """Reads one task's new events once per poll for all its viewers."""

    def __init__(self, hub: EventHub, task_id: str, after: int) -> None:
        self.hub = hub
        self.task_id = task_id
        self.cursor = after
        self.viewers: set[Viewer] = set()
        self.runner: asyncio.Task[None] | None = None

    async def run(self) -> None:
        try:
            while self.viewers:
                current, page = await self.hub.read(self.task_id, self.cursor)
                if page:
                    self.cursor = page[-1][0]
                    for viewer in list(self.viewers):
                        viewer.push(page)
                        if viewer.ended:
                            self.viewers.discard(viewer)
                if ends(current, page):
                    break
                if len(page) < service.EVENTS_PAGE:
                    await asyncio.sleep(self.hub.poll_s)
        except Exception:
            # The viewers' clients reconnect with Last-Event-ID and read from the database again.
            log.exception("the event watcher of task %s failed", self.task_id)
        finally:
            # No await between the last check of `viewers` and leaving the hub: a viewer joining
            # meanwhile cannot land on a watcher that has stopped.
            if self.hub.watchers.get(self.task_id) is self:
                del self.hub.watchers[self.task_id]
            for viewer in self.viewers:
                viewer.end()
            self.viewers.clear()


class EventHub:
    """The server's event watchers and open streams. Use it from the server's event loop only."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        max_per_user: int,
        *,
        poll_s: float = POLL_S,
        keepalive_s: float = KEEPALIVE_S,
        backlog: int = BACKLOG,
        readers: int = READERS,
    ) -> None:
        self.sessions = sessions
        self.max_per_user = max_per_user
        self.poll_s = poll_s
        self.keepalive_s = keepalive_s
        self.backlog = backlog
        self.limiter = anyio.CapacityLimiter(readers)
        self.watchers: dict[str, Watcher] = {}
        self.open_streams: Counter[int] = Counter()

    async def run_sync(self, function: Callable[[], T]) -> T:
        """Run a short database job in a worker thread, within the hub's share of threads."""
        return await anyio.to_thread.run_sync(function, limiter=self.limiter)

    async def read(self, task_id: str, after: int) -> tuple[TaskStatus | None, list[Rendered]]:
        return await self.run_sync(lambda: read_page(self.sessions, task_id, after))

    def open(self, user_id: int, task_id: str, after: int) -> Viewer:
        """A new stream of the user's; TooManyStreams when the user has `max_per_user` open."""
        held = self.open_streams[user_id]
        if held >= self.max_per_user:
            raise TooManyStreams(held, self.max_per_user)
        self.open_streams[user_id] += 1
        return Viewer(self, user_id, task_id, after)

    def _join(self, viewer: Viewer) -> None:
        watcher = self.watchers.get(viewer.task_id)
        if watcher is None:
            watcher = Watcher(self, viewer.task_id, viewer.last)
            self.watchers[viewer.task_id] = watcher
            watcher.viewers.add(viewer)
            watcher.runner = asyncio.get_running_loop().create_task(watcher.run())
        else:
            watcher.viewers.add(viewer)

    def _leave(self, viewer: Viewer) -> None:
        watcher = self.watchers.get(viewer.task_id)
        if watcher is not None:
            watcher.viewers.discard(viewer)
        self.open_streams[viewer.user_id] -= 1
        if self.open_streams[viewer.user_id] <= 0:
            del self.open_streams[viewer.user_id]

    async def close(self) -> None:
        """End every stream and stop the watchers (server shutdown)."""
        for watcher in list(self.watchers.values()):
            for viewer in watcher.viewers:
                viewer.end()
            if watcher.runner is not None:
                watcher.runner.cancel()
        self.watchers.clear()
