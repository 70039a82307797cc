"""Frozen-feature cache: backbone features computed once, reused until an input changes, and a
run on them that trains, resumes, reports and bundles like the run through the whole network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped]
import pytest
import safetensors.torch
import torch
from torch import nn

import dragdl.engine.nodes.models as model_nodes
from dragdl.engine.bundle import export_bundle, load_bundle, write_bundle
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.models import weights
from dragdl.engine.run import read_report, run_graph, split
from dragdl.engine.run.feature_cache import FeatureHead, feature_pipeline, frozen_backbone
from dragdl.engine.train import fastpath
from dragdl.engine.train.events import LogEvent, StartEvent
from dragdl.engine.train.reporter import ListReporter
from dragdl.engine.train.trainer import train

from ...graphs import chain
from ..train.conftest import StopAt

DIGITS = 1797


@pytest.fixture(scope="module")
def weights_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Lite0's converted ImageNet weights, shared by the module's tests.
    return tmp_path_factory.mktemp("dragdl-weights")


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, weights_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The tests' data dir is tmp_path; the engine caches Lite0's weights in its cache/weights.
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "weights").symlink_to(weights_dir, target_is_directory=True)
    monkeypatch.setenv("DRAGDL_OFFLINE", "1")
    weights._probe_results.clear()
    yield


class Counter:
    """Images that went through a backbone, counted by a forward hook on every backbone built."""

    def __init__(self) -> None:
        self.images = 0

    def hook(self, module: nn.Module, inputs: tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        self.images += len(inputs[0])


@pytest.fixture
def backbone_images(monkeypatch: pytest.MonkeyPatch) -> Counter:
    counter = Counter()
    create = model_nodes.create_features  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> nn.Module:
        features = create(*args, **kwargs)
        features.register_forward_hook(counter.hook)
        return features

    monkeypatch.setattr(model_nodes, "create_features", counted)
    return counter


def graph(size: int = 8, model: dict[str, Any] | None = None, **train: Any) -> dict[str, Any]:
    """digits -> Resize -> Lite0 (frozen, at the resized size: 8x8 keeps the backbone fast) -> train."""
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("resize", "op.Resize", {"height": size}),
        ("lite", "model.efficientnet_lite0", {"resize_input": False, **(model or {})}),
        ("train", "train.Classifier", {"epochs": 2, "batch_size": 64, "lr": 0.01, "device": "cpu", **train}),
    ]
    return chain("Digits transfer", nodes)


def ctx(path: Path) -> DataContext:
    return DataContext(data_dir=path, allow_download=False)


def logs(reporter: ListReporter) -> str:
    return "\n".join(e.message for e in reporter.events if isinstance(e, LogEvent))


def cache_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "cache" / "features").glob("*.safetensors"))


def test_features_are_computed_once_and_reused_until_an_input_changes(
    tmp_path: Path, backbone_images: Counter
) -> None:
    first = ListReporter()
    result = run_graph(graph(), ctx(tmp_path), tmp_path / "a", first)
    # Every image went through the backbone exactly once, training and evaluation none.
    assert backbone_images.images == DIGITS
    assert "feature cache: computing" in logs(first) and "feature cache: built" in logs(first)
    [cached] = cache_files(tmp_path)
    start = next(e for e in first.events if isinstance(e, StartEvent))
    assert start.trainable_parameters < start.total_parameters  # the counts describe the full network

    backbone_images.images = 0
    again = ListReporter()
    same = run_graph(graph(), ctx(tmp_path), tmp_path / "b", again)
    assert backbone_images.images == 0
    assert "feature cache: reused the backbone features of 1797 images" in logs(again)
    assert same.test == result.test
    assert cache_files(tmp_path) == [cached]

    # The head, the train params and the split do not change the features.
    other_head = graph(model={"dropout": 0.5, "hidden_units": 32}, epochs=1, seed=3, val_split=0.2)
    run_graph(other_head, ctx(tmp_path), tmp_path / "c", ListReporter())
    assert backbone_images.images == 0

    # An operator's param does: recomputed under a new key.
    run_graph(graph(size=10), ctx(tmp_path), tmp_path / "d", ListReporter())
    assert backbone_images.images == DIGITS
    assert len(cache_files(tmp_path)) == 2
    # And so do the backbone's weights.
    backbone_images.images = 0
    run_graph(graph(model={"pretrained": False}), ctx(tmp_path), tmp_path / "e", ListReporter())
    assert backbone_images.images == DIGITS
    assert len(cache_files(tmp_path)) == 3


def test_a_damaged_cache_file_is_computed_again(tmp_path: Path, backbone_images: Counter) -> None:
    run_graph(graph(epochs=1), ctx(tmp_path), tmp_path / "a", ListReporter())
    [cached] = cache_files(tmp_path)
    cached.write_bytes(b"not safetensors")
    backbone_images.images = 0
    run_graph(graph(epochs=1), ctx(tmp_path), tmp_path / "b", ListReporter())
    assert backbone_images.images == DIGITS
    assert safetensors.torch.load_file(str(cached))["features"].shape == (DIGITS, 1280)


def test_only_a_frozen_backbone_after_deterministic_operators_is_cached(tmp_path: Path) -> None:
    plan = compile_graph(graph(model={"pretrained": False}), ctx(tmp_path))
    frozen = frozen_backbone(plan)
    assert frozen is not None and frozen.node_id == "lite" and frozen.feature_dim == 1280
    fine_tuned = graph(model={"pretrained": False, "freeze_features": False})
    assert frozen_backbone(compile_graph(fine_tuned, ctx(tmp_path))) is None
    augmented = graph(model={"pretrained": False})
    augmented["nodes"].insert(2, {"id": "flip", "type": "op.RandomHorizontalFlip", "params": {}})
    augmented["edges"][1:2] = [{"source": "resize", "target": "flip"}, {"source": "flip", "target": "lite"}]
    assert frozen_backbone(compile_graph(augmented, ctx(tmp_path))) is None
    assert frozen_backbone(plan, memory_budget=DIGITS * 1280 * 4 - 1) is None


@pytest.mark.slow
def test_cached_and_uncached_runs_reach_the_same_test_accuracy(
    tmp_path: Path, backbone_images: Counter
) -> None:
    settings = graph(size=32)
    cached = run_graph(settings, ctx(tmp_path), tmp_path / "cached", ListReporter())
    assert backbone_images.images == DIGITS
    backbone_images.images = 0
    full = run_graph(settings, ctx(tmp_path), tmp_path / "full", ListReporter(), feature_cache=False)
    assert backbone_images.images > 2 * DIGITS * 0.7  # two epochs through the backbone, and evaluation
    assert cached.test is not None and full.test is not None
    assert abs(cached.test["test_accuracy"] - full.test["test_accuracy"]) <= 0.01
    assert cached.test["test_accuracy"] > 0.6


def test_a_stopped_cached_run_resumes_exactly(tmp_path: Path) -> None:
    settings = graph(epochs=3, schedule="cosine")
    run_graph(settings, ctx(tmp_path), tmp_path / "full", ListReporter())
    stopper = StopAt(epoch=2, step=5)
    stopped = run_graph(settings, ctx(tmp_path), tmp_path / "split", stopper, stop=stopper.stop)
    assert stopped.status == "stopped"
    resumed = run_graph(settings, ctx(tmp_path), tmp_path / "split", ListReporter(), resume=True)
    assert resumed.status == "succeeded"
    full = safetensors.torch.load_file(str(tmp_path / "full" / "model.safetensors"))
    again = safetensors.torch.load_file(str(tmp_path / "split" / "model.safetensors"))
    assert full.keys() == again.keys() and any(k.startswith("layers.lite.features.") for k in full)
    for key, value in full.items():
        assert torch.equal(value, again[key]), key


@pytest.mark.slow
def test_bundle_of_a_cached_run_predicts_like_the_trained_model_and_exports_to_onnx(tmp_path: Path) -> None:
    plan = compile_graph(graph(size=32), ctx(tmp_path))
    frozen = frozen_backbone(plan)
    assert frozen is not None
    reporter = ListReporter()
    pipeline = feature_pipeline(plan, frozen, split(plan), ctx(tmp_path), reporter)
    out = tmp_path / "run"
    result = train(
        FeatureHead(frozen.node_id, frozen.model.head),
        pipeline,
        plan.config,
        plan.classes,
        out,
        reporter,
        task=plan.task,
        network=plan.model,
    )
    graph_as_trained = plan.graph.model_copy(deep=True)
    graph_as_trained.node("train").params = plan.config.model_dump()
    write_bundle(out, graph_as_trained, plan, pipeline.fitted, read_report(result))

    bundle = load_bundle(out)
    test_images = [plan.source.image(int(i)) for i in split(plan).test[:16]]
    batch = torch.stack([bundle.preprocess(image) for image in test_images])
    plan.model.eval()
    with torch.no_grad():
        expected = plan.model(batch)
    logits = bundle.logits(batch)
    # Equal up to rounding (the bundle runs channels_last): the tolerance the ONNX export is held to.
    assert torch.allclose(logits, expected, atol=1e-4)
    assert torch.equal(logits.argmax(1), expected.argmax(1))

    path = export_bundle(out, "onnx")
    assert load_bundle(out).manifest.exports["onnx"].max_abs_diff <= 1e-4
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (onnx_logits,) = session.run(["logits"], {"images": batch.numpy()})
    assert float(np.abs(onnx_logits - logits.numpy()).max()) <= 1e-4


def test_the_probe_of_a_cached_run_measures_the_head_on_features(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With native bf16 the head (no convolutions) is probed for bf16: its FLOPs and steps are on
    # the features the batches hold, not on the images the full network takes.
    monkeypatch.setattr(fastpath, "native_bf16", lambda device: True)
    monkeypatch.setattr(fastpath, "MIN_RUN_FLOPS", 0.0)
    reporter = ListReporter()
    result = run_graph(graph(), ctx(tmp_path), tmp_path / "run", reporter)
    assert result.status == "succeeded"
    chosen = read_report(result)["fast_path"]
    assert chosen["memory_format"] == "contiguous" and chosen["precision"] in ("fp32", "bf16")
    assert chosen["measurements"], chosen["reason"]  # measured, on features: no shape error
    assert chosen["measurements"][0]["precision"] == "fp32"
