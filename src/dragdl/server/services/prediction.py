"""Prediction serving: cached bundles, inference off the event loop, micro-batching per model.

- Loaded bundles stay in memory (bundle_cache.BundleCache), reloaded when their files change.
- Decoding, preprocessing, the forward pass and the ranking run in a thread pool, in one trip per
  batch, never on the event loop.
- With batching on, concurrent requests for one model queue up, and a batch takes all that wait (up
  to `max_batch` images) as one forward pass; each request gets its own predictions back, and an
  unusable image fails its own request only. `batching.MicroBatcher` says when a batch goes. Off,
  every request makes its own trip to the pool and its own forward pass.
- Torch gets CPUs / worker threads intra-op threads: with more, the OpenMP teams of the workers
  oversubscribe the CPUs and spin-wait between the many small forward passes of a server (measured:
  tens of milliseconds of CPU per request for the sketcher CNN, instead of about one).

torch and the engine are imported inside the functions that need them: the server starts without.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dragdl.server.services.batching import MicroBatcher
from dragdl.server.services.bundle_cache import BundleCache
from dragdl.server.settings import Settings

if TYPE_CHECKING:
    from torch import Tensor

    from dragdl.engine.bundle import Bundle, Prediction
    from dragdl.engine.tasks.base import TaskKind

MAX_IMAGE_PIXELS = 40_000_000
"""The engine's DEFAULT_PIXEL_LIMIT (not imported: that module loads torch)."""

log = logging.getLogger(__name__)


def limit_torch_threads(workers: int) -> None:
    """At most CPUs / `workers` torch intra-op threads (at least 1), before a forward pass.

    Checked at every bundle load rather than once per process: `torch.set_num_threads` elsewhere in
    the process (a table training puts its own setting back) also resets the team size that new
    threads start with, and the prediction workers must not inherit an oversubscribed one.
    """
    import torch

    threads = max(1, _cpus() // max(1, workers))
    if torch.get_num_threads() > threads:
        torch.set_num_threads(threads)
        log.info("prediction: %d torch thread(s) per prediction worker", threads)


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


def preprocess(
    bundle: Bundle, images: list[tuple[str, bytes]], pixel_limit: int, invert: bool | None = None
) -> list[tuple[Tensor, bool]]:
    """Each image as the network input, with the bundle's evaluation transforms, and whether it was
    inverted (`invert` None: when its paper is the opposite of the training images')."""
    from dragdl.engine.bundle import ImageError
    from dragdl.engine.data.stages import NonFiniteError

    inputs = []
    for name, data in images:
        check_image(name, data, pixel_limit)
        try:
            inputs.append(bundle.prepare(data, invert))
        except ImageError as exc:
            raise PredictionInputError(str(exc).replace(f"<{len(data)} bytes>", name, 1)) from None
        except NonFiniteError as exc:  # a data operator of the model gives NaN for this image
            raise PredictionInputError(f"{name}: {exc.message.replace('an image', 'this image')}") from None
    return inputs


def forward(bundle: Bundle, inputs: list[Tensor]) -> list[list[float]]:
    """The probability vector of each input, in one batched pass (per input shape)."""
    return bundle.probabilities(inputs)


_kinds: weakref.WeakKeyDictionary[Bundle, TaskKind] = weakref.WeakKeyDictionary()
_kinds_lock = threading.Lock()


def task_kind(bundle: Bundle) -> TaskKind:
    """The task kind the bundle was trained for: its graph's train node, else model.json's `task`,
    else classification (bundles written before task kinds are classifiers)."""
    with _kinds_lock:
        found = _kinds.get(bundle)
    if found is not None:
        return found
    from dragdl.engine.nodes.train_node import find_train_node

    # The train node is what built the network the bundle holds, so it is the authority.
    node = find_train_node(bundle.manifest.graph.model_dump(mode="json"))
    found = node[1].task if node is not None else bundle.task
    with _kinds_lock:
        _kinds[bundle] = found
    return found


def outputs(bundle: Bundle, inputs: list[Tensor]) -> list[Tensor]:
    """The network's raw output row of each input, in one batched pass per input shape."""
    import torch

    groups: dict[tuple[int, ...], list[int]] = {}
    for i, x in enumerate(inputs):
        groups.setdefault(tuple(x.shape), []).append(i)
    rows: list[Tensor] = [torch.empty(0) for _ in inputs]
    for indices in groups.values():
        out = bundle.logits(torch.stack([inputs[i] for i in indices]))
        for i, row in zip(indices, out, strict=True):
            rows[i] = row
    return rows


@dataclass(frozen=True)
class ValuePrediction:
    """A regression model's prediction for one image."""

    value: float
    inverted: bool = False


@dataclass(frozen=True)
class Request:
    """The images of one HTTP request (name, bytes) and how many classes to rank for each."""

    images: list[tuple[str, bytes]]
    top_k: int
    invert: bool | None = None
    """None: invert an image whose paper is the opposite of the training images'; True/False: do as told."""


@dataclass(frozen=True)
class SampleAnswer:
    """The answer for one sample of a file of a model whose input type reads files (sequences)."""

    filename: str
    sample: int
    """Its position in the file, counted from 1."""
    answer: dict[str, Any]
    """The task kind's answer (`TaskKind.answer`)."""
    summary: str
    """The answer in one line (`TaskKind.summarize`)."""


@dataclass(frozen=True)
class Answered:
    classes: list[str]
    predictions: list[Prediction | ValuePrediction | SampleAnswer]
    """One per image of the request, in order: class scores, or a value for a regression model; for a
    model whose input type reads sample files, one per sample of each file, in order."""
    task: str = ""
    """The model's task kind."""


Answer = Answered | PredictionInputError
"""A request's predictions, or why one of its images cannot be used."""


def answer(bundle: Bundle, requests: list[Request], pixel_limit: int) -> list[Answer]:
    """Every request's answer, from one forward pass over all their usable images (per input shape).

    An unusable image fails its own request only: the others of the batch are answered. A classifier
    answers ranked class probabilities; any other kind answers what its `TaskKind.answer` says.
    """
    if bundle.input_type.predicts_from == "rows":
        raise WrongInputKind("it is a table model: send rows to /predict/rows, not images")
    kind = task_kind(bundle)
    classes = bundle.classes if kind.classes_are_vocabulary else []
    if bundle.input_type.sample_files:  # files the input type decodes itself: each request alone
        return [answer_samples(bundle, kind, request) for request in requests]
    answers: list[Answer] = []
    inputs: list[Tensor] = []
    flips: list[bool] = []
    spans: list[tuple[int, int]] = []
    for request in requests:
        try:
            prepared = preprocess(bundle, request.images, pixel_limit, request.invert)
        except PredictionInputError as exc:
            answers.append(exc)
            spans.append((0, 0))
            continue
        answers.append(Answered(classes, [], kind.name))
        spans.append((len(inputs), len(inputs) + len(prepared)))
        inputs.extend(x for x, _ in prepared)
        flips.extend(flip for _, flip in prepared)
    if not kind.ranks_classes:
        return _answer_values(bundle, kind, requests, answers, spans, inputs, flips)
    rows = forward(bundle, inputs) if inputs else []
    for request, found, (first, last) in zip(requests, answers, spans, strict=True):
        if isinstance(found, Answered):
            found.predictions.extend(
                bundle.ranked(row, request.top_k, flip)
                for row, flip in zip(rows[first:last], flips[first:last], strict=True)
            )
    return answers


def _answer_values(
    bundle: Bundle,
    kind: TaskKind,
    requests: list[Request],
    answers: list[Answer],
    spans: list[tuple[int, int]],
    inputs: list[Tensor],
    flips: list[bool],
) -> list[Answer]:
    """The answers of a model that predicts a value per image (regression), through its kind."""
    import torch

    rows = outputs(bundle, inputs) if inputs else []
    values = kind.answer(torch.stack(rows), [], 1) if rows else []
    for found, (first, last) in zip(answers, spans, strict=True):
        if isinstance(found, Answered):
            found.predictions.extend(
                ValuePrediction(float(v["value"]), flip)
                for v, flip in zip(values[first:last], flips[first:last], strict=True)
            )
    return answers


MAX_PREDICT_SAMPLES = 1_000
"""Samples the files of one prediction request may hold together (a .ts file holds many)."""


def answer_samples(bundle: Bundle, kind: TaskKind, request: Request) -> Answer:
    """The answer per sample of each file of the request (a sequence model's .ts, .csv or .npy), or
    why a file cannot be used, naming it and its line."""
    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.data.stages import NonFiniteError
    from dragdl.engine.inputs.base import RequestLimits

    places: list[tuple[str, int]] = []
    samples: list[Tensor] = []
    try:
        for name, data in request.images:
            # Each file may hold what the files before it left of the request's allowance.
            left = MAX_PREDICT_SAMPLES - len(samples)
            if left < 1:
                return PredictionInputError(
                    f"{name}: the files before it hold {len(samples)} samples, the most one request takes"
                )
            found = bundle.decode_file(name, data, RequestLimits(max_samples=left))
            places.extend((name, i + 1) for i in range(len(found)))
            samples.extend(found)
        answers = bundle.predict_samples(samples, request.top_k)
    except (DatasetError, NonFiniteError) as exc:
        message = exc.message
        if isinstance(exc, DatasetError) and message.startswith("sample"):  # numbered over the request
            message = _name_sample(message, places)
        return PredictionInputError(message)
    classes = bundle.classes if kind.classes_are_vocabulary else []
    return Answered(
        classes,
        [
            SampleAnswer(name, sample, found, kind.summarize(found))
            for (name, sample), found in zip(places, answers, strict=True)
        ],
        kind.name,
    )


def _name_sample(message: str, places: list[tuple[str, int]]) -> str:
    """A message about the request's n-th sample (counted from 1) with its file and position there."""
    head, _, rest = message.partition(":")
    number = head.split()[-1].split("-")[0]
    if not number.isdigit() or not 1 <= int(number) <= len(places):
        return message
    name, sample = places[int(number) - 1]
    return f"{name}, sample {sample}:{rest}"


class WrongInputKind(Exception):
    """Rows sent to a model that takes images, or images to a model that takes rows."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class TableModel:
    """What a table model takes and answers, from its bundle's `table` section."""

    task: str
    target: str | None
    columns: list[str]
    """The input columns, in the model's order."""
    classes: list[str]


def table_model(bundle: Bundle) -> TableModel | None:
    """The bundle's table description; None for an image model."""
    table = bundle.manifest.table
    if table is None:
        return None
    kind = task_kind(bundle)
    classes = bundle.classes if kind.classes_are_vocabulary else []
    return TableModel(kind.name, table.target, [c.name for c in table.columns], classes)


def predict_table_rows(
    bundle: Bundle, rows: list[dict[str, Any]], top_k: int = 5, where: str = ""
) -> list[dict[str, Any]]:
    """The bundle's answer per row (`TaskKind.answer`); PredictionInputError naming the row and
    column (prefixed with `where`, the file's name, for an upload)."""
    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.data.stages import NonFiniteError

    try:
        answers = bundle.predict_rows(rows, top_k)
    except DatasetError as exc:
        raise PredictionInputError(f"{where}{exc.message}") from None
    except NonFiniteError as exc:
        raise PredictionInputError(f"{where}{exc.message}") from None
    # Bundle.predict_rows refuses a row whose answer is not finite (JSON has no NaN or infinity).
    return answers


def _not_rows(bundle: Bundle) -> WrongInputKind:
    what = bundle.input_type.title.lower()
    return WrongInputKind(f"it takes {what}, not table rows: send its files to /predict")


def _images(request: Request) -> int:
    return len(request.images)


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
            asyncio.AbstractEventLoop, dict[tuple[str, Path], MicroBatcher[Request, Answer]]
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
        self,
        key: str,
        folder: Path,
        images: list[tuple[str, bytes]],
        top_k: int = 5,
        invert: bool | None = None,
    ) -> tuple[list[str], list[Prediction | ValuePrediction | SampleAnswer]]:
        """The classes and one prediction per image (name, bytes), with the bundle in `folder`
        cached under `key`; `invert` as in Request. A model whose input type reads sample files
        (sequences) answers each sample of each file (`SampleAnswer`).

        Raises PredictionInputError for an unusable image, ModelUnavailable for unusable model files,
        WrongInputKind for a table model.
        """
        found = await self.predict_files(key, folder, images, top_k, invert)
        return found.classes, found.predictions

    async def predict_files(
        self,
        key: str,
        folder: Path,
        images: list[tuple[str, bytes]],
        top_k: int = 5,
        invert: bool | None = None,
    ) -> Answered:
        """`predict`'s answer with the model's task kind."""
        request = Request(images, top_k, invert)
        if not self.batching:
            (found,) = await self._run_batch(key, folder, [request])
        else:
            batchers = self._batchers.setdefault(asyncio.get_running_loop(), {})
            batcher = batchers.get((key, folder))
            if batcher is None:
                run_batch = functools.partial(self._run_batch, key, folder)
                batcher = batchers[(key, folder)] = MicroBatcher(
                    run_batch, _images, self.workers, self.max_batch, self.window_s
                )
            found = await batcher.submit(request)
        if isinstance(found, PredictionInputError):
            raise found
        return found

    def table_model(self, key: str, folder: Path) -> TableModel:
        """Blocking (call from a worker thread): the model's table description; WrongInputKind for
        an image model, ModelUnavailable for unusable files."""
        bundle = self._load(key, folder)
        found = table_model(bundle)
        if found is None:
            raise _not_rows(bundle)
        return found

    async def predict_rows(
        self, key: str, folder: Path, rows: list[dict[str, Any]], top_k: int = 5, where: str = ""
    ) -> tuple[TableModel, list[dict[str, Any]]]:
        """The table model and its answer for each row, computed in the pool (one trip)."""

        def run() -> tuple[TableModel, list[dict[str, Any]]]:
            bundle = self._load(key, folder)
            found = table_model(bundle)
            if found is None:
                raise _not_rows(bundle)
            return found, predict_table_rows(bundle, rows, top_k, where)

        return await asyncio.get_running_loop().run_in_executor(self.pool, run)

    def evict(self, key: str) -> None:
        """Forget a model (deleted, or its files replaced)."""
        self.cache.evict(key)
        for batchers in list(self._batchers.values()):
            for name in [name for name, batcher in batchers.items() if name[0] == key and batcher.idle]:
                del batchers[name]

    async def close(self) -> None:
        running = asyncio.get_running_loop()
        for loop, batchers in list(self._batchers.items()):
            if loop.is_closed():
                continue
            for batcher in batchers.values():
                if loop is running:
                    batcher.cancel()
                else:
                    loop.call_soon_threadsafe(batcher.cancel)
        self._batchers.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
