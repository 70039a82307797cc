"""Opening a bundle: the network from the graph, the weights from safetensors, the eval transforms."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import safetensors.torch
import torch
from pydantic import ValidationError
from safetensors import SafetensorError
from torch import Tensor, nn

from dragdl.engine.bundle.spec import BUNDLE_FORMAT, BUNDLE_VERSION, MANIFEST_NAME, Manifest
from dragdl.engine.bundle.writer import file_sha256
from dragdl.engine.compile.plan import compile_network
from dragdl.engine.data.base import DatasetError, DatasetInfo
from dragdl.engine.data.batch import Batch, network_inputs
from dragdl.engine.data.stages import FittedTransform, OpStage, apply_stages, to_float
from dragdl.engine.data.table_pipeline import TableStep, table_features, transform_table
from dragdl.engine.data.tables import rows_to_table
from dragdl.engine.graph.errors import GraphInvalid, NodeError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.base import InputType, RequestLimits
from dragdl.engine.inputs.image_decode import ImageError, ImageInput, invert, load_image, needs_inversion
from dragdl.engine.inputs.sections import EvalTransform, TableOp
from dragdl.engine.network.module import GraphModule
from dragdl.engine.nodes.base import DatasetNode, ModelNode, OpNode
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.nodes.tables import TableOpNode
from dragdl.engine.payloads import ColumnInfo
from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.registry import get_task_kind
from dragdl.engine.train.device import Precision
from dragdl.engine.train.fastpath import autocast, native_bf16


class BundleError(Exception):
    """A bundle cannot be used; the message names the file concerned."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ClassScore:
    label: str
    probability: float


@dataclass(frozen=True)
class Prediction:
    label: str
    """The most probable class."""
    index: int
    probability: float
    top_k: list[ClassScore]
    probabilities: list[float]
    """One probability per class, in the order of `Bundle.classes`."""
    inverted: bool = False
    """The image was inverted (255 - value) to have the paper of the training images."""

    def to_json(self) -> dict[str, Any]:
        return {
            "class": self.label,
            "index": self.index,
            "probability": self.probability,
            "top_k": [{"class": s.label, "probability": s.probability} for s in self.top_k],
            "probabilities": self.probabilities,
            "inverted": self.inverted,
        }


class Bundle:
    """A trained model ready for prediction: network in eval mode plus the evaluation transforms."""

    def __init__(
        self,
        path: Path,
        manifest: Manifest,
        model: nn.Module,
        stages: tuple[OpStage, ...],
        table_steps: tuple[TableStep, ...] = (),
    ) -> None:
        self.path = path
        self.manifest = manifest
        self.model = model
        self.stages = stages
        self.table_steps = table_steps
        self.device = next((t.device for t in model.parameters()), torch.device("cpu"))
        self.input_type: InputType = input_type_of(manifest, path / MANIFEST_NAME)
        self.task: TaskKind = get_task_kind(manifest.task)
        self.serving_dtype: torch.dtype | None = None
        """bf16 when `load_bundle` found it faithful and fast here (see `serving_precision`)."""

    @property
    def classes(self) -> list[str]:
        return list(self.manifest.classes)

    @property
    def input_columns(self) -> list[ColumnInfo] | None:
        """The columns a caller gives a table model (None for image models): those its features come
        from; every column of the training table for bundles that do not say."""
        table = self.manifest.table
        if table is None:
            return None
        if table.inputs is None:
            return list(table.columns)
        return [column for column in table.columns if column.name in set(table.inputs)]

    def answer(self, outputs: Tensor, top_k: int = 5) -> list[dict[str, Any]]:
        """The task kind's answer per row of network outputs: {"value"} or {"label", "probability", ...}."""
        return self.task.answer(outputs, self.classes, top_k)

    def answer_preprocessed(self, inputs: list[Tensor], top_k: int = 5) -> list[dict[str, Any]]:
        """The task kind's answers for outputs of `preprocess` of one shape (one forward pass)."""
        return self.answer(self.logits(torch.stack(inputs)), top_k)

    def table_inputs(self, rows: list[dict[str, Any]], first_row: int = 1) -> Tensor:
        """The (N, F) network input of rows of {column: value}, through the fitted table operators.

        Raises DatasetError naming the row (numbered from `first_row`) and column of a bad value.
        """
        columns = self.input_columns
        if columns is None:
            raise BundleError(f"{self.path}: an image model; it predicts images, not table rows")
        fitted = {op.node_id: op.fitted for op in self.manifest.table.ops} if self.manifest.table else {}
        table = rows_to_table(rows, columns, first_row=first_row)
        return table_features(transform_table(table, self.table_steps, fitted), row_offset=first_row - 1)

    def predict_rows(
        self, rows: list[dict[str, Any]], top_k: int = 5, batch_size: int = 1024
    ) -> list[dict[str, Any]]:
        """One answer per row (as `TaskKind.answer`); raises DatasetError naming a bad row and column."""
        answers: list[dict[str, Any]] = []
        for start in range(0, len(rows), max(1, batch_size)):
            inputs = self.table_inputs(rows[start : start + batch_size], first_row=start + 1)
            outputs = self.logits(inputs)
            finite = torch.isfinite(outputs).all(dim=1)
            if not bool(finite.all()):
                # An argmax over NaN would still name a class: refuse rather than answer nonsense.
                row = start + int((~finite).nonzero()[0]) + 1
                raise DatasetError(
                    f"row {row}: the model's answer is not a finite number (a value of this row is far "
                    "outside what it was trained on)",
                    code="prediction_not_finite",
                )
            answers.extend(self.answer(outputs, top_k))
        return answers

    def decode_file(self, name: str, data: bytes, limits: RequestLimits | None = None) -> list[Tensor]:
        """The raw samples of a file for a model whose input type reads files (`sample_files`): a
        sequence model's .ts, .csv or .npy. Raises DatasetError naming the file and line."""
        if not self.input_type.sample_files:
            what = self.input_type.title.lower()
            raise BundleError(f"{self.path}: a model of {what} reads no sample files")
        return self.input_type.decode_file(name, data, self.manifest.input, limits or RequestLimits())

    def predict_samples(
        self, samples: Sequence[Tensor], top_k: int = 5, batch_size: int = 64
    ) -> list[dict[str, Any]]:
        """The task kind's answer (`TaskKind.answer`) for each raw sample (`decode_file`), in order:
        through the evaluation operators, batched as the input type batches them (sequences padded,
        with their lengths when they vary). Raises DatasetError naming the sample (numbered from 1)
        whose inputs the network cannot take or whose answer is not finite."""
        answers: list[dict[str, Any]] = []
        for start in range(0, len(samples), max(1, batch_size)):
            chunk = samples[start : start + batch_size]
            with torch.no_grad():
                prepared = [to_float(apply_stages(self.stages, x)) for x in chunk]
            self._check_trained_shape(prepared, first=start + 1)
            batch = self.input_type.predict_batch(prepared)
            try:
                outputs = self.forward(batch)
            except RuntimeError as exc:  # a layer that needs the trained shape (a Linear after Flatten)
                shapes = sorted({tuple(x.shape) for x in prepared})
                raise DatasetError(
                    f"samples {start + 1}-{start + len(chunk)}: the network cannot take inputs shaped "
                    f"{', '.join(map(str, shapes))} (it was trained on {self.manifest.input.network_input}): "
                    f"{str(exc).splitlines()[0][:200]}",
                    code="shape_mismatch",
                ) from None
            finite = torch.isfinite(outputs).flatten(1).all(dim=1)
            if not bool(finite.all()):
                sample = start + int((~finite).nonzero()[0]) + 1
                raise DatasetError(
                    f"sample {sample}: the model's answer is not a finite number (its values are far "
                    "outside what it was trained on)",
                    code="prediction_not_finite",
                )
            answers.extend(self.answer(outputs, top_k))
        return answers

    def _check_trained_shape(self, prepared: Sequence[Tensor], first: int) -> None:
        """Refuse a sample whose size differs from the one the network was trained on, along an axis
        whose size was fixed in training (a 3-step series for a model of 64 steps): such a network
        may run on it and answer confidently anything, and its ONNX export refuses it. An axis that
        varied in training (None in the input spec) takes any size."""
        trained = self.manifest.input.network_input
        for offset, sample in enumerate(prepared):
            shape = tuple(sample.shape)
            if len(shape) == len(trained) and all(
                t is None or t == n for t, n in zip(trained, shape, strict=True)
            ):
                continue
            wanted = "x".join("any" if t is None else str(t) for t in trained)
            raise DatasetError(
                f"sample {first + offset}: shaped {'x'.join(map(str, shape))} after the model's operators, "
                f"but the model was trained on {wanted}: bring it to that size (for a sequence, resample it "
                "to that many steps), or train the model on samples of varying sizes",
                code="shape_mismatch",
            )

    def forward(self, batch: Batch) -> Tensor:
        """Network output for a batch dict (its input, and lengths where it has them), on the CPU."""
        moved = {key: value.to(self.device) for key, value in batch.items()}
        with torch.inference_mode(), autocast(self.device, Precision(self.serving_dtype, scaler=False)):
            out: Tensor = self.model(*network_inputs(moved))
        return out.float().cpu()

    @property
    def image_size(self) -> tuple[int, int] | None:
        size = self.manifest.input.size
        return (size[0], size[1]) if size is not None else None

    def load_image(self, image: ImageInput) -> Tensor:
        """uint8 (C, H, W) as the dataset would have held it: channels converted, fixed size applied."""
        return load_image(image, self.manifest.input.channels, self.image_size)

    def prepare(self, image: ImageInput, inverted: bool | None = None) -> tuple[Tensor, bool]:
        """The float (C, H, W) network input, exactly as evaluation prepared images in training, and
        whether the image was inverted first.

        `inverted` None: inverted when its paper is the opposite of the training images' (dark ink on
        white for a model trained on light strokes on black); True or False: as the caller says.
        """
        raw = self.load_image(image)
        if inverted is None:
            inverted = needs_inversion(raw, self.manifest.input.background)
        if inverted:
            raw = invert(raw)
        with torch.no_grad():
            return to_float(apply_stages(self.stages, raw)), inverted

    def preprocess(self, image: ImageInput, inverted: bool | None = None) -> Tensor:
        """The network input of `prepare`."""
        return self.prepare(image, inverted)[0]

    def logits(self, batch: Tensor) -> Tensor:
        """Network output for a preprocessed (N, C, H, W) batch, on the CPU."""
        batch = batch.to(self.device)
        if batch.ndim == 4:  # the network's layout (see load_bundle)
            batch = batch.contiguous(memory_format=torch.channels_last)
        with torch.inference_mode(), autocast(self.device, Precision(self.serving_dtype, scaler=False)):
            out: Tensor = self.model(batch)
        return out.float().cpu()

    def predict(
        self,
        images: ImageInput | list[ImageInput] | tuple[ImageInput, ...],
        top_k: int = 5,
        batch_size: int = 64,
    ) -> list[Prediction]:
        """One Prediction per image, in order; raises ImageError naming the first unusable input."""
        items = list(images) if isinstance(images, list | tuple) else [images]
        results: list[Prediction] = []
        for start in range(0, len(items), max(1, batch_size)):
            prepared = [self.prepare(image) for image in items[start : start + batch_size]]
            inputs, flips = [x for x, _ in prepared], [flip for _, flip in prepared]
            results.extend(self.predict_preprocessed(inputs, top_k, flips))
        return results

    def predict_preprocessed(
        self, inputs: list[Tensor], top_k: int = 5, inverted: list[bool] | None = None
    ) -> list[Prediction]:
        """Predictions for outputs of `preprocess`, batched; `inverted` as `prepare` said for each."""
        flips = inverted if inverted is not None else [False] * len(inputs)
        rows = self.probabilities(inputs)
        return [self.ranked(row, top_k, flip) for row, flip in zip(rows, flips, strict=True)]

    def probabilities(self, inputs: list[Tensor]) -> list[list[float]]:
        """The class probabilities of each output of `preprocess`, in as few forward passes as the
        input shapes allow."""
        # Images of varying size (no fixed dataset size, no Resize) cannot share a batch: group by shape.
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, x in enumerate(inputs):
            groups.setdefault(tuple(x.shape), []).append(i)
        rows: list[list[float]] = [[] for _ in inputs]
        for indices in groups.values():
            probs = torch.softmax(self.logits(torch.stack([inputs[i] for i in indices])), dim=1)
            # One conversion per batch: per-row tensor ops would cost more than a small forward pass.
            for i, row in zip(indices, probs.tolist(), strict=True):
                rows[i] = row
        return rows

    def ranked(self, probabilities: list[float], top_k: int = 5, inverted: bool = False) -> Prediction:
        """The prediction that a probability vector (one value per class) makes; `inverted` says
        whether `prepare` inverted its image."""
        classes = self.manifest.classes
        k = max(1, min(top_k, len(classes)))
        order = sorted(range(len(probabilities)), key=probabilities.__getitem__, reverse=True)[:k]
        scores = [ClassScore(classes[i], probabilities[i]) for i in order]
        return Prediction(
            label=scores[0].label,
            index=order[0],
            probability=scores[0].probability,
            top_k=scores,
            probabilities=probabilities,
            inverted=inverted,
        )


def bundle_dir(path: str | Path) -> Path:
    """The bundle folder for a folder or its model.json; raises BundleError when there is none."""
    path = Path(path)
    if path.is_file() and path.name == MANIFEST_NAME:
        path = path.parent
    if not path.exists():
        raise BundleError(f"{path}: no such bundle (expected a run folder with {MANIFEST_NAME})")
    if not path.is_dir():
        raise BundleError(f"{path}: not a bundle (expected a run folder with {MANIFEST_NAME})")
    if not (path / MANIFEST_NAME).is_file():
        raise BundleError(f"{path}: no {MANIFEST_NAME} in this folder (was the run finished?)")
    return path


def read_manifest(path: str | Path) -> Manifest:
    """Read and check model.json of a bundle folder."""
    file = bundle_dir(path) / MANIFEST_NAME
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BundleError(
            f"{file}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"{file}: cannot be read ({exc})") from None
    if not isinstance(raw, dict) or raw.get("format") != BUNDLE_FORMAT:
        raise BundleError(f'{file}: not a DragDL model.json (no "format": "{BUNDLE_FORMAT}")')
    version = raw.get("format_version")
    if not isinstance(version, int) or version > BUNDLE_VERSION:
        raise BundleError(
            f"{file}: format_version {version!r} is not one this DragDL reads (up to {BUNDLE_VERSION}); "
            "upgrade DragDL"
        )
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "model.json"
        count = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise BundleError(f"{file}: {where}: {first['msg']}{count}") from None


def load_bundle(path: str | Path, device: str | torch.device = "cpu") -> Bundle:
    """Open a bundle folder (or its model.json) for prediction; raises BundleError naming the file.

    Weights are read with safetensors only; nothing is unpickled.
    """
    folder = bundle_dir(path)
    manifest = read_manifest(folder)
    file = folder / MANIFEST_NAME
    model = _build_network(manifest, file)
    _load_weights(model, manifest, folder)
    # channels_last: oneDNN's CPU convolutions run faster in that layout, the more so in batches
    # (measured per image: EfficientNet-Lite0 at 64x64 8.2 -> 6.0 ms alone, 2.7 -> 1.7 ms in batches
    # of 32; the sketcher CNN 0.23 -> 0.21 ms and 0.09 -> 0.06 ms). Only 4-D weights change layout.
    model.to(torch.device(device)).to(memory_format=torch.channels_last).eval()
    stages = tuple(_build_stage(entry, file) for entry in manifest.eval_transforms)
    steps = tuple(_build_table_step(op, file) for op in manifest.table.ops) if manifest.table else ()
    bundle = Bundle(folder, manifest, model, stages, steps)
    bundle.serving_dtype = serving_precision(bundle)
    return bundle


SERVING_TOLERANCE = 1e-2
"""Largest difference of a class probability between bf16 and fp32 that bf16 serving may make."""


def serving_precision(bundle: Bundle, check_batch: int = 16) -> torch.dtype | None:
    """bf16 for a classifier trained in bf16, where the device computes bf16 natively (emulated it is
    slower than fp32) and its probabilities stay within SERVING_TOLERANCE of fp32's on a check batch
    of seeded random inputs; None (fp32) otherwise."""
    trained = bundle.manifest.trained_with or {}
    # Checked on class probabilities: a kind whose answers rank no classes serves in fp32.
    if trained.get("precision") != "bf16" or not bundle.task.ranks_classes:
        return None
    if not native_bf16(bundle.device):
        return None
    dims = bundle.manifest.input.network_input
    shape = tuple(d for d in dims if d is not None)
    if len(shape) != len(dims):  # images of any size: no one check batch stands for them
        return None
    return torch.bfloat16 if bf16_probabilities_agree(bundle.model, shape, check_batch) else None


def bf16_probabilities_agree(model: nn.Module, input_shape: tuple[int, ...], batch: int = 16) -> bool:
    """Whether softmax probabilities under bf16 autocast stay within SERVING_TOLERANCE of fp32's."""
    device = next((t.device for t in model.parameters()), torch.device("cpu"))
    generator = torch.Generator().manual_seed(0)  # its own: loading a model draws nothing from torch's
    x = torch.rand((batch, *input_shape), generator=generator).to(device)
    if x.ndim == 4:
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        exact = torch.softmax(model(x).float(), dim=1)
        with autocast(device, Precision(torch.bfloat16, scaler=False)):
            fast = torch.softmax(model(x).float(), dim=1)
    return bool((exact - fast).abs().max() <= SERVING_TOLERANCE)


def _dataset_info(manifest: Manifest) -> DatasetInfo:
    d = manifest.dataset
    size = (d.size[0], d.size[1]) if d.size is not None and len(d.size) == 2 else None
    table = manifest.table
    return DatasetInfo(
        classes=tuple(d.classes),
        channels=d.channels,
        size=size,
        count=d.count,
        columns=tuple(table.columns) if table else (),
        target=table.target if table else None,
        shape=tuple(d.shape) if d.shape is not None else None,
    )


def _build_table_step(op: TableOp, file: Path) -> TableStep:
    kind = get_node_type(op.type)
    where = f"{file}: table operator {op.node_id} ({op.type})"
    if not isinstance(kind, TableOpNode):
        raise BundleError(f"{where}: not a table operator of this DragDL")
    params, errors = kind.parse_params(op.params, op.node_id)
    if params is None:
        raise BundleError(f"{where}: {errors[0].message}")
    return kind.operator(op.node_id, params, (), op.node_id)


def input_type_of(manifest: Manifest, file: Path) -> InputType:
    """The input type of the bundle's dataset node (its node type names it)."""
    kind = get_node_type(manifest.dataset.type)
    if not isinstance(kind, DatasetNode):
        raise BundleError(
            f"{file}: dataset.type {manifest.dataset.type!r} is not a dataset node of this DragDL"
        )
    return kind.input_type


def _without_pretrained(graph: Graph) -> Graph:
    # The bundle holds every weight, so model nodes must not look for (or download, or torch.load)
    # their published ImageNet weights: the architecture is the same without them.
    graph = graph.model_copy(deep=True)
    for node in graph.nodes:
        kind = get_node_type(node.type)
        if isinstance(kind, ModelNode) and "pretrained" in kind.params_model.model_fields:
            node.params = {**node.params, "pretrained": False, "weights_path": None}
    return graph


def _build_network(manifest: Manifest, file: Path) -> nn.Module:
    if len(manifest.classes) != len(manifest.dataset.classes):
        raise BundleError(
            f"{file}: {len(manifest.classes)} classes but the dataset lists {len(manifest.dataset.classes)}"
        )
    fitted = {op.node_id: op.fitted for op in manifest.table.ops} if manifest.table else None
    try:
        model, _ = compile_network(_without_pretrained(manifest.graph), _dataset_info(manifest), fitted)
    except GraphInvalid as exc:
        raise BundleError(f"{file}: the graph does not build: {exc}") from None
    if manifest.output_scale is not None:
        if not isinstance(model, GraphModule):
            raise BundleError(f"{file}: output_scale is set but the network cannot take it")
        model.set_output_scale(manifest.output_scale)
    return model


def _load_weights(model: nn.Module, manifest: Manifest, folder: Path) -> None:
    name = str(manifest.weights.get("file", "model.safetensors"))
    weights = folder / Path(name).name
    if not weights.is_file():
        raise BundleError(f"{weights}: no such file (the bundle's weights)")
    expected = manifest.weights.get("sha256")
    if isinstance(expected, str) and file_sha256(weights) != expected:
        raise BundleError(
            f"{weights}: does not match the sha256 recorded in {MANIFEST_NAME} (file replaced or damaged)"
        )
    try:
        state = safetensors.torch.load_file(str(weights), device="cpu")
    except (SafetensorError, OSError, ValueError) as exc:
        raise BundleError(f"{weights}: not a readable safetensors file ({exc})") from None
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).split("\n\t")[1] if "\n\t" in str(exc) else str(exc)
        raise BundleError(
            f"{weights}: does not fit the network in {MANIFEST_NAME}: {first.strip()}"
        ) from None


def _build_stage(entry: EvalTransform, file: Path) -> OpStage:
    kind = get_node_type(entry.type)
    where = f"{file}: eval transform {entry.node_id} ({entry.type})"
    if not isinstance(kind, OpNode) or kind.random:
        raise BundleError(f"{where}: not a deterministic data operator of this DragDL")
    params, errors = kind.parse_params(entry.params, entry.node_id)
    if params is None:
        raise BundleError(f"{where}: {errors[0].message}")
    try:
        transform = kind.build(params, tuple(entry.in_shape))
    except NodeError as exc:
        raise BundleError(f"{where}: {exc.message}") from None
    if isinstance(transform, FittedTransform):
        if not entry.fitted:
            raise BundleError(f"{where}: the statistics it learned in training are missing (fitted)")
        try:
            transform.load(entry.fitted)
        except ValueError as exc:
            raise BundleError(f"{where}: {exc}") from None
    elif entry.fitted:
        raise BundleError(f"{where}: {type(transform).__name__} cannot take fitted statistics")
    return OpStage(node_id=entry.node_id, transform=transform, random=False, needs_float=kind.needs_float)


__all__ = [
    "Bundle",
    "BundleError",
    "ClassScore",
    "ImageError",
    "Prediction",
    "bundle_dir",
    "load_bundle",
    "read_manifest",
]
