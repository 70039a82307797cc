"""`dragdl predict --csv` writes user text (class names, file paths) so that a spreadsheet cannot run
it as a formula, as the web UI's download does (issue 23, finding 14), and with a UTF-8 byte-order
mark so that Excel on Windows opens it as UTF-8."""

from __future__ import annotations

import csv
from pathlib import Path

from dragdl.cli_model import _write_csv, _write_rows_csv
from dragdl.client.models import Prediction
from dragdl.engine.tasks.registry import get_task_kind

EVIL = "=cmd|' /C calc'!A0"


def read(path: Path) -> list[list[str]]:
    # A UTF-8 byte-order mark first: Excel on Windows reads the file as UTF-8 only with one
    # (without it, 'Zürich' or '猫' open as mojibake).
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    with path.open(newline="", encoding="utf-8-sig") as f:
        return list(csv.reader(f))


def test_table_predictions_escape_formula_cells_but_not_numbers(tmp_path: Path) -> None:
    out = tmp_path / "pred.csv"
    answer = {"label": EVIL, "probability": 0.9, "probabilities": [0.9, 0.06, 0.04]}
    classifier, regressor = get_task_kind("classification"), get_task_kind("regression")
    _write_rows_csv(out, [EVIL, "-2", "@home"], [(Path("+rows.csv"), 1, answer)], classifier)
    header, row = read(out)
    assert header == ["file", "row", "predicted", "probability", "'" + EVIL, "-2", "'@home"]
    assert row[:3] == ["'+rows.csv", "1", "'" + EVIL]
    values = tmp_path / "values.csv"
    _write_rows_csv(values, [], [(Path("-x.csv"), 2, {"value": -1.5})], regressor)
    assert read(values)[1] == ["'-x.csv", "2", "-1.5"]


def test_image_predictions_escape_formula_cells(tmp_path: Path) -> None:
    out = tmp_path / "pred.csv"
    prediction = Prediction.model_validate(
        {
            "filename": "=image.png",
            "class": EVIL,
            "index": 0,
            "probability": 0.75,
            "top_k": [],
            "probabilities": [0.75, 0.25],
        }
    )
    _write_csv(out, [EVIL, "\tcat"], [(Path("=image.png"), prediction)])
    header, row = read(out)
    assert header[3:] == ["'" + EVIL, "'\tcat"]
    assert row[:3] == ["'=image.png", "'" + EVIL, "0.750000"]
