"""Micro-batching: concurrent requests answered together, in as few trips to a worker as possible."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass
class _Pending(Generic[Item, Result]):
    item: Item
    future: asyncio.Future[Result]


@dataclass
class MicroBatcher(Generic[Item, Result]):
    """A queue of requests and the batches of them in flight. Use it from one event loop.

    A batch starts as soon as one of the `slots` is free and takes every request waiting, up to
    `max_batch` in `size` (images, say; a larger request goes alone). Only while another batch is
    running does it wait, up to `window_s`, for more: then company is on its way, and an idle server
    never delays a lone request. Under load the batches grow by themselves to what arrives while the
    previous ones run. `run_batch` answers a batch, one result per request in order; an exception it
    raises goes to every request of the batch.

    Waiting for more requests waits on an Event, never on a queue `get`: a timed-out `wait_for`
    around `Queue.get` can drop the item it was handed at that moment (Python < 3.12), which would
    leave that request waiting for ever. Items only ever leave the deque synchronously.
    """

    run_batch: Callable[[list[Item]], Awaitable[list[Result]]]
    size: Callable[[Item], int]
    slots: int
    max_batch: int
    window_s: float
    queue: deque[_Pending[Item, Result]] = field(default_factory=deque)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    freed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a running batch ends."""
    running: set[asyncio.Task[None]] = field(default_factory=set)
    dispatcher: asyncio.Task[None] | None = None

    def submit(self, item: Item) -> asyncio.Future[Result]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        self.queue.append(_Pending(item, future))
        self.arrived.set()
        if self.dispatcher is None or self.dispatcher.done():
            self.dispatcher = loop.create_task(self._dispatch())
        return future

    @property
    def idle(self) -> bool:
        return not self.running and (self.dispatcher is None or self.dispatcher.done())

    async def _dispatch(self) -> None:
        # Ends as soon as the queue is empty; submit() starts a new dispatcher for the next request.
        # No await separates the emptiness check from the end, so no request can be left behind.
        while self.queue:
            if len(self.running) >= self.slots:
                self.freed.clear()
                await self.freed.wait()
                continue
            batch = await self._collect()
            if batch:
                task = asyncio.get_running_loop().create_task(self._run(batch))
                self.running.add(task)
                task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        self.freed.set()

    async def _collect(self) -> list[_Pending[Item, Result]]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.window_s
        while self.running and sum(self.size(pending.item) for pending in self.queue) < self.max_batch:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), remaining)
        batch: list[_Pending[Item, Result]] = []
        size = 0
        while self.queue and (not batch or size + self.size(self.queue[0].item) <= self.max_batch):
            pending = self.queue.popleft()
            if pending.future.done():  # its client went away
                continue
            batch.append(pending)
            size += self.size(pending.item)
        return batch

    async def _run(self, batch: list[_Pending[Item, Result]]) -> None:
        try:
            answers = await self.run_batch([pending.item for pending in batch])
        except Exception as exc:  # handed to every request of the batch
            for pending in batch:
                if not pending.future.done():
                    pending.future.set_exception(exc)
            return
        for pending, found in zip(batch, answers, strict=True):
            if not pending.future.done():
                pending.future.set_result(found)

    def cancel(self) -> None:
        """Cancel the running batches and the dispatcher (from the batcher's event loop)."""
        for task in [*self.running, *([self.dispatcher] if self.dispatcher else [])]:
            task.cancel()
