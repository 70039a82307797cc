"""Prediction serving: cached bundles, inference off the event loop, micro-batching per model.

- Loaded bundles stay in an LRU cache keyed by model id; an entry is reloaded when the bundle's
  files change (their modification times are part of the entry).
- Decoding, preprocessing and the forward pass run in a thread pool, never on the event loop.
- With batching on, the images of concurrent requests for one model wait in a queue; a batch goes
  when `max_batch` images are waiting, when `window_s` has passed since the first, or at once when
  no other request for the model is still being decoded (a lone request never waits for company).
  It runs as one forward pass, and each request gets its own rows back. Off, every request runs its
  own forward pass.
- Torch gets CPUs / worker threads intra-op threads: with more, the OpenMP teams of the workers
  oversubscribe the CPUs and spin-wait between the many small forward passes of a server (measured:
  tens of milliseconds of CPU per request for the sketcher CNN, instead of about one).

torch and the engine are imported inside the functions that need them: the server starts without.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import threading
import weakref
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dragdl.server.settings import Settings

if TYPE_CHECKING:
    from torch import Tensor

    from dragdl.engine.bundle import Bundle

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


@dataclass(frozen=True)
class ImagePrediction:
    filename: str
    index: int
    label: str
    probability: float
    top_k: list[tuple[str, float]]
    probabilities: list[float]


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
    return [p.probabilities for p in bundle.predict_preprocessed(inputs, top_k=1)]


def ranked(filename: str, classes: list[str], probabilities: list[float], top_k: int) -> ImagePrediction:
    order = sorted(range(len(probabilities)), key=lambda i: -probabilities[i])
    best = order[0]
    return ImagePrediction(
        filename=filename,
        index=best,
        label=classes[best],
        probability=probabilities[best],
        top_k=[(classes[i], probabilities[i]) for i in order[: max(1, top_k)]],
        probabilities=probabilities,
    )


@dataclass
class _Item:
    bundle: Bundle
    tensor: Tensor
    future: asyncio.Future[list[float]]


@dataclass
class _Batcher:
    """The queue of one model. Its worker task runs while images wait and ends when none do.

    Waiting for more images waits on an Event, never on a queue `get`: a timed-out `wait_for`
    around `Queue.get` can drop the item it was handed at that moment (Python < 3.12), which
    would leave that request waiting for ever. Items only ever leave the deque synchronously.
    """

    pool: ThreadPoolExecutor
    max_batch: int
    window_s: float
    queue: deque[_Item] = field(default_factory=deque)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    worker: asyncio.Task[None] | None = None
    arriving: int = 0
    """Requests for this model still being decoded: the only ones worth waiting for."""

    def submit(self, bundle: Bundle, tensor: Tensor) -> asyncio.Future[list[float]]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[float]] = loop.create_future()
        self.queue.append(_Item(bundle, tensor, future))
        self.arrived.set()
        if self.worker is None or self.worker.done():
            self.worker = loop.create_task(self._run())
        return future

    async def _collect(self) -> list[_Item]:
        loop = asyncio.get_running_loop()
        batch = [self.queue.popleft()]
        deadline = loop.time() + self.window_s
        while len(batch) < self.max_batch:
            if self.queue:
                batch.append(self.queue.popleft())
                continue
            if self.arriving <= 0:
                break  # nobody else is on the way: waiting would only add latency
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), remaining)
        return batch

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        # Ends as soon as the queue is empty; submit() starts a new worker for the next image. No
        # await separates the emptiness check from the end, so no image can be left behind.
        while self.queue:
            batch = [item for item in await self._collect() if not item.future.done()]
            # Requests that arrived across a reload of the model hold different bundles.
            groups: dict[int, list[_Item]] = {}
            for item in batch:
                groups.setdefault(id(item.bundle), []).append(item)
            for items in groups.values():
                tensors = [item.tensor for item in items]
                try:
                    rows = await loop.run_in_executor(self.pool, forward, items[0].bundle, tensors)
                except Exception as exc:  # handed to every waiting request
                    for item in items:
                        if not item.future.done():
                            item.future.set_exception(exc)
                    continue
                for item, row in zip(items, rows, strict=True):
                    if not item.future.done():
                        item.future.set_result(row)


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
        # Per event loop: a queue and its worker belong to one loop. A server runs one; test clients
        # that are not entered as context managers run each request in a loop of its own.
        self._batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Batcher]] = (
            weakref.WeakKeyDictionary()
        )

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

    def _prepare(
        self, key: str, folder: Path, images: list[tuple[str, bytes]]
    ) -> tuple[Bundle, list[Tensor]]:
        """The bundle and the network inputs, in one trip to the pool."""
        bundle = self._load(key, folder)
        return bundle, preprocess(bundle, images, self.pixel_limit)

    async def predict(
        self, key: str, folder: Path, images: list[tuple[str, bytes]], top_k: int = 5
    ) -> tuple[list[str], list[ImagePrediction]]:
        """The classes and one prediction per image (name, bytes), with the bundle in `folder`
        cached under `key`.

        Raises PredictionInputError for an unusable image, ModelUnavailable for unusable model files.
        """
        loop = asyncio.get_running_loop()
        if not self.batching:
            bundle, inputs = await loop.run_in_executor(self.pool, self._prepare, key, folder, images)
            rows = await loop.run_in_executor(self.pool, forward, bundle, inputs)
        else:
            batchers = self._batchers.setdefault(loop, {})
            batcher = batchers.get(key)
            if batcher is None:
                batcher = batchers[key] = _Batcher(self.pool, self.max_batch, self.window_s)
            batcher.arriving += 1  # a batch being collected now may wait for this request's images
            try:
                bundle, inputs = await loop.run_in_executor(self.pool, self._prepare, key, folder, images)
            finally:
                batcher.arriving -= 1
            rows = list(await asyncio.gather(*(batcher.submit(bundle, x) for x in inputs)))
        classes = bundle.classes
        return classes, [
            ranked(name, classes, row, top_k) for (name, _), row in zip(images, rows, strict=True)
        ]

    def evict(self, key: str) -> None:
        """Forget a model (deleted, or its files replaced)."""
        self.cache.evict(key)
        for batchers in list(self._batchers.values()):
            batcher = batchers.get(key)
            if batcher is not None and (batcher.worker is None or batcher.worker.done()):
                del batchers[key]

    async def close(self) -> None:
        running = asyncio.get_running_loop()
        for loop, batchers in list(self._batchers.items()):
            for batcher in batchers.values():
                if batcher.worker is None or loop.is_closed():
                    continue
                if loop is running:
                    batcher.worker.cancel()
                else:
                    loop.call_soon_threadsafe(batcher.worker.cancel)
        self._batchers.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
