"""Rows to predict, from a JSON body or an uploaded CSV/TSV file, checked against a table model.

No torch here: the rows are plain dicts of column name -> value, which the bundle reads against its
training schema (`engine.data.tables.rows_to_table`, whose errors name the row and column). What can
be told from the file alone is told here, naming the file: not text, no header, a column the model
takes that the file lacks, a row with the wrong number of fields, too many rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from dragdl.engine.data.table_text import decimal_point, detect_separator
from dragdl.server.services.prediction import PredictionInputError

MAX_CSV_ROWS = 100_000
"""Rows of one uploaded prediction file."""
MAX_CSV_BYTES = 32 * 1024**2
"""Bytes of one uploaded prediction file (it is held in memory while predicted)."""
MAX_CSV_COLUMNS = 10_000
"""Columns of one prediction file (as for an uploaded table)."""
MAX_CSV_CELLS = 2_000_000
"""Rows x columns of one prediction file, counted from its bytes before it is parsed: each parsed
cell costs a Python string and a dict entry (10^6 columns x 25 rows took 19 s and 970 MB)."""
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def read_csv_rows(data: bytes, filename: str, columns: Sequence[str]) -> list[dict[str, str]]:
    """The data rows of a CSV (its separator detected as training detects it: a comma, ';', a tab or
    '|') as {header name: cell}; PredictionInputError naming the file, and the row (1-based, after
    the header) where there is one.

    `columns` are the columns the model takes: each must be in the header (a cell may be empty,
    which is a missing value); other columns are ignored."""
    suffix = Path(filename).suffix.lower()
    if suffix and suffix not in CSV_SUFFIXES:
        raise PredictionInputError(f"{filename}: send the rows as a .csv or .tsv file")
    if b"\x00" in data[:65536]:
        raise PredictionInputError(f"{filename}: not a text table (it holds binary data)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PredictionInputError(f"{filename}: not UTF-8 text (byte {exc.start + 1})") from None
    separator = detect_separator(data, filename)  # as training reads a table: ',', ';', tab or '|'
    _check_shape(data, separator.encode(), filename)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator)
    try:
        header = next(reader, None)
        if header is None or not any(cell.strip() for cell in header):
            raise PredictionInputError(f"{filename}: no header row naming the columns")
        names = [cell.strip() for cell in header]
        twice = sorted({name for name in columns if names.count(name) > 1})
        if twice:
            raise PredictionInputError(f"{filename}: more than one column is named {twice[0]!r}")
        missing = [name for name in columns if name not in names]
        if missing:
            listed = ", ".join(repr(n) for n in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise PredictionInputError(
                f"{filename}: no column {listed} in the header (the model takes "
                f"{', '.join(repr(c) for c in columns[:20])}{' ...' if len(columns) > 20 else ''})"
            )
        rows: list[dict[str, str]] = []
        for cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue  # blank lines, as pandas skips them when training reads a table
            if len(rows) >= MAX_CSV_ROWS:
                raise PredictionInputError(f"{filename}: more than {MAX_CSV_ROWS} rows; send it in parts")
            if len(cells) != len(names):
                raise PredictionInputError(
                    f"{filename}: row {len(rows) + 1} has {len(cells)} fields, the header {len(names)}"
                )
            if separator == ";":  # the comma is the decimal mark, as training read the table
                cells = [decimal_point(cell) for cell in cells]
            rows.append(dict(zip(names, cells, strict=True)))
    except csv.Error as exc:
        raise PredictionInputError(f"{filename}: not a readable CSV file ({exc})") from None
    if not rows:
        raise PredictionInputError(f"{filename}: no data rows after the header")
    return rows


def _check_shape(data: bytes, separator: bytes, filename: str) -> None:
    """Columns (the header's separators) and rows x columns (the line count), from the bytes: an
    upper bound (a quoted separator counts too), checked before a cell is parsed."""
    end = data.find(b"\n")
    columns = (data if end < 0 else data[:end]).count(separator) + 1
    if columns > MAX_CSV_COLUMNS:
        raise PredictionInputError(
            f"{filename}: {columns} columns is above the limit of {MAX_CSV_COLUMNS} for a prediction file"
        )
    lines = data.count(b"\n") + 1
    if lines * columns > MAX_CSV_CELLS:
        raise PredictionInputError(
            f"{filename}: about {lines} lines of {columns} columns is above the limit of {MAX_CSV_CELLS} "
            "cells for a prediction file; send it in parts"
        )
