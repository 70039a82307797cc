"""Frozen-feature cache: train only the head of a frozen backbone, on features computed once.

When the network is a single model node with `freeze_features` and every data operator is
deterministic, an image reaches the backbone the same way in every epoch, and the backbone (kept
in eval mode, without gradients) always maps it to the same features. Running it at every step is
what makes transfer learning slow on a CPU, so here it runs once over the whole dataset (as
Teachable Machine does): the features are kept in memory and under
`<data_dir>/cache/features/<key>.safetensors`, and the trainer fits only the head, on
`TensorBatches` of features. The head is the network's own module, so once training ends the full
network (adapter, backbone, trained head) is what model.safetensors and the bundle hold: prediction
and export never see the cache. Checkpoints hold the head network (`FeatureHead`), so a stopped
run resumes exactly, reading the features back from the cache.

The key hashes everything the features depend on: the dataset (node params, size, labels, first
and last image), the deterministic operators (params and fitted statistics) and the backbone
(node params that shape its input, and a digest of its weights). Changing any of them gives a new
key; the split, the seed, the train params and the head do not enter it, so they reuse the cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import safetensors
import safetensors.torch
import torch
from torch import Tensor, nn

from dragdl.engine.compile.plan import Plan
from dragdl.engine.data.base import DataContext, ImageSource
from dragdl.engine.data.pipeline import (
    DEFAULT_MEMORY_BUDGET,
    Pipeline,
    TensorBatches,
    apply_stages,
    eval_chunks,
    fit_stages,
    to_float,
)
from dragdl.engine.data.splits import Splits
from dragdl.engine.files import save_atomic
from dragdl.engine.models.head import TransferModel
from dragdl.engine.network.module import GraphModule, LayerRuntimeError
from dragdl.engine.nodes.base import ModelNode
from dragdl.engine.tasks.settings import MemoryFormatChoice
from dragdl.engine.train.device import resolve_device
from dragdl.engine.train.events import LogEvent
from dragdl.engine.train.fastpath import LayoutName
from dragdl.engine.train.reporter import Reporter

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Bumped when what a cache file holds changes, so older files are not reused."""


@dataclass(frozen=True)
class FrozenBackbone:
    """The model node whose backbone output can be cached, with its built TransferModel."""

    node_id: str
    model: TransferModel
    feature_dim: int

    def head_network(self) -> FeatureHead:
        return FeatureHead(self.node_id, self.model.head)


class FeatureHead(nn.Module):
    """What a frozen-feature run trains: the model node's head (the same module), fed features.

    Its weights are named as in the full network (`layers.<id>.head.*`), so a checkpoint of the
    head-only run reads like a part of the full network's state.
    """

    def __init__(self, node_id: str, head: nn.Module) -> None:
        super().__init__()
        self.node_id = node_id
        self.layers = nn.ModuleDict({node_id: nn.ModuleDict({"head": head})})

    def node_layers(self) -> dict[str, nn.Module]:
        node = self.layers[self.node_id]
        assert isinstance(node, nn.ModuleDict)
        return {self.node_id: node["head"]}

    def forward(self, features: Tensor) -> Tensor:
        node = self.layers[self.node_id]
        assert isinstance(node, nn.ModuleDict)
        logits: Tensor = node["head"](features)
        return logits


def frozen_backbone(plan: Plan, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> FrozenBackbone | None:
    """The model node to cache features of, or None when the graph does not allow it.

    It must be the whole network (model nodes take the images and give the logits), with a frozen
    backbone, after deterministic operators only; the features of every image must fit
    `memory_budget` bytes.
    """
    network = plan.model
    if not isinstance(network, GraphModule) or len(network.steps) != 1:
        return None
    if network.output_scale is not None:  # the head alone would learn without the target's scale
        return None
    if any(stage.random for stage in plan.stages):
        return None
    step = network.steps[0]
    model = network.layers[step.node_id]
    if step.inputs != (GraphModule.INPUT,) or network.output != step.node_id:
        return None
    if not isinstance(model, TransferModel) or not model.features_frozen:
        return None
    linear = next((m for m in model.head.modules() if isinstance(m, nn.Linear)), None)
    if linear is None:
        return None
    if len(plan.source) * linear.in_features * 4 > memory_budget:
        log.info("backbone features of %d images exceed the memory budget; not caching", len(plan.source))
        return None
    return FrozenBackbone(step.node_id, model, linear.in_features)


def _images(plan: Plan) -> ImageSource:
    # A model node takes images (its input port), so a plan with a frozen backbone has an image source.
    if not isinstance(plan.source, ImageSource):
        raise TypeError(f"a backbone's features need an image source, not {type(plan.source).__name__}")
    return plan.source


def feature_pipeline(
    plan: Plan, frozen: FrozenBackbone, splits: Splits, ctx: DataContext, reporter: Reporter
) -> Pipeline:
    """Batches of backbone features for each split, read from the cache or computed (and cached) now.

    The returned pipeline keeps the graph's stages, fitted statistics and image input shape, so the
    report and the bundle describe the image network.
    """
    config = plan.config
    device = resolve_device(config.device)
    fitted = fit_stages(_images(plan), splits, plan.stages, config.seed)
    layout = feature_pass_layout(frozen, config.memory_format)
    key = cache_key(plan, frozen, fitted, layout)
    path = ctx.cache_dir / "features" / f"{key}.safetensors"
    frozen.model.adapter.to(device)
    frozen.model.features.to(device)
    features = _read(path, len(plan.source), frozen.feature_dim)
    if features is not None:
        message = f"feature cache: reused the backbone features of {len(features)} images"
        reporter.emit(LogEvent("info", message))
    else:
        reporter.emit(
            LogEvent(
                "info",
                f"feature cache: computing the backbone features of {len(plan.source)} images once; "
                "training then runs on them (only the head learns)",
            )
        )
        started = time.perf_counter()
        features = compute_features(plan, frozen, device, layout)
        _write(path, features, key, frozen)
        seconds = time.perf_counter() - started
        how = layout.replace("_", " ")
        reporter.emit(LogEvent("info", f"feature cache: built in {seconds:.1f} s, fp32 {how} ({path.name})"))
    labels = torch.from_numpy(np.asarray(plan.targets))
    features = features.to(device)

    def batches(indices: np.ndarray, training: bool) -> TensorBatches | None:
        if len(indices) == 0:
            return None
        rows = torch.from_numpy(np.asarray(indices, dtype=np.int64))
        x = features[rows.to(device)]
        return TensorBatches(x, labels[rows], config.batch_size, training, config.seed)

    train = batches(splits.train, training=True)
    if train is None:
        raise ValueError("the training split is empty")
    eval_stages = tuple(s for s in plan.stages if not s.random)
    sample = to_float(apply_stages(eval_stages, _images(plan).image(int(splits.train[0]))))
    return Pipeline(
        train=train,
        val=batches(splits.val, training=False),
        test=batches(splits.test, training=False),
        stages=tuple(plan.stages),
        input_shape=tuple(sample.shape),
        fitted=fitted,
        batch_shape=tuple(features.shape[1:]),
    )


def feature_pass_layout(frozen: FrozenBackbone, memory_format: MemoryFormatChoice) -> LayoutName:
    """The memory format of the feature pass: the train node's, and for "auto" channels_last when
    the backbone convolves (oneDNN's and cuDNN's convolutions run faster in it without gradients,
    as measured for prediction: EfficientNet-Lite0 at 64x64 8.2 -> 6.0 ms an image on a CPU). It
    stays fp32: the features are kept and reused, so they are computed once at full precision."""
    if memory_format != "auto":
        return memory_format
    convolves = any(p.ndim == 4 for p in frozen.model.features.parameters())
    return "channels_last" if convolves else "contiguous"


def compute_features(
    plan: Plan, frozen: FrozenBackbone, device: torch.device, layout: LayoutName = "contiguous"
) -> Tensor:
    """(N, feature_dim) float32 on the CPU: every image of the dataset, in order, through the
    deterministic operators, the input adapter and the backbone (eval mode, no gradients)."""
    model = frozen.model
    model.features.eval()
    channels_last = layout == "channels_last"
    if channels_last:
        model.adapter.to(memory_format=torch.channels_last)
        model.features.to(memory_format=torch.channels_last)
    batch_size = plan.config.batch_size
    out = torch.empty((len(plan.source), frozen.feature_dim), dtype=torch.float32)
    row = 0
    with torch.no_grad():
        for chunk in eval_chunks(_images(plan), plan.stages):
            for start in range(0, len(chunk), batch_size):
                x = chunk[start : start + batch_size].to(device)
                if channels_last and x.ndim == 4:
                    x = x.contiguous(memory_format=torch.channels_last)
                try:
                    y = model.features(model.adapter(x))
                except RuntimeError as exc:
                    raise LayerRuntimeError(frozen.node_id, str(exc).split("\n")[0]) from exc
                out[row : row + len(y)] = y.float().cpu()
                row += len(y)
    if channels_last:  # the trained network is saved with safetensors, which wants contiguous weights
        model.adapter.to(memory_format=torch.contiguous_format)
        model.features.to(memory_format=torch.contiguous_format)
    return out


def cache_key(
    plan: Plan, frozen: FrozenBackbone, fitted: dict[str, dict[str, Any]], layout: LayoutName = "contiguous"
) -> str:
    """A hex digest of everything the features depend on (see the module docstring)."""
    structure = plan.analysis.structure
    assert structure.dataset_id is not None
    source = _images(plan)
    last = len(source) - 1
    dataset = {
        **_node_identity(plan, structure.dataset_id),
        "count": len(source),
        "classes": list(source.info.classes),
        "labels": _digest(np.ascontiguousarray(source.labels, dtype=np.int64).tobytes()),
        "ends": [
            [list(image.shape), _digest(_tensor_bytes(image))]
            for image in (source.image(0), source.image(last))
        ],
    }
    ops = [
        {
            **_node_identity(plan, stage.node_id),
            "needs_float": stage.needs_float,
            "fitted": fitted.get(stage.node_id),
        }
        for stage in plan.stages
    ]
    info = plan.analysis.structure.nodes[frozen.node_id]
    assert isinstance(info.kind, ModelNode) and info.params is not None
    weights = hashlib.sha256()
    frozen_part = nn.ModuleDict({"adapter": frozen.model.adapter, "features": frozen.model.features})
    for name, tensor in frozen_part.state_dict().items():
        weights.update(name.encode())
        weights.update(_tensor_bytes(tensor))
    backbone = {
        "type": info.node.type,
        "params": info.kind.cache_identity(info.params),
        "adapter": frozen.model.adapter.extra_repr(),
        "weights": weights.hexdigest(),
    }
    parts: dict[str, Any] = {"format": CACHE_FORMAT, "dataset": dataset, "ops": ops, "backbone": backbone}
    if layout != "contiguous":  # summed in another order: features equal only to float rounding
        parts["layout"] = layout
    return _digest(json.dumps(parts, sort_keys=True).encode())[:32]


def _node_identity(plan: Plan, node_id: str) -> dict[str, Any]:
    info = plan.analysis.structure.nodes[node_id]
    params = info.params.model_dump(mode="json") if info.params is not None else {}
    return {"type": info.node.type, "params": params}


def _tensor_bytes(tensor: Tensor) -> bytes:
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    return bytes(flat.view(torch.uint8).numpy().data)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path, count: int, dim: int) -> Tensor | None:
    if not path.is_file():
        return None
    try:
        features = safetensors.torch.load_file(str(path), device="cpu").get("features")
    except (OSError, ValueError, safetensors.SafetensorError) as exc:
        log.warning("feature cache %s is unreadable (%s); computing again", path, exc)
        return None
    if features is None or features.dtype != torch.float32 or tuple(features.shape) != (count, dim):
        log.warning("feature cache %s does not fit this dataset; computing again", path)
        return None
    return features


def _write(path: Path, features: Tensor, key: str, frozen: FrozenBackbone) -> None:
    metadata = {"format": str(CACHE_FORMAT), "key": key, "node": frozen.node_id}

    def write(tmp: Path) -> None:
        safetensors.torch.save_file({"features": features.contiguous()}, str(tmp), metadata=metadata)

    try:
        save_atomic(write, path)
    except OSError as exc:
        # A read-only data dir must not stop training; the next run computes them again.
        log.warning("cannot write the feature cache %s: %s", path, exc)
