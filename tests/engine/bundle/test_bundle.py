"""Bundles: model.json contents, the round trip to predictions, image decoding, no pickles, clear errors."""

from __future__ import annotations

import io
import json
import pickle
import shutil
from pathlib import Path
from typing import Any, NoReturn

import pytest
import safetensors.torch
import torch
from PIL import Image

import dragdl.engine.nodes.models as models_nodes
from dragdl.engine.bundle import BundleError, ImageError, load_bundle, read_manifest, write_bundle
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.batch import INPUT
from dragdl.engine.inputs.image_decode import load_image
from dragdl.engine.run import prepare, run_graph
from dragdl.engine.train.reporter import ListReporter

from .conftest import Trained, context, digits_graph, split_test_indices


def png_bytes(image: torch.Tensor) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image[0].numpy()).save(buffer, format="PNG")
    return buffer.getvalue()


def copy_bundle(trained: Trained, tmp_path: Path) -> Path:
    target = tmp_path / "bundle"
    shutil.copytree(trained.out, target, ignore=shutil.ignore_patterns("checkpoints"))
    return target


def test_manifest_holds_graph_inputs_transforms_metrics_and_versions(trained: Trained) -> None:
    data = json.loads((trained.out / "model.json").read_text())
    report = json.loads((trained.out / "report.json").read_text())
    assert data["format"] == "dragdl.bundle" and data["format_version"] == 1
    train_node = next(n for n in data["graph"]["nodes"] if n["id"] == "train")
    assert train_node["params"]["epochs"] == 1 and train_node["params"]["batch_size"] == 128
    assert data["classes"] == [str(d) for d in range(10)]
    assert data["dataset"] == {
        "node_id": "data",
        "type": "dataset.builtin",
        "classes": data["classes"],
        "count": 5000,
        "channels": 1,
        "size": [28, 28],
        "shape": None,  # only input types whose samples are not images or rows have one
    }
    assert data["input"]["channels"] == 1 and data["input"]["size"] == [28, 28]
    assert data["input"]["network_input"] == [1, 28, 28]
    (norm,) = data["eval_transforms"]
    assert norm["node_id"] == "norm" and norm["type"] == "op.Normalize"
    assert norm["params"]["preset"] == "dataset"
    assert norm["fitted"] == trained.pipeline.fitted["norm"]
    assert 0.05 < norm["fitted"]["mean"][0] < 0.3
    assert data["preprocessing"]["mean"] == norm["fitted"]["mean"]
    assert data["preprocessing"]["std"] == norm["fitted"]["std"]
    assert data["preprocessing"]["portable"] is True
    assert data["metrics"]["test"] == report["test"]
    assert data["metrics"]["test"]["test_accuracy"] > 0.5
    assert data["versions"]["torch"] == torch.__version__
    assert {"dragdl", "torchvision"} <= data["versions"].keys()
    assert data["weights"]["file"] == "model.safetensors"


def test_bundle_contains_no_pickled_files(trained: Trained) -> None:
    files = {p.name for p in trained.out.iterdir() if p.is_file()}
    assert {"model.json", "model.safetensors"} <= files
    assert not [name for name in files if name.endswith((".pt", ".pth", ".pkl", ".pickle", ".bin"))]


def test_predict_equals_the_trained_model_on_the_eval_batch(trained: Trained) -> None:
    images, expected = trained.eval_batch()
    bundle = load_bundle(trained.out)
    assert not bundle.model.training
    predictions = bundle.predict(images, top_k=3)
    got = torch.tensor([p.probabilities for p in predictions])
    assert got.shape == expected.shape == (128, 10)
    assert torch.allclose(got, expected, atol=1e-5, rtol=0)
    assert [p.index for p in predictions] == expected.argmax(dim=1).tolist()
    first = predictions[0]
    assert first.label == bundle.classes[first.index] and first.probability == max(first.probabilities)
    assert len(first.top_k) == 3 and first.top_k[0].label == first.label
    assert [s.probability for s in first.top_k] == sorted((s.probability for s in first.top_k), reverse=True)
    # The same images as PNG files decode to the same pixels, so the same probabilities.
    from_png = bundle.predict([png_bytes(image) for image in images[:8]])
    assert torch.allclose(torch.tensor([p.probabilities for p in from_png]), expected[:8], atol=1e-5, rtol=0)


def test_a_large_colour_photo_is_converted_and_resized_to_the_dataset_form(
    trained: Trained, tmp_path: Path
) -> None:
    images, expected = trained.eval_batch()
    confident = int((expected.max(dim=1).values > 0.95).nonzero()[0])
    digit = images[confident][0].numpy()
    photo = Image.fromarray(digit).resize((200, 200), Image.Resampling.BICUBIC).convert("RGB")
    path = tmp_path / "photo.jpg"
    photo.save(path, quality=95)
    bundle = load_bundle(trained.out)
    assert tuple(bundle.preprocess(path).shape) == (1, 28, 28)
    assert tuple(bundle.load_image(path).shape) == (1, 28, 28)
    (prediction,) = bundle.predict(str(path))
    assert prediction.index == int(expected[confident].argmax())


def test_transparent_pixels_are_composited_on_white() -> None:
    rgba = Image.new("RGBA", (10, 6), (0, 0, 0, 0))
    gray = load_image(rgba, channels=1, size=None)
    assert gray.shape == (1, 6, 10) and bool((gray == 255).all())
    rgb = load_image(torch.zeros(4, 6, 10, dtype=torch.uint8), channels=3, size=(3, 5))
    assert rgb.shape == (3, 3, 5) and bool((rgb == 255).all())


def test_loading_and_predicting_never_unpickles(trained: Trained, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError("a bundle must be loaded without pickle or torch.load")

    class NoUnpickler:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            forbidden()

    monkeypatch.setattr(torch, "load", forbidden)
    monkeypatch.setattr(torch.serialization, "load", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "Unpickler", NoUnpickler)
    images, expected = trained.eval_batch()
    bundle = load_bundle(trained.out)
    got = torch.tensor([p.probabilities for p in bundle.predict(images[:4])])
    assert torch.allclose(got, expected[:4], atol=1e-5, rtol=0)


def test_run_graph_writes_a_bundle_whose_eval_transforms_skip_random_ops(tmp_path: Path) -> None:
    graph = digits_graph()
    out = tmp_path / "run"
    run_graph(graph, context(tmp_path), out, ListReporter(), overrides={"device": "cpu"})
    manifest = read_manifest(out)
    assert [t.node_id for t in manifest.eval_transforms] == ["resize", "norm"]
    assert manifest.input.size == [8, 8] and manifest.input.network_input == [1, 12, 12]
    assert [s.op for s in manifest.preprocessing.steps] == ["resize", "to_float", "normalize"]
    # An independent rebuild of the training pipeline, with the trained weights, is the reference.
    plan = compile_graph(graph, context(tmp_path), overrides={"device": "cpu"})
    plan.model.load_state_dict(safetensors.torch.load_file(str(out / "model.safetensors")))
    plan.model.eval()
    pipeline = prepare(plan)
    try:
        assert pipeline.test is not None
        x = next(iter(pipeline.test.batches(0)))[INPUT]
        with torch.no_grad():
            expected = torch.softmax(plan.model(x), dim=1)
        assert manifest.eval_transforms[1].fitted == pipeline.fitted["norm"]
    finally:
        pipeline.close()
    images = [plan.source.image(int(i)) for i in split_test_indices(plan)[: len(x)]]
    got = torch.tensor([p.probabilities for p in load_bundle(out / "model.json").predict(images)])
    assert torch.allclose(got, expected, atol=1e-5, rtol=0)


def test_a_pretrained_model_node_is_rebuilt_without_its_published_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("model", "model.efficientnet_lite0", {"hidden_units": 16}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu"}),
    ]
    graph = {
        "version": 1,
        "nodes": [{"id": i, "type": t, "params": p} for i, t, p in nodes],
        "edges": [{"source": "data", "target": "model"}, {"source": "model", "target": "train"}],
    }
    plan = compile_graph(graph, context(tmp_path))
    out = tmp_path / "bundle"
    out.mkdir()
    safetensors.torch.save_model(plan.model, str(out / "model.safetensors"))
    write_bundle(out, plan.graph, plan, {}, {})
    # The bundle holds every weight: the ImageNet weights file must not even be looked at.
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    monkeypatch.setattr(models_nodes, "create_features", _refuse_pretrained(models_nodes.create_features))
    bundle = load_bundle(out)
    images = torch.stack([bundle.preprocess(plan.source.image(i)) for i in range(3)])
    plan.model.eval()
    with torch.no_grad():
        expected = plan.model(images)
    # Equal up to rounding: the bundle runs its network channels_last, the plan did not.
    assert torch.allclose(bundle.logits(images), expected, rtol=1e-5, atol=1e-6)


def _refuse_pretrained(create: Any) -> Any:
    def guarded(*args: Any, pretrained: bool, **kwargs: Any) -> Any:
        assert not pretrained, "a bundle must not load published weights"
        return create(*args, pretrained=pretrained, **kwargs)

    return guarded


def test_a_missing_bundle_is_named(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no such bundle") as info:
        load_bundle(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in info.value.message
    with pytest.raises(BundleError, match=r"no model\.json"):
        load_bundle(tmp_path)


def test_a_corrupted_manifest_is_named_with_the_position(trained: Trained, tmp_path: Path) -> None:
    bundle = copy_bundle(trained, tmp_path)
    manifest = bundle / "model.json"
    manifest.write_text(manifest.read_text()[:200])
    with pytest.raises(BundleError, match=r"model\.json: not valid JSON .* line \d+") as info:
        load_bundle(bundle)
    assert str(manifest) in info.value.message


def test_a_manifest_with_a_wrong_field_names_the_field(trained: Trained, tmp_path: Path) -> None:
    bundle = copy_bundle(trained, tmp_path)
    data = json.loads((bundle / "model.json").read_text())
    data["input"]["channels"] = 7
    (bundle / "model.json").write_text(json.dumps(data))
    with pytest.raises(BundleError, match=r"model\.json: input\.channels"):
        load_bundle(bundle)
    data["format_version"] = 99
    (bundle / "model.json").write_text(json.dumps(data))
    with pytest.raises(BundleError, match="format_version 99"):
        load_bundle(bundle)


def test_damaged_or_foreign_weights_are_refused(trained: Trained, tmp_path: Path) -> None:
    bundle = copy_bundle(trained, tmp_path)
    weights = bundle / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(BundleError, match=r"model\.safetensors: does not match the sha256"):
        load_bundle(bundle)
    # Without the recorded hash, the safetensors reader itself refuses the truncated file.
    data = json.loads((bundle / "model.json").read_text())
    del data["weights"]["sha256"]
    (bundle / "model.json").write_text(json.dumps(data))
    with pytest.raises(BundleError, match=r"model\.safetensors: not a readable safetensors file"):
        load_bundle(bundle)
    safetensors.torch.save_file({"layers.conv1.weight": torch.zeros(1)}, str(weights))
    with pytest.raises(BundleError, match=r"does not fit the network"):
        load_bundle(bundle)


def test_fitted_statistics_are_required(trained: Trained, tmp_path: Path) -> None:
    bundle = copy_bundle(trained, tmp_path)
    data = json.loads((bundle / "model.json").read_text())
    data["eval_transforms"][0]["fitted"] = None
    (bundle / "model.json").write_text(json.dumps(data))
    with pytest.raises(BundleError, match=r"eval transform norm .*statistics"):
        load_bundle(bundle)


def test_inputs_that_are_not_images_are_named(trained: Trained, tmp_path: Path) -> None:
    bundle = load_bundle(trained.out)
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    with pytest.raises(ImageError, match=r"notes\.png: not a readable image"):
        bundle.predict(text)
    with pytest.raises(ImageError, match="no such file"):
        bundle.predict(tmp_path / "missing.png")
    with pytest.raises(ImageError, match="must be uint8"):
        bundle.predict(torch.zeros(1, 28, 28))
    big = tmp_path / "big.png"
    Image.new("L", (300, 200)).save(big)
    with pytest.raises(ImageError, match="above the limit"):
        load_image(big, channels=1, size=None, pixel_limit=50_000)
