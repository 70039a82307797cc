"""Prediction serving: cached bundles, inference off the event loop, micro-batching per model.

- Loaded bundles stay in an LRU cache keyed by model id; an entry is reloaded when the bundle's
  files change (their modification times are part of the entry).
- Decoding, preprocessing, the forward pass and the ranking run in a thread pool, in one trip per
  batch, never on the event loop.
- With batching on, concurrent requests for one model queue up, and a batch takes all that wait (up
  to `max_batch` images) as one forward pass; each request gets its own predictions back, and an
  unusable image fails its own request only. See `_Batcher` for when a batch goes. Off, every
  request makes its own trip to the pool and its own forward pass.
- Torch gets CPUs / worker threads intra-op threads: with more, the OpenMP teams of the workers
  oversubscribe the CPUs and spin-wait between the many small forward passes of a server (measured:
  tens of milliseconds of CPU per request for the sketcher CNN, instead of about one).

torch and the engine are imported inside the functions that need them: the server starts without.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import logging
import os
import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dragdl.server.settings import Settings

if TYPE_CHECKING:
    from torch import Tensor

    from dragdl.engine.bundle import Bundle, Prediction

MAX_IMAGE_PIXELS = 40_000_000
"""The engine's DEFAULT_PIXEL_LIMIT (not imported: that module loads torch)."""

log = logging.getLogger(__name__)
_threads_lock = threading.Lock()
_threads_limited = False


def limit_torch_threads(workers: int) -> None:
    """At most CPUs / `workers` torch intra-op threads (at least 1); once per process, before the
    first forward pass (threads that already ran torch keep their team size)."""
    global _threads_limited
    with _threads_lock:
        if _threads_limited:
            return
        import torch

        threads = max(1, _cpus() // max(1, workers))
        if torch.get_num_threads() > threads:
            torch.set_num_threads(threads)
            log.info("prediction: %d torch thread(s) per prediction worker", threads)
        _threads_limited = True


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class PredictionInputError(Exception):
    """An uploaded image cannot be used; the message names the file."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ModelUnavailable(Exception):
    """The model's bundle cannot be loaded (files damaged or replaced by something else)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _signature(folder: Path) -> tuple[int, ...]:
    """Modification times of the files a loaded bundle depends on (-1 for a missing one)."""
    stamps = []
    for name in ("model.json", "model.safetensors"):
        try:
            stamps.append((folder / name).stat().st_mtime_ns)
        except OSError:
            stamps.append(-1)
    return tuple(stamps)


class BundleCache:
    """Thread-safe LRU of loaded bundles. Each model loads once even when requests arrive together."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[str, tuple[tuple[int, ...], Bundle]] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}

    def _lookup(self, key: str, signature: tuple[int, ...]) -> Bundle | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != signature:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def get(self, key: str, folder: Path) -> Bundle:
        """The loaded bundle (blocking: call from a worker thread); raises BundleError."""
        signature = _signature(folder)
        bundle = self._lookup(key, signature)
        if bundle is not None:
            return bundle
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            bundle = self._lookup(key, signature)
            if bundle is not None:
                return bundle
            from dragdl.engine.bundle import load_bundle

            bundle = load_bundle(folder)
            with self._lock:
                self._entries[key] = (signature, bundle)
                self._entries.move_to_end(key)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
            return bundle

    def evict(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._loading.pop(key, None)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._entries


def check_image(name: str, data: bytes, pixel_limit: int) -> None:
    """Refuse what is not an image, or is too large, from its header (before any pixel is decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            width, height = img.size
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError):
        raise PredictionInputError(
            f"{name}: not a readable image (PNG, JPEG, BMP, GIF, WebP or TIFF)"
        ) from None
    if width * height > pixel_limit:
        raise PredictionInputError(
            f"{name}: {width}x{height} = {width * height} pixels is above the limit of {pixel_limit}"
        )


def preprocess(bundle: Bundle, images: list[tuple[str, bytes]], pixel_limit: int) -> list[Tensor]:
    """Each image as the network input, with the bundle's evaluation transforms."""
    from dragdl.engine.bundle import ImageError

    inputs = []
    for name, data in images:
        check_image(name, data, pixel_limit)
        try:
            inputs.append(bundle.preprocess(data))
        except ImageError as exc:
            raise PredictionInputError(str(exc).replace(f"<{len(data)} bytes>", name, 1)) from None
    return inputs


def forward(bundle: Bundle, inputs: list[Tensor]) -> list[list[float]]:
    """The probability vector of each input, in one batched pass (per input shape)."""
    return bundle.probabilities(inputs)


@dataclass(frozen=True)
class Request:
    """The images of one HTTP request (name, bytes) and how many classes to rank for each."""

    images: list[tuple[str, bytes]]
    top_k: int


@dataclass(frozen=True)
class Answered:
    classes: list[str]
    predictions: list[Prediction]
    """One per image of the request, in order."""


Answer = Answered | PredictionInputError
"""A request's predictions, or why one of its images cannot be used."""


def answer(bundle: Bundle, requests: list[Request], pixel_limit: int) -> list[Answer]:
    """Every request's answer, from one forward pass over all their usable images (per input shape).

    An unusable image fails its own request only: the others of the batch are answered.
    """
    classes = bundle.classes
    answers: list[Answer] = []
    inputs: list[Tensor] = []
    spans: list[tuple[int, int]] = []
    for request in requests:
        try:
            tensors = preprocess(bundle, request.images, pixel_limit)
        except PredictionInputError as exc:
            answers.append(exc)
            spans.append((0, 0))
            continue
        answers.append(Answered(classes, []))
        spans.append((len(inputs), len(inputs) + len(tensors)))
        inputs.extend(tensors)
    rows = forward(bundle, inputs) if inputs else []
    for request, found, (first, last) in zip(requests, answers, spans, strict=True):
        if isinstance(found, Answered):
            found.predictions.extend(bundle.ranked(row, request.top_k) for row in rows[first:last])
    return answers


@dataclass
class _Pending:
    request: Request
    future: asyncio.Future[Answer]


@dataclass
class _Batcher:
    """The queue of one model and the batches of it in flight.

    A batch starts as soon as one of the `slots` is free and takes every request waiting, up to
    `max_batch` images. Only while another batch of the model is running does it wait, up to
    `window_s`, for more: then company is on its way, and an idle server never delays a lone request.
    Under load the batches grow by themselves to what arrives while the previous ones run.

    Waiting for more requests waits on an Event, never on a queue `get`: a timed-out `wait_for`
    around `Queue.get` can drop the item it was handed at that moment (Python < 3.12), which would
    leave that request waiting for ever. Items only ever leave the deque synchronously.
    """

    run_batch: Callable[[list[Request]], Awaitable[list[Answer]]]
    slots: int
    max_batch: int
    window_s: float
    queue: deque[_Pending] = field(default_factory=deque)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    freed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when a running batch ends."""
    running: set[asyncio.Task[None]] = field(default_factory=set)
    dispatcher: asyncio.Task[None] | None = None

    def submit(self, request: Request) -> asyncio.Future[Answer]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Answer] = loop.create_future()
        self.queue.append(_Pending(request, future))
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

    async def _collect(self) -> list[_Pending]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.window_s
        while self.running and _images(self.queue) < self.max_batch:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), remaining)
        batch: list[_Pending] = []
        size = 0
        while self.queue and (not batch or size + len(self.queue[0].request.images) <= self.max_batch):
            pending = self.queue.popleft()
            if pending.future.done():  # its client went away
                continue
            batch.append(pending)
            size += len(pending.request.images)
        return batch

    async def _run(self, batch: list[_Pending]) -> None:
        try:
            answers = await self.run_batch([pending.request for pending in batch])
        except Exception as exc:  # handed to every request of the batch
            for pending in batch:
                if not pending.future.done():
                    pending.future.set_exception(exc)
            return
        for pending, found in zip(batch, answers, strict=True):
            if not pending.future.done():
                pending.future.set_result(found)


def _images(queue: deque[_Pending]) -> int:
    return sum(len(pending.request.images) for pending in queue)


class PredictionService:
    """One per app (created in the lifespan); use it from the event loop."""

    def __init__(
        self,
        *,
        batching: bool = True,
        max_batch: int = 32,
        window_s: float = 0.005,
        cache_size: int = 8,
        workers: int | None = None,
        pixel_limit: int = MAX_IMAGE_PIXELS,
    ) -> None:
        self.batching = batching
        self.max_batch = max(1, max_batch)
        self.window_s = max(0.0, window_s)
        self.pixel_limit = pixel_limit
        self.cache = BundleCache(cache_size)
        self.workers = workers or min(4, _cpus())
        self.pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="dragdl-predict")
        # Per event loop: a queue and its tasks belong to one loop. A server runs one; test clients
        # that are not entered as context managers run each request in a loop of its own.
        self._batchers: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, Path], _Batcher]
        ] = weakref.WeakKeyDictionary()

    @classmethod
    def from_settings(cls, settings: Settings) -> PredictionService:
        return cls(
            batching=settings.predict_batching,
            max_batch=settings.predict_max_batch,
            window_s=settings.predict_window_ms / 1000,
        )

    def _load(self, key: str, folder: Path) -> Bundle:
        from dragdl.engine.bundle import BundleError

        limit_torch_threads(self.workers)
        try:
            return self.cache.get(key, folder)
        except BundleError as exc:
            message = exc.message.replace(f"{folder}{os.sep}", "").replace(str(folder), "the model folder")
            raise ModelUnavailable(message) from None

    def _answer(self, key: str, folder: Path, requests: list[Request]) -> list[Answer]:
        """Runs in the pool: the requests' answers from the bundle (loaded once, then cached)."""
        return answer(self._load(key, folder), requests, self.pixel_limit)

    async def _run_batch(self, key: str, folder: Path, requests: list[Request]) -> list[Answer]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, self._answer, key, folder, requests)

    async def predict(
        self, key: str, folder: Path, images: list[tuple[str, bytes]], top_k: int = 5
    ) -> tuple[list[str], list[Prediction]]:
        """The classes and one prediction per image (name, bytes), with the bundle in `folder`
        cached under `key`.

        Raises PredictionInputError for an unusable image, ModelUnavailable for unusable model files.
        """
        request = Request(images, top_k)
        if not self.batching:
            (found,) = await self._run_batch(key, folder, [request])
        else:
            batchers = self._batchers.setdefault(asyncio.get_running_loop(), {})
            batcher = batchers.get((key, folder))
            if batcher is None:
                run_batch = functools.partial(self._run_batch, key, folder)
                batcher = batchers[(key, folder)] = _Batcher(
                    run_batch, self.workers, self.max_batch, self.window_s
                )
            found = await batcher.submit(request)
        if isinstance(found, PredictionInputError):
            raise found
        return found.classes, found.predictions

    def evict(self, key: str) -> None:
        """Forget a model (deleted, or its files replaced)."""
        self.cache.evict(key)
        for batchers in list(self._batchers.values()):
            for name in [name for name, batcher in batchers.items() if name[0] == key and batcher.idle]:
                del batchers[name]

    async def close(self) -> None:
        running = asyncio.get_running_loop()
        for loop, batchers in list(self._batchers.items()):
            for batcher in batchers.values():
                tasks = [*batcher.running, *([batcher.dispatcher] if batcher.dispatcher else [])]
                if loop.is_closed():
                    continue
                for task in tasks:
                    if loop is running:
                        task.cancel()
                    else:
                        loop.call_soon_threadsafe(task.cancel)
        self._batchers.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
