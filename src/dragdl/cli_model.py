"""`dragdl predict` and `dragdl export`: use a trained bundle from the command line.

Every expected failure (a missing bundle, a file that is not an image, a damaged model.json)
ends with one line naming the file and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from dragdl.cli_common import EXIT_FAILED, EXIT_USAGE, console, fail, print_json, skipped

if TYPE_CHECKING:
    from dragdl.client import Prediction as RemotePrediction
    from dragdl.engine.bundle import Bundle, Prediction
    from dragdl.engine.tasks import TaskKind

_BATCH = 64


class ExportChoice(StrEnum):
    onnx = "onnx"
    torchscript = "torchscript"


def register(app: typer.Typer) -> None:
    """Add the model commands to the main `dragdl` app."""
    app.command("predict")(predict)
    app.command("export")(export)


def _open(path: Path, zipped: bool = False) -> Bundle:
    """The bundle of a run folder (or its model.json); with `zipped`, also of a bundle zip."""
    from dragdl.engine.bundle import BundleError, load_bundle

    if zipped:
        from dragdl.cli_bundle_zip import is_bundle_zip, unpacked_bundle

        if is_bundle_zip(path):
            path = unpacked_bundle(path)
    try:
        return load_bundle(path)
    except BundleError as exc:
        fail(exc.message, EXIT_USAGE)


def _image_files(folder: Path) -> list[Path]:
    from dragdl.engine.inputs.image_decode import is_image_file

    # Hidden folders (.git, __MACOSX resource forks) hold files that look like images but are not.
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and is_image_file(p)
        and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def _expand(images: list[Path]) -> list[tuple[Path, bool]]:
    """(file, named explicitly) pairs; folders become every image below them."""
    found: list[tuple[Path, bool]] = []
    for path in images:
        if path.is_dir():
            files = _image_files(path)
            if not files:
                fail(f"{path}: no image files in this folder", EXIT_USAGE)
            found.extend((f, False) for f in files)
        elif path.exists():
            found.append((path, True))
        else:
            fail(f"{path}: no such file", EXIT_USAGE)
    return found


def _predict_all(
    bundle: Bundle, files: list[tuple[Path, bool]], top_k: int
) -> Iterator[tuple[Path, Prediction]]:
    from dragdl.engine.bundle import ImageError

    for start in range(0, len(files), _BATCH):
        paths, inputs, flips = [], [], []
        for path, explicit in files[start : start + _BATCH]:
            try:
                x, inverted = bundle.prepare(path)
            except ImageError as exc:
                if explicit:
                    fail(str(exc))
                # One unreadable file should not stop a folder of thousands; it is named and skipped.
                skipped(str(exc))
                continue
            paths.append(path)
            inputs.append(x)
            flips.append(inverted)
        yield from zip(paths, bundle.predict_preprocessed(inputs, top_k, flips), strict=True)


class _SafeCsv:
    """csv.writer whose text cells a spreadsheet cannot run as formulas: a cell starting with =, +, -,
    @, a tab or CR that is not a number gets a leading apostrophe, as the web UI's download does
    (`csvCell` in frontend/src/features/models/tableForm.ts). Class names and paths are user text."""

    def __init__(self, f: Any) -> None:
        self._writer = csv.writer(f)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([_safe_cell(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def _safe_cell(cell: Any) -> Any:
    if not isinstance(cell, str) or not cell.startswith(("=", "+", "-", "@", "\t", "\r")):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell


def _write_csv(
    out: Path, classes: list[str], rows: list[tuple[Path, Prediction]] | list[tuple[Path, RemotePrediction]]
) -> None:
    try:
        with out.open("w", newline="", encoding="utf-8-sig") as f:
            writer = _SafeCsv(f)
            writer.writerow(["path", "predicted", "probability", *classes])
            for path, p in rows:
                writer.writerow(
                    [str(path), p.label, f"{p.probability:.6f}", *(f"{v:.6f}" for v in p.probabilities)]
                )
    except OSError as exc:
        fail(f"{out}: cannot write the CSV file ({exc.strerror or exc})")


def _table(
    name: str, rows: list[tuple[Path, Prediction]] | list[tuple[Path, RemotePrediction]], top_k: int
) -> Table:
    table = Table(title=f"{escape(name)}: {len(rows)} prediction(s)")
    table.add_column("image", style="cyan", overflow="fold")
    table.add_column("class", style="bold")
    table.add_column("probability", justify="right")
    if top_k > 1:
        table.add_column(f"top {top_k}")
    for path, p in rows:
        cells = [escape(str(path)), escape(p.label), f"{p.probability:.1%}"]
        if top_k > 1:
            cells.append(", ".join(f"{escape(s.label)} {s.probability:.1%}" for s in p.top_k))
        table.add_row(*cells)
    return table


def _answer_cells(kind: TaskKind, answer: dict[str, Any]) -> list[str]:
    """A prediction (TaskKind.answer) as table cells: the class and its probability for a kind that
    ranks classes, else the kind's one-line summary."""
    if kind.ranks_classes:
        return [escape(str(answer["label"])), f"{answer['probability']:.1%}"]
    return [escape(kind.summarize(answer))]


def _answer_columns(kind: TaskKind) -> list[str]:
    return ["class", "probability"] if kind.ranks_classes else [kind.target]


def _predict_rows(bundle: Bundle, files: list[Path], top_k: int) -> list[tuple[Path, int, dict[str, Any]]]:
    """One answer per row of each file; an unreadable file or a bad value ends the command, naming
    the file, row and column."""
    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.data.tables import read_rows

    found: list[tuple[Path, int, dict[str, Any]]] = []
    for path in files:
        if not path.is_file():
            fail(f"{path}: no such file", EXIT_USAGE)
        try:
            answers = bundle.predict_rows(read_rows(path), top_k)
        except DatasetError as exc:
            fail(f"{path}: {exc.message}")
        found.extend((path, i + 1, answer) for i, answer in enumerate(answers))
    return found


def _table_of_rows(name: str, rows: list[tuple[Path, int, dict[str, Any]]], kind: TaskKind) -> Table:
    table = Table(title=f"{escape(name)}: {len(rows)} prediction(s)")
    table.add_column("file", style="cyan", overflow="fold")
    table.add_column("row", justify="right")
    for i, column in enumerate(_answer_columns(kind)):
        table.add_column(column, style="bold" if i == 0 else None, justify="right")
    for path, row, answer in rows:
        table.add_row(escape(path.name), str(row), *_answer_cells(kind, answer))
    return table


def _csv_cell(value: Any) -> Any:
    return f"{value:.9g}" if isinstance(value, float) else value


def _write_rows_csv(
    out: Path,
    classes: list[str],
    rows: list[tuple[Path, int, dict[str, Any]]],
    kind: TaskKind,
    position: str = "row",
) -> None:
    """`position` names the second column: a table file's row, or a sample file's sample."""
    try:
        with out.open("w", newline="", encoding="utf-8-sig") as f:
            writer = _SafeCsv(f)
            if not kind.ranks_classes:  # one column per field of the kind's answer
                fields = list(kind.answer_schema["properties"])
                writer.writerow(["file", position, *fields])
                writer.writerows(
                    [str(path), row, *(_csv_cell(a[k]) for k in fields)] for path, row, a in rows
                )
            else:
                writer.writerow(["file", position, "predicted", "probability", *classes])
                writer.writerows(
                    [str(path), row, a["label"], f"{a['probability']:.6f}"]
                    + [f"{p:.6f}" for p in a["probabilities"]]
                    for path, row, a in rows
                )
    except OSError as exc:
        fail(f"{out}: cannot write the CSV file ({exc.strerror or exc})")


def _predict_table_files(
    bundle: Bundle, files: list[Path], top_k: int, as_json: bool, csv_out: Path | None
) -> None:
    rows = _predict_rows(bundle, files, top_k)
    _show_rows(bundle.manifest.name, bundle.classes, bundle.task, rows, as_json, csv_out)


def _show_rows(
    name: str,
    classes: list[str],
    kind: TaskKind,
    rows: list[tuple[Path, int, dict[str, Any]]],
    as_json: bool,
    csv_out: Path | None,
) -> None:
    """Table predictions, made here or on a server: a CSV file, JSON, or a table."""
    if csv_out is not None:
        _write_rows_csv(csv_out, classes, rows, kind)
    if as_json:
        print_json([{"file": str(path), "row": row, **answer} for path, row, answer in rows])
    elif csv_out is not None:
        console.print(f"wrote {len(rows)} prediction(s) to {escape(str(csv_out))}", highlight=False)
    else:
        console.print(_table_of_rows(name, rows, kind))


LOCAL_SAMPLES = 1_000_000
"""Samples one file may hold for a local prediction (a server takes far fewer per request)."""


def sample_files(paths: list[Path], suffixes: tuple[str, ...]) -> list[Path]:
    """The files named, folders replaced by the files below them with one of `suffixes`."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            files = sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.suffix.lower() in suffixes
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not files:
                fail(f"{path}: no {', '.join(suffixes)} files in this folder", EXIT_USAGE)
            found.extend(files)
        elif path.is_file():
            found.append(path)
        else:
            fail(f"{path}: no such file", EXIT_USAGE)
    return found


def _predict_sample_files(
    bundle: Bundle, paths: list[Path], top_k: int, as_json: bool, csv_out: Path | None
) -> None:
    """A model whose input type reads files of samples (sequences): an answer per sample of each file.
    A file that cannot be used ends the command, naming it and its line."""
    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.data.stages import NonFiniteError
    from dragdl.engine.inputs.base import RequestLimits

    limits = RequestLimits(max_samples=LOCAL_SAMPLES, max_values=50_000_000)
    rows: list[tuple[Path, int, dict[str, Any]]] = []
    for path in sample_files(paths, bundle.input_type.sample_files):
        try:
            data = path.read_bytes()
        except OSError as exc:
            fail(f"{path}: cannot be read ({exc.strerror or exc})")
        try:
            answers = bundle.predict_samples(bundle.decode_file(path.name, data, limits), top_k)
        except (DatasetError, NonFiniteError) as exc:
            fail(exc.message if path.name in exc.message else f"{path}: {exc.message}")
        rows.extend((path, i + 1, answer) for i, answer in enumerate(answers))
    show_samples(bundle.classes, bundle.task, rows, as_json, csv_out)


def show_samples(
    classes: list[str],
    kind: TaskKind,
    rows: list[tuple[Path, int, dict[str, Any]]],
    as_json: bool,
    csv_out: Path | None,
) -> None:
    """Answers per sample, made here or on a server: a CSV file, JSON, or one line per sample with
    the kind's summary."""
    if csv_out is not None:
        _write_rows_csv(csv_out, classes, rows, kind, position="sample")
    if as_json:
        print_json([{"file": str(path), "sample": sample, **answer} for path, sample, answer in rows])
    elif csv_out is not None:
        console.print(f"wrote {len(rows)} prediction(s) to {escape(str(csv_out))}", highlight=False)
    else:
        for path, sample, answer in rows:
            console.print(f"{escape(str(path))}  {sample}  {escape(kind.summarize(answer))}", highlight=False)


def _predict_image_values(
    bundle: Bundle, files: list[tuple[Path, bool]], as_json: bool, csv_out: Path | None
) -> None:
    """A regression model on images: one value per image (TaskKind.answer)."""
    from dragdl.engine.bundle import ImageError

    rows: list[tuple[Path, int, dict[str, Any]]] = []
    for start in range(0, len(files), _BATCH):
        batch = files[start : start + _BATCH]
        try:
            inputs = [bundle.preprocess(path) for path, _ in batch]
        except ImageError as exc:
            fail(str(exc))
        answers = bundle.answer_preprocessed(inputs)
        rows.extend((path, 1, answer) for (path, _), answer in zip(batch, answers, strict=True))
    _show_image_values(bundle.manifest.name, bundle.task, rows, as_json, csv_out)


def _show_image_values(
    name: str,
    kind: TaskKind,
    rows: list[tuple[Path, int, dict[str, Any]]],
    as_json: bool,
    csv_out: Path | None,
) -> None:
    """The answers of a kind that ranks no classes, one per image."""
    if csv_out is not None:
        _write_rows_csv(csv_out, [], rows, kind)
    if as_json:
        print_json([{"image": str(path), **answer} for path, _, answer in rows])
    elif csv_out is None:
        table = Table(title=f"{escape(name)}: {len(rows)} prediction(s)")
        table.add_column("image", style="cyan", overflow="fold")
        for column in _answer_columns(kind):
            table.add_column(column, style="bold", justify="right")
        for path, _, answer in rows:
            table.add_row(escape(str(path)), *_answer_cells(kind, answer))
        console.print(table)


def predict(
    bundle: Annotated[
        str,
        typer.Argument(
            help="A run folder with model.json or the bundle zip downloaded from the web UI; with --server, "
            "a model id on the server."
        ),
    ],
    files: Annotated[
        list[Path],
        typer.Argument(
            help="The files to predict: for an image model, image files or folders (searched "
            "recursively); for a table model, CSV/TSV/Parquet files; for a sequence model, .ts, .csv or "
            ".npy files; for a point cloud model, .npy, .xyz, .pts, .off or .ply files."
        ),
    ],
    top_k: Annotated[
        int,
        typer.Option(
            "--top-k", min=1, help="How many classes to list per prediction (image, row or sequence)."
        ),
    ] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the predictions as JSON.")] = False,
    csv_out: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            "--out",
            help="Write the predictions to this CSV file (path or file,row; the prediction; "
            "one column per class).",
        ),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option("--server", help="Predict on this DragDL server; BUNDLE is then a model id."),
    ] = None,
) -> None:
    """Predict with a trained bundle (the preprocessing of training's evaluation is applied).

    An image model classifies each image (or gives it a value); a table model reads the rows of
    CSV/TSV/Parquet files and gives one prediction per row; a sequence model reads every series of
    .ts files, a CSV of one sequence or .npy arrays and gives one prediction per sequence; a point cloud
    model gives one per cloud. BUNDLE may be the bundle zip downloaded from the web UI. With
    --server URL, BUNDLE is the id of a model on that server, and the files are predicted there.
    """
    rows: list[tuple[Path, Prediction]] | list[tuple[Path, RemotePrediction]]
    if server is None:
        opened = _open(Path(bundle), zipped=True)
        if opened.input_type.predicts_from == "rows":
            _predict_table_files(opened, files, top_k, as_json, csv_out)
            return
        if opened.input_type.sample_files:
            _predict_sample_files(opened, files, top_k, as_json, csv_out)
            return
        if not opened.task.ranks_classes:
            _predict_image_values(opened, _expand(files), as_json, csv_out)
            return
    if server is not None:
        from dragdl.cli_remote import (
            predict_remote,
            predict_rows_remote,
            predict_samples_remote,
            predict_values_remote,
        )

        remote = predict_rows_remote(server, bundle, files, top_k)
        if remote is not None:  # a table model: the rows of the files, predicted on the server
            _show_rows(*remote, as_json, csv_out)
            return
        samples = predict_samples_remote(server, bundle, files, top_k)
        if samples is not None:  # files of samples (sequences): an answer per sample
            show_samples(*samples, as_json, csv_out)
            return
        expanded = _expand(files)
        values = predict_values_remote(server, bundle, expanded)
        if values is not None:  # a regression model of images: a value per image
            _show_image_values(*values, as_json, csv_out)
            return
        name, classes, rows = predict_remote(server, bundle, expanded, top_k)
    else:
        opened = _open(Path(bundle), zipped=True)
        expanded = _expand(files)
        rows = list(_predict_all(opened, expanded, top_k))
        name, classes = opened.manifest.name, opened.classes
    if csv_out is not None:
        _write_csv(csv_out, classes, rows)
    if as_json:
        print_json([{"image": str(path), **p.to_json()} for path, p in rows])
    elif csv_out is not None:
        console.print(f"wrote {len(rows)} prediction(s) to {escape(str(csv_out))}", highlight=False)
    else:
        console.print(_table(name, rows, top_k))
    if len(rows) < len(expanded):
        raise typer.Exit(EXIT_FAILED)


def export(
    bundle: Annotated[Path, typer.Argument(help="A run folder with model.json.")],
    format: Annotated[
        ExportChoice, typer.Option("--format", "-f", help="onnx or torchscript.")
    ] = ExportChoice.onnx,
    opset: Annotated[int, typer.Option(help="ONNX opset (18 or newer).", min=18)] = 18,
) -> None:
    """Export the bundle's network (checked against PyTorch) and record it in model.json."""
    from dragdl.engine.bundle import BundleError, export_bundle, read_manifest

    _open(bundle)  # reports a broken bundle before any export work starts
    try:
        path = export_bundle(bundle, format.value, opset=opset)
        info = read_manifest(bundle).exports[format.value]
    except BundleError as exc:
        fail(exc.message)
    console.print(
        f"wrote {escape(str(path))} (input {info.input_name} {info.input_shape}, output {info.output_name}; "
        f"max difference to PyTorch {info.max_abs_diff:.2g})",
        highlight=False,
    )
