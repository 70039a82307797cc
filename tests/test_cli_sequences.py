"""`dragdl predict` with a sequence model: a .ts file's every series, a CSV of one sequence and an .npy
array, one line per sample with the kind's summary, the JSON and a CSV whose class names cannot run as
spreadsheet formulas; a file it cannot use ends the command in one line naming the file and line."""

from __future__ import annotations

import csv
import io
import json
import stat
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from dragdl.cli import app
from dragdl.engine.bundle import load_bundle
from dragdl.engine.data.base import DataContext
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

from .engine.data.sequence_samples import ts_text, write_csv
from .graphs import chain

runner = CliRunner()
WIDE = {"COLUMNS": "250"}
CLASSES = ["=fast()", "slow"]
"""A class name a spreadsheet would run as a formula: the CSV must escape it."""


def waves(count: int, seed: int) -> tuple[list[np.ndarray], list[str]]:
    """Slow and fast waves of one feature and 8 to 40 steps."""
    rng = np.random.default_rng(seed)
    series, labels = [], []
    for i in range(count):
        steps, fast = int(rng.integers(8, 41)), i % 2
        time = np.arange(steps) / 6.0 * (4.0 if fast else 1.0) + rng.uniform(0, 6)
        series.append(np.round(np.sin(time)[:, None] + rng.normal(0, 0.1, (steps, 1)), 4).astype(np.float32))
        labels.append(CLASSES[0] if fast else CLASSES[1])
    return series, labels


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A GRU trained for one epoch on 64 waves of varying length from a .ts file."""
    root = tmp_path_factory.mktemp("cli-seq")
    series, labels = waves(64, seed=0)
    (root / "train.ts").write_text(ts_text(series, labels, CLASSES))
    graph = chain(
        "waves",
        [
            ("data", "dataset.sequence", {"source": "file", "path": "train.ts"}),
            ("std", "op.StandardizeFeatures", {}),
            ("gru", "layer.GRU", {"hidden_size": 8}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1, "batch_size": 16, "lr": 0.02, "device": "cpu"}),
        ],
    )
    result = run_graph(graph, DataContext(data_dir=root, allow_download=False), root / "run", ListReporter())
    assert result.status == "succeeded", result
    return root / "run"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """Four waves in a .ts file, one in a CSV, two cut to 8 steps in an (N, T, F) .npy array."""
    series, labels = waves(4, seed=9)
    ts = tmp_path / "four.ts"
    ts.write_text(ts_text(series, labels, CLASSES))
    npy = tmp_path / "two.npy"
    np.save(npy, np.stack([series[0][:8], series[1][:8]]))
    return {"ts": ts, "csv": write_csv(tmp_path / "one.csv", series[2], header=["x"]), "npy": npy}


def invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], env=WIDE)


def expected(bundle: Path, files: dict[str, Path]) -> list[dict[str, Any]]:
    opened = load_bundle(bundle)
    samples = [
        x
        for key in ("ts", "csv", "npy")
        for x in opened.decode_file(files[key].name, files[key].read_bytes())
    ]
    return opened.predict_samples(samples, top_k=2)


def test_predict_prints_one_line_per_sample_with_the_kinds_summary(
    bundle: Path, files: dict[str, Path]
) -> None:
    result = invoke("predict", bundle, files["ts"], files["csv"], files["npy"], "--top-k", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    answers = expected(bundle, files)
    kind = load_bundle(bundle).task
    places = [(files["ts"], i) for i in range(1, 5)] + [
        (files["csv"], 1),
        (files["npy"], 1),
        (files["npy"], 2),
    ]
    assert lines == [
        f"{path}  {i}  {kind.summarize(a)}" for (path, i), a in zip(places, answers, strict=True)
    ]


def test_predict_json_and_an_escaped_csv(bundle: Path, files: dict[str, Path], tmp_path: Path) -> None:
    result = invoke("predict", bundle, files["ts"], "--json", "--top-k", "2")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert [(b["file"], b["sample"]) for b in body] == [(str(files["ts"]), i) for i in range(1, 5)]
    assert [b["label"] for b in body] == [a["label"] for a in expected(bundle, files)[:4]]
    out = tmp_path / "pred.csv"
    assert invoke("predict", bundle, files["ts"], "--csv", out).exit_code == 0
    with out.open(newline="", encoding="utf-8-sig") as f:  # written with a BOM, for Excel
        rows = list(csv.reader(f))
    assert rows[0] == ["file", "sample", "predicted", "probability", "'=fast()", "slow"]
    assert [row[1] for row in rows[1:]] == ["1", "2", "3", "4"]
    assert all(row[2] in ("'=fast()", "slow") for row in rows[1:])


def test_a_file_it_cannot_use_is_one_line_naming_the_file_and_line(bundle: Path, tmp_path: Path) -> None:
    series, labels = waves(3, seed=1)
    text = ts_text(series, labels, CLASSES)
    cut = tmp_path / "cut.ts"
    cut.write_text(text[: text.rindex(",") - 3])
    result = invoke("predict", bundle, cut)
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: cut.ts, line 12"), result.output
    pickled = tmp_path / "evil.npy"
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    pickled.write_bytes(buffer.getvalue())
    result = invoke("predict", bundle, pickled)
    assert result.exit_code != 0 and "evil.npy: holds Python objects" in result.stderr


def test_validate_words_a_sequence_set_by_its_steps_and_features(tmp_path: Path) -> None:
    """The dataset line comes from the input type: sequences counted as such, and one sample as its
    steps and features ('?' steps when the lengths vary), not as images of some channels and size."""
    rng = np.random.default_rng(3)
    series = [rng.normal(size=(int(rng.integers(5, 12)), 3)).round(3).astype(np.float32) for _ in range(6)]
    (tmp_path / "three.ts").write_text(ts_text(series, ["a", "b"] * 3, ["a", "b"]))
    graph = chain(
        "sensors",
        [
            ("data", "dataset.sequence", {"source": "file", "path": "three.ts"}),
            ("gru", "layer.GRU", {"hidden_size": 4}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1, "device": "cpu"}),
        ],
    )
    (tmp_path / "graph.json").write_text(json.dumps(graph))
    result = invoke("validate", tmp_path / "graph.json", "--data-dir", tmp_path)
    assert result.exit_code == 0, result.output
    assert "dataset: 6 sequences, 2 classes, ? steps x 3 features" in result.stdout, result.stdout
    assert "images" not in result.stdout and "channel" not in result.stdout
    summary = json.loads(invoke("validate", tmp_path / "graph.json", "--json", "--data-dir", tmp_path).stdout)
    assert summary["dataset"]["shape"] == [None, 3]
    assert summary["dataset"]["samples_name"] == "sequences"


def unlabeled_ts(series: list[np.ndarray], header: str) -> str:
    """A .ts file whose series carry no label: `header` is `@classLabel false` or nothing."""
    lines = ["@problemName Unlabeled", "@univariate true", "@equalLength false"]
    lines += [header] if header else []
    lines.append("@data")
    lines += [",".join(repr(float(v)) for v in s[:, 0]) for s in series]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("header", ["@classLabel false", ""])
def test_predict_reads_a_ts_file_without_labels(bundle: Path, tmp_path: Path, header: str) -> None:
    """A file of series to predict need not say their classes: one line per series, as for the same
    series in a labelled file."""
    series, labels = waves(3, seed=5)
    bare = tmp_path / "bare.ts"
    bare.write_text(unlabeled_ts(series, header))
    labelled = tmp_path / "labelled.ts"
    labelled.write_text(ts_text(series, labels, CLASSES))
    result = invoke("predict", bundle, bare, "--json")
    assert result.exit_code == 0, result.output
    answers = json.loads(result.stdout)
    assert [(a["file"], a["sample"]) for a in answers] == [(str(bare), i) for i in range(1, 4)]
    same = json.loads(invoke("predict", bundle, labelled, "--json").stdout)
    assert [a["label"] for a in answers] == [a["label"] for a in same]
    assert [a["probabilities"] for a in answers] == [a["probabilities"] for a in same]


def test_predict_takes_the_bundle_zip_the_web_ui_downloads(
    bundle: Path, files: dict[str, Path], tmp_path: Path
) -> None:
    zipped = tmp_path / "model.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("model.json", "model.safetensors"):
            archive.write(bundle / name, arcname=name)
    from_zip = invoke("predict", zipped, files["ts"], "--json", "--top-k", "2")
    from_folder = invoke("predict", bundle, files["ts"], "--json", "--top-k", "2")
    assert from_zip.exit_code == 0, from_zip.output
    assert json.loads(from_zip.stdout) == json.loads(from_folder.stdout)


def test_an_unsafe_or_empty_zip_is_refused_in_one_line(
    bundle: Path, files: dict[str, Path], tmp_path: Path
) -> None:
    slip = tmp_path / "slip.zip"
    with zipfile.ZipFile(slip, "w") as archive:
        archive.write(bundle / "model.json", arcname="../model.json")
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as archive:
        info = zipfile.ZipInfo("model.json")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("notes.txt", "no bundle here")
    for path, reason in ((slip, ".."), (link, "link"), (empty, "no model.json")):
        result = invoke("predict", path, files["ts"])
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.exit_code != 0 and len(lines) == 1, result.output
        assert lines[0].startswith(f"error: {path}") and reason in lines[0], lines
    assert not (tmp_path.parent / "model.json").exists()


def test_the_help_words_samples_by_every_input_type() -> None:
    assert "image models" not in invoke("--help").stdout
    text = invoke("predict", "--help").stdout
    assert "{files}" in text and "{images}" not in text and "per image" not in text
