"""An uploaded Excel workbook (.xlsx): its first sheet, bounded, written out as the stored CSV.

An .xlsx is a zip of XML parts. What it would cost is checked before a cell is read: the parts'
declared sizes once decompressed (a zip bomb declares them; Python's zip reader stops at the
declared size), then, while the sheet is streamed row by row (openpyxl's read-only mode, never the
whole sheet in memory), its columns, rows x columns and each cell's length. The sheet becomes
`table.csv` (commas, UTF-8), so training, prediction and the exported script read it as any table,
and the CSV path's own checks run on it after. Formulas give the value Excel saved with them.
"""

from __future__ import annotations

import csv
import datetime
import zipfile
from pathlib import Path
from typing import Any

from dragdl.engine.data.base import DatasetError

WORKBOOK_SUFFIX = ".xlsx"
MAX_WORKBOOK_XML_BYTES = 256 * 1024**2
"""The workbook's parts once decompressed (their declared sizes), checked before any is parsed."""


def workbook_to_csv(path: Path, target: Path, filename: str) -> None:
    """Write the first sheet of the workbook at `path` to `target` as CSV; DatasetError naming
    `filename`: `file_type` (415) for what is not a workbook, `too_large` (413) above a limit."""
    from dragdl.engine.inputs.table_upload import MAX_CELL_CHARS, MAX_TABLE_CELLS, MAX_TABLE_COLUMNS

    _check_parts(path, filename)
    import openpyxl

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise DatasetError(f"{filename}: not a readable Excel workbook ({exc})", code="file_type") from None
    try:
        if not book.worksheets:
            raise DatasetError(f"{filename}: the workbook has no sheet")
        sheet = book.worksheets[0]
        width = 0
        rows = 0
        with target.open("w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
                cells = [_text(value) for value in values]
                while cells and cells[-1] == "":
                    cells.pop()
                if not cells:
                    continue  # a blank row, as the CSV reader skips them
                if width == 0:
                    width = len(cells)  # the header row names the columns
                    if width > MAX_TABLE_COLUMNS:
                        raise DatasetError(
                            f"{filename}: {width} columns is above the limit of {MAX_TABLE_COLUMNS}"
                        )
                elif len(cells) > width:
                    raise DatasetError(
                        f"{filename}: row {number} of the sheet {sheet.title!r} has a value in column "
                        f"{len(cells)}, right of the header's {width} columns; give each column a name"
                    )
                rows += 1
                if rows * width > MAX_TABLE_CELLS:
                    raise DatasetError(
                        f"{filename}: over {rows - 1} rows of {width} columns is above the limit of "
                        f"{MAX_TABLE_CELLS} cells",
                        code="too_large",
                    )
                longest = max(cells, key=len)
                if len(longest) > MAX_CELL_CHARS:
                    raise DatasetError(
                        f"{filename}: row {number} of the sheet {sheet.title!r}: a cell of {len(longest)} "
                        f"characters is above the limit of {MAX_CELL_CHARS}"
                    )
                writer.writerow(cells + [""] * (width - len(cells)))
        if rows == 0:
            raise DatasetError(f"{filename}: the first sheet ({sheet.title!r}) is empty", code="table_empty")
    finally:
        book.close()


def _check_parts(path: Path, filename: str) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        raise DatasetError(
            f"{filename}: not an Excel workbook (.xlsx is a zip archive)", code="file_type"
        ) from None
    if not any(part.filename == "[Content_Types].xml" for part in parts):
        raise DatasetError(f"{filename}: not an Excel workbook (no [Content_Types].xml)", code="file_type")
    declared = sum(part.file_size for part in parts)
    if declared > MAX_WORKBOOK_XML_BYTES:
        raise DatasetError(
            f"{filename}: {declared} bytes once decompressed is above the limit of {MAX_WORKBOOK_XML_BYTES} "
            "for a workbook",
            code="too_large",
        )


def _text(value: Any) -> str:
    """A cell as the CSV writes it: numbers as Python writes them (5.1, not 5.0999...), truth values
    as TRUE/FALSE, dates in ISO form, an empty cell as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    return str(value)
