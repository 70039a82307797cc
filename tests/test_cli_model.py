"""`dragdl predict` and `dragdl export`: tables, JSON, CSV, folders, and one-line errors."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from typer.testing import CliRunner

from dragdl.cli import app
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.builtin import open_builtin
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

from .graphs import chain

runner = CliRunner()
WIDE = {"COLUMNS": "250"}
CLASSES = [str(d) for d in range(10)]


def digits_graph() -> dict[str, Any]:
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 2, "batch_size": 64, "lr": 0.01, "device": "cpu"}),
    ]
    return chain("Digits", nodes)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-model")
    out = root / "run"
    run_graph(digits_graph(), DataContext(data_dir=root, allow_download=False), out, ListReporter())
    return out


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve digits as PNG files: five at the top, seven in a sub-folder, plus a hidden decoy."""
    root = tmp_path_factory.mktemp("images")
    source = open_builtin("digits")
    (root / "more").mkdir()
    (root / ".hidden").mkdir()
    for i in range(12):
        folder = root if i < 5 else root / "more"
        Image.fromarray(source.image(i)[0].numpy()).save(folder / f"digit{i:02d}_{int(source.labels[i])}.png")
    Image.new("L", (8, 8)).save(root / ".hidden" / "decoy.png")
    (root / "readme.txt").write_text("not an image, and not named like one")
    return root


def invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], env=WIDE)


def assert_one_line_error(result: Any, *needles: str) -> None:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    for needle in needles:
        assert needle in lines[0]


def test_predict_prints_a_table_with_top_k(bundle: Path, images: Path) -> None:
    first, second = sorted(images.glob("*.png"))[:2]
    result = invoke("predict", bundle, first, second, "--top-k", "3")
    assert result.exit_code == 0, result.output
    assert first.name in result.stdout and second.name in result.stdout
    assert "top 3" in result.stdout and "2 prediction(s)" in result.stdout
    assert "%" in result.stdout


def test_predict_json_gives_every_probability(bundle: Path, images: Path) -> None:
    files = sorted(images.glob("*.png"))
    result = invoke("predict", bundle, *files, "--json", "--top-k", "2")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [d["image"] for d in data] == [str(f) for f in files]
    for entry in data:
        assert len(entry["probabilities"]) == 10
        assert abs(sum(entry["probabilities"]) - 1) < 1e-5
        assert entry["class"] == entry["top_k"][0]["class"] and len(entry["top_k"]) == 2
        assert entry["probability"] == max(entry["probabilities"])
    correct = sum(d["class"] == Path(d["image"]).stem.split("_")[1] for d in data)
    assert correct >= 3  # a two-epoch linear model already gets most digits right


def test_predict_json_says_when_an_image_was_inverted(bundle: Path, images: Path, tmp_path: Path) -> None:
    # The digits are light strokes on black; the same digit in dark ink on white is inverted first.
    original = sorted(images.glob("*.png"))[0]
    paper = tmp_path / "ink-on-paper.png"
    Image.eval(Image.open(original), lambda v: 255 - v).save(paper)
    result = invoke("predict", bundle, original, paper, "--json")
    assert result.exit_code == 0, result.output
    as_is, inverted = json.loads(result.stdout)
    assert as_is["inverted"] is False and inverted["inverted"] is True
    assert inverted["probabilities"] == pytest.approx(as_is["probabilities"], abs=1e-6)


def test_predict_a_folder_recursively_into_csv(bundle: Path, images: Path, tmp_path: Path) -> None:
    out = tmp_path / "predictions.csv"
    result = invoke("predict", bundle, images, "--csv", out)
    assert result.exit_code == 0, result.output
    assert "wrote 12 prediction(s)" in result.stdout
    assert out.read_bytes().startswith(b"\xef\xbb\xbf")  # UTF-8 with its mark, for Excel on Windows
    with out.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["path", "predicted", "probability", *CLASSES]
    paths = [Path(r[0]) for r in rows[1:]]
    assert len(paths) == 12 and sum(p.parent.name == "more" for p in paths) == 7
    assert not any("decoy" in str(p) for p in paths)
    for row in rows[1:]:
        probs = [float(v) for v in row[3:]]
        assert abs(sum(probs) - 1) < 1e-4
        assert row[1] == CLASSES[probs.index(max(probs))] and float(row[2]) == max(probs)


def test_a_broken_image_in_a_folder_is_skipped_and_named(bundle: Path, images: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    shutil.copytree(images / "more", folder)
    (folder / "broken.png").write_bytes(b"\x89PNG not really")
    result = invoke("predict", bundle, folder, "--json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "broken.png" in result.stderr and "skipped" in result.stderr
    assert len(json.loads(result.stdout)) == 7


def test_errors_are_one_line_naming_the_file(bundle: Path, images: Path, tmp_path: Path) -> None:
    image = next(images.glob("*.png"))
    assert_one_line_error(invoke("predict", tmp_path / "nowhere", image), str(tmp_path / "nowhere"))
    assert_one_line_error(invoke("predict", bundle, tmp_path / "missing.png"), "missing.png", "no such file")
    assert_one_line_error(
        invoke("predict", bundle, images / "readme.txt"), "readme.txt", "not a readable image"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(invoke("predict", bundle, empty), "no image files")
    damaged = tmp_path / "damaged"
    shutil.copytree(bundle, damaged, ignore=shutil.ignore_patterns("checkpoints"))
    (damaged / "model.json").write_text('{"format": "dragdl.bundle", "format_version": 1,')
    assert_one_line_error(invoke("predict", damaged, image), str(damaged / "model.json"), "not valid JSON")
    assert_one_line_error(invoke("export", damaged, "--format", "onnx"), "model.json")


def test_export_writes_checked_files(bundle: Path, tmp_path: Path) -> None:
    target = tmp_path / "bundle"
    shutil.copytree(bundle, target, ignore=shutil.ignore_patterns("checkpoints"))
    for fmt, name in (("torchscript", "model.torchscript.pt"), ("onnx", "model.onnx")):
        result = invoke("export", target, "--format", fmt)
        assert result.exit_code == 0, result.output
        assert name in result.stdout and "max difference to PyTorch" in result.stdout
        assert (target / name).is_file()
    exports = json.loads((target / "model.json").read_text())["exports"]
    assert set(exports) == {"onnx", "torchscript"}
    assert exports["onnx"]["preprocessing"]["mean"] is not None


def test_a_regression_model_predicts_a_value_per_image(images: Path, tmp_path: Path) -> None:
    # The digits' class names are numbers, so a regressor learns the digit as a value.
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Regressor", {"epochs": 1, "batch_size": 64, "lr": 0.01, "device": "cpu"}),
    ]
    out = tmp_path / "run"
    run_graph(
        chain("Digit value", nodes), DataContext(data_dir=tmp_path, allow_download=False), out, ListReporter()
    )
    first = sorted(images.glob("*.png"))[0]
    result = invoke("predict", out, first, "--json")
    assert result.exit_code == 0, result.output
    (answer,) = json.loads(result.stdout)
    assert answer["image"] == str(first) and isinstance(answer["value"], float) and "label" not in answer
    table = invoke("predict", out, first)
    assert table.exit_code == 0 and "value" in table.stdout and first.name in table.stdout
