"""ONNX and TorchScript exports give PyTorch's logits on real images, for any batch size."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from dragdl.engine.bundle import Bundle, ExportError, export_bundle, load_bundle

from .conftest import Trained

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def bundle_dir(trained: Trained, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy: exports write into the bundle folder."""
    target = tmp_path_factory.mktemp("export") / "bundle"
    shutil.copytree(trained.out, target, ignore=shutil.ignore_patterns("checkpoints"))
    return target


def real_batches(trained: Trained, bundle: Bundle) -> list[torch.Tensor]:
    """mnist-5k test images through the bundle's preprocessing, as batches of 1 and 7."""
    images, _ = trained.eval_batch()
    inputs = torch.stack([bundle.preprocess(image) for image in images[:8]])
    return [inputs[:1], inputs[1:8]]


@pytest.mark.parametrize("exporter", ["auto", "legacy"])
def test_onnx_matches_pytorch_with_a_dynamic_batch(trained: Trained, bundle_dir: Path, exporter: str) -> None:
    path = export_bundle(bundle_dir, "onnx", exporter=exporter)  # type: ignore[arg-type]
    assert path == bundle_dir / "model.onnx"
    model = onnx.load(str(path))
    assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) >= 17
    (graph_input,) = model.graph.input
    assert graph_input.name == "images" and [o.name for o in model.graph.output] == ["logits"]
    batch_dim = graph_input.type.tensor_type.shape.dim[0]
    assert batch_dim.dim_param and not batch_dim.dim_value
    bundle = load_bundle(bundle_dir)
    used = bundle.manifest.exports["onnx"].exporter
    assert used == ("torch.onnx (legacy)" if exporter == "legacy" else "torch.onnx (dynamo)")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in real_batches(trained, bundle):
        (logits,) = session.run(["logits"], {"images": batch.numpy()})
        assert logits.shape == (len(batch), 10)
        assert float(np.abs(logits - bundle.logits(batch).numpy()).max()) <= TOLERANCE


def test_onnx_export_is_recorded_with_its_preprocessing(trained: Trained, bundle_dir: Path) -> None:
    export_bundle(bundle_dir, "onnx")
    data = json.loads((bundle_dir / "model.json").read_text())
    entry = data["exports"]["onnx"]
    assert entry["file"] == "model.onnx" and entry["opset"] >= 17
    assert entry["input_name"] == "images" and entry["output_name"] == "logits"
    assert entry["input_shape"] == ["batch", 1, 28, 28]
    assert entry["max_abs_diff"] <= TOLERANCE
    preprocessing = entry["preprocessing"]
    assert preprocessing["channels"] == 1 and preprocessing["size"] == [28, 28]
    assert preprocessing["mean"] == trained.pipeline.fitted["norm"]["mean"]
    assert preprocessing["std"] == trained.pipeline.fitted["norm"]["std"]
    assert [s["op"] for s in preprocessing["steps"]] == ["to_float", "normalize"]
    # The bundle still loads after its manifest was rewritten.
    assert load_bundle(bundle_dir).manifest.exports["onnx"].file == "model.onnx"


def test_torchscript_matches_pytorch_after_reloading(trained: Trained, bundle_dir: Path) -> None:
    path = export_bundle(bundle_dir, "torchscript")
    assert path == bundle_dir / "model.torchscript.pt"
    bundle = load_bundle(bundle_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit is deprecated upstream
        scripted = torch.jit.load(str(path))
    for batch in real_batches(trained, bundle):
        with torch.no_grad():
            diff = (scripted(batch) - bundle.logits(batch)).abs().max()
        assert float(diff) <= TOLERANCE
    assert json.loads((bundle_dir / "model.json").read_text())["exports"]["torchscript"]["file"] == path.name


def test_an_unknown_format_is_refused(bundle_dir: Path) -> None:
    with pytest.raises(ExportError, match="unknown export format 'tflite'"):
        export_bundle(bundle_dir, "tflite")  # type: ignore[arg-type]
