"""Sequence bundles: a GRU trained on the built-in waves and one on a .ts set of varying lengths, opened
with load_bundle (Standardize features rebuilt from model.json), predicting .ts, .csv and .npy files
sample by sample as the network does on their batch, hostile files refused naming the file and line,
and an ONNX export with a variable time axis checked against onnxruntime on two lengths."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from tests.engine.data.sequence_samples import series_set, ts_text, write_csv

from dragdl.engine.bundle import load_bundle
from dragdl.engine.data.base import DataContext, DatasetError
from dragdl.engine.data.sequence_builtin import open_sequence_builtin
from dragdl.engine.inputs.base import RequestLimits
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

from ...graphs import chain


def gru_graph(source: dict[str, Any], epochs: int = 2) -> dict[str, Any]:
    return chain(
        "waves GRU",
        [
            ("data", "dataset.sequence", source),
            ("std", "op.StandardizeFeatures", {}),
            ("gru", "layer.GRU", {"hidden_size": 16}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": epochs, "batch_size": 32, "lr": 0.02, "device": "cpu"}),
        ],
    )


def train(root: Path, graph: dict[str, Any]) -> Path:
    out = root / "run"
    result = run_graph(graph, DataContext(data_dir=root, allow_download=False), out, ListReporter())
    assert result.status == "succeeded", result
    return out


@pytest.fixture(scope="module")
def waves_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in waves (1,500 series of 64 steps, 3 classes), a GRU trained for 2 epochs."""
    return train(tmp_path_factory.mktemp("waves"), gru_graph({"name": "waves"}))


def varying_series(count: int, seed: int = 0) -> tuple[list[np.ndarray], list[str]]:
    """Slow and fast waves of 2 features and 6 to 30 steps (two learnable classes)."""
    rng = np.random.default_rng(seed)
    series, labels = [], []
    for i in range(count):
        steps, fast = int(rng.integers(6, 31)), i % 2
        time = np.arange(steps) / 8.0 * (4.0 if fast else 1.0) + rng.uniform(0, 6)
        values = np.stack([np.sin(time), np.cos(time)], axis=1) + rng.normal(0, 0.1, (steps, 2))
        series.append(np.round(values, 4).astype(np.float32))
        labels.append("fast" if fast else "slow")
    return series, labels


@pytest.fixture(scope="module")
def varying_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("varying")
    series, labels = varying_series(64)
    (root / "waves.ts").write_text(ts_text(series, labels, ["fast", "slow"]))
    return train(root, gru_graph({"source": "file", "path": "waves.ts"}, epochs=1))


def waves_ts(count: int, offset: int = 0) -> tuple[str, np.ndarray]:
    """The first `count` built-in waves as a .ts file, and their labels."""
    source = open_sequence_builtin("waves", None)
    series = [source.sequence(i) for i in range(offset, offset + count)]
    assert source.labels is not None
    labels = source.labels[offset : offset + count]
    return ts_text(series, [source.classes[i] for i in labels], list(source.classes)), labels


def test_a_sequence_bundle_loads_with_its_fitted_standardization(waves_bundle: Path) -> None:
    manifest = json.loads((waves_bundle / "model.json").read_text())
    assert manifest["dataset"]["shape"] == [64, 1]
    (std,) = manifest["eval_transforms"]
    bundle = load_bundle(waves_bundle)
    assert bundle.input_type.name == "sequence" and bundle.classes == ["sine", "square", "sawtooth"]
    assert torch.allclose(bundle.stages[0].transform.mean, torch.tensor(std["fitted"]["mean"]))  # type: ignore[attr-defined]


def test_predict_samples_answers_the_kind_and_learned_the_waves(waves_bundle: Path) -> None:
    bundle = load_bundle(waves_bundle)
    text, labels = waves_ts(60)
    samples = bundle.decode_file("waves.ts", text.encode())
    assert [tuple(x.shape) for x in samples] == [(64, 1)] * 60
    answers = bundle.predict_samples(samples, top_k=2)
    assert set(answers[0]) == {"label", "index", "probability", "top_k", "probabilities"}
    assert len(answers[0]["top_k"]) == 2
    accuracy = np.mean([a["index"] == int(y) for a, y in zip(answers, labels, strict=True)])
    assert accuracy >= 0.8, accuracy  # trained, not guessing among 3 classes
    # The bundle's preprocessing is the training's: the network on the standardized batch by hand.
    std = bundle.stages[0].transform
    by_hand = torch.softmax(bundle.model(std(torch.stack(samples))), dim=1)
    got = torch.tensor([a["probabilities"] for a in answers])
    assert torch.allclose(got, by_hand, atol=1e-5)


def test_csv_and_npy_files_give_the_answers_of_the_ts_file(waves_bundle: Path, tmp_path: Path) -> None:
    bundle = load_bundle(waves_bundle)
    text, _ = waves_ts(5)
    samples = bundle.decode_file("five.ts", text.encode())
    expected = bundle.predict_samples(samples)
    csv = write_csv(tmp_path / "one.csv", samples[2].numpy(), header=["x"])
    assert bundle.predict_samples(bundle.decode_file("one.csv", csv.read_bytes())) == [expected[2]]
    array = io.BytesIO()
    np.save(array, torch.stack(samples).numpy())  # (5, 64, 1)
    assert bundle.predict_samples(bundle.decode_file("five.npy", array.getvalue())) == expected
    flat = io.BytesIO()
    np.save(flat, torch.stack(samples)[:, :, 0].numpy().astype(np.float64))  # (N, T): one feature
    assert bundle.predict_samples(bundle.decode_file("five.npy", flat.getvalue())) == expected


def test_a_model_of_one_length_refuses_another_naming_the_sample(waves_bundle: Path) -> None:
    """Trained on 64 steps, the network would still run on 3 (the GRU reads any length) and answer
    with confidence; its ONNX export refuses them. Every path refuses, saying what to do."""
    bundle = load_bundle(waves_bundle)
    text, _ = waves_ts(2)
    samples = bundle.decode_file("two.ts", text.encode())
    with pytest.raises(DatasetError) as caught:
        bundle.predict_samples([samples[0], samples[1][:3]])
    assert caught.value.message.startswith(
        "sample 2: shaped 3x1 after the model's operators, but the model was"
    )
    assert "trained on 64x1" in caught.value.message and "resample it" in caught.value.message


def hostile(name: str, data: bytes, bundle: Path, limits: RequestLimits | None = None) -> str:
    with pytest.raises(DatasetError) as caught:
        load_bundle(bundle).decode_file(name, data, limits)
    return caught.value.message


def test_hostile_files_are_refused_naming_the_file_and_line(waves_bundle: Path) -> None:
    text, _ = waves_ts(3)
    cut = text[: text.rindex(",") - 3]  # the last series stops in the middle of a value list
    assert hostile("cut.ts", cut.encode(), waves_bundle).startswith("cut.ts, line")
    many, _ = waves_ts(30)
    message = hostile("many.ts", many.encode(), waves_bundle, RequestLimits(max_samples=10))
    assert message == "many.ts, line 21: 11 series is over the limit of 10"
    two = ts_text(series_set(2, 2, 64), ["sine", "square"], ["sine", "square", "sawtooth"])
    assert hostile("two.ts", two.encode(), waves_bundle) == (
        "two.ts, line 11: 2 features per step, but the model takes 1"
    )
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    assert "pickled" in hostile("evil.npy", pickled.getvalue(), waves_bundle)
    assert "not a sequence file" in hostile("notes.txt", b"1,2,3", waves_bundle)
    assert "not a number" in hostile("bad.csv", b"1\n2\nthree\n", waves_bundle)
    assert pickle.dumps(0)  # nothing above was unpickled: np.load ran with allow_pickle=False


def test_varying_lengths_are_padded_with_their_lengths(varying_bundle: Path) -> None:
    bundle = load_bundle(varying_bundle)
    series, labels = varying_series(12, seed=5)
    samples = bundle.decode_file("new.ts", ts_text(series, labels, ["fast", "slow"]).encode())
    assert len({len(x) for x in samples}) > 1
    together = bundle.predict_samples(samples)
    alone = [bundle.predict_samples([x])[0] for x in samples]
    for a, b in zip(together, alone, strict=True):
        assert a["label"] == b["label"]
        assert np.allclose(a["probabilities"], b["probabilities"], atol=1e-5)


def test_onnx_export_takes_any_length(varying_bundle: Path) -> None:
    import onnxruntime as ort  # type: ignore[import-untyped]

    from dragdl.engine.bundle import export_bundle, read_manifest

    path = export_bundle(varying_bundle, "onnx")
    info = read_manifest(varying_bundle).exports["onnx"]
    assert info.input_name == "sequence" and info.input_shape == ["batch", "time", 2]
    assert info.max_abs_diff < 1e-4
    bundle = load_bundle(varying_bundle)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for steps in (9, 41):  # neither the traced length (32) nor the compared one (24)
        x = torch.randn(3, steps, 2, generator=torch.Generator().manual_seed(steps))
        (out,) = session.run(["logits"], {"sequence": x.numpy()})
        assert np.allclose(out, bundle.logits(x).numpy(), atol=1e-4)
