"""An uploaded table (one .csv, .tsv, .parquet or .xlsx file sent on its own): bounded before it is
read, then described. A workbook's first sheet is stored as CSV (`table_workbook`).

Every bound is checked before the work it bounds:

- the file's bytes; a text table's columns (its header) and rows x columns (its line count);
- a Parquet file's footer: columns, rows x columns, bytes once decompressed, and its schema (a list,
  map, struct or bytes column is refused before a value is decoded: one cell can hold 5 x 10^8
  values in 900 bytes);
- a Parquet file's decoded text, measured on Arrow's dictionary-encoded read (a 221 KB file of
  repeated long strings decodes to gigabytes as Python strings) before pandas converts it;
- each cell's length, each column name's length and each category column's distinct values, once
  read, naming the column and row;
- and what is stored to describe it (`info`, returned by every dataset list): a few categories per
  column, cut short, so the list stays small whatever the table holds.

Errors are DatasetErrors naming the uploader's file: code `too_large` for what is above a size limit
(the server answers 413), `file_type` for what is not a table's text (415). The server runs
`describe_table_upload` in its CPU pool, not in its process: parsing 10^6 rows holds the GIL for
over a second.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.table_text import file_separator
from dragdl.engine.inputs.table_workbook import WORKBOOK_SUFFIX, workbook_to_csv

if TYPE_CHECKING:
    from dragdl.engine.data.tables import Table

TABLE_KIND = "table"
"""The stored kind of an uploaded table (read by `dataset.table`, source 'uploaded')."""

TABLE_NAME = "table"
"""An uploaded table is stored as `data/table.<suffix>`, whatever the uploader called it."""
MAX_TABLE_BYTES = 256 * 1024**2
"""A table is read into memory whole (training reads it again): larger ones are refused."""
MAX_TABLE_CELLS = 20_000_000
"""Rows x columns of one table, checked before it is parsed (a Parquet file may be compressed far)."""
MAX_TABLE_COLUMNS = 10_000
MAX_HEADER_BYTES = 4 << 20
"""The header row of a text table is read whole up to this size to count its columns."""
MAX_DECODED_BYTES = 256 * 1024**2
"""Text of a Parquet table once decoded (dictionary-encoded columns counted per row)."""
MAX_CELL_CHARS = 4096
"""Characters of one cell: a table cell is a number or a category, not a document."""
MAX_NAME_CHARS = 256
"""Characters of a column name."""
MAX_CATEGORIES = 10_000
"""Distinct values of one category column (each becomes an input of a one-hot encoding)."""
INFO_CATEGORIES = 20
"""Categories per column kept in the stored description (`category_count` has them all)."""
INFO_CATEGORY_CHARS = 100
"""A stored category is cut to this many characters."""
PREFIX_CHARS = 40
"""A cell quoted in an error message: its first characters only."""


def quote(value: object, limit: int = PREFIX_CHARS) -> str:
    """A value for an error message: repr of a bounded prefix (a 30 MB cell is not repeated)."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def detect_table_upload(root: Path, options: Mapping[str, str] | None = None) -> str | None:
    """TABLE_KIND when `root` holds one table file and nothing else, sent without options (a table
    takes none: a CSV sent with a label column and window is a recording)."""
    from dragdl.engine.data.tables import TABLE_SUFFIXES

    if options:
        return None
    entries = [entry for entry in root.iterdir() if not entry.name.startswith(".")]
    suffixes = TABLE_SUFFIXES | {WORKBOOK_SUFFIX}
    if len(entries) == 1 and entries[0].is_file() and entries[0].suffix.lower() in suffixes:
        return TABLE_KIND
    return None


def describe_table_upload(root: Path) -> dict[str, Any]:
    """The table's size and shape checked before it is parsed, then stored as `table.<suffix>`, read
    as training will read it, bounded, and described by its columns; errors name the uploader's file."""
    from dragdl.engine.data.tables import read_table

    (received,) = [entry for entry in root.iterdir() if not entry.name.startswith(".")]
    filename = received.name
    size = received.stat().st_size
    if size > MAX_TABLE_BYTES:
        raise DatasetError(
            f"{filename}: {size} bytes is above the limit of {MAX_TABLE_BYTES} for a table", code="too_large"
        )
    if received.suffix.lower() == WORKBOOK_SUFFIX:  # stored as the CSV of its first sheet
        target = root / f"{TABLE_NAME}.csv"
        workbook_to_csv(received, target, filename)
        received.unlink()
        check_table_shape(target, target.suffix, filename)
    else:
        target = root / f"{TABLE_NAME}{received.suffix.lower()}"
        check_table_shape(received, target.suffix, filename)
        os.replace(received, target)
    try:
        # Categories counted per column, vectorised, before the cells are converted one by one.
        table = read_table(target, max_categories=MAX_CATEGORIES)
    except DatasetError as exc:
        message = exc.message.replace(str(target), filename).replace(target.name, filename)
        raise DatasetError(message, field=exc.field, code=exc.code) from None
    if len(table.names) > MAX_TABLE_COLUMNS:
        raise DatasetError(
            f"{filename}: {len(table.names)} columns is above the limit of {MAX_TABLE_COLUMNS}"
        )
    check_cells(table, filename)
    return {
        "format": "table",
        "file": filename,
        "columns": described_columns(table),
        "count": table.num_rows,
        "classes": [],
        "counts": [],
        "channels": 0,
        "size": None,
        "samples": [],
        "reader_file": target.name,
    }


def check_cells(table: Table, filename: str) -> None:
    """Column names, cells and categories within their limits; DatasetError naming column and row."""
    for name in table.names:
        if len(name) > MAX_NAME_CHARS:
            raise DatasetError(
                f"{filename}: the column name {quote(name)} is longer than {MAX_NAME_CHARS} characters"
            )
        if table.kind(name) == "number":
            continue
        values = table.columns[name]
        # Each distinct value once (read_table bounded their number), not a Python loop per cell.
        distinct = set(values.tolist())
        distinct.discard(None)
        if len(distinct) > MAX_CATEGORIES:
            raise DatasetError(
                f"{filename}: column {quote(name)} has more than {MAX_CATEGORIES} distinct values; a "
                f"category column takes at most {MAX_CATEGORIES}: leave out an identifier or free-text column"
            )
        longest = max(distinct, key=len, default="")
        if len(longest) > MAX_CELL_CHARS:
            row = values.tolist().index(longest) + 1
            raise DatasetError(
                f"{filename}: row {row}, column {quote(name)}: a cell of {len(longest)} characters is "
                f"above the limit of {MAX_CELL_CHARS} ({quote(longest)})"
            )


def described_columns(table: Table) -> list[dict[str, Any]]:
    """Each column as stored in the dataset's info: a few of its categories, cut short, and how many
    there are, so the description stays small whatever the table holds."""
    described = []
    for column in table.schema():
        entry = column.to_json()
        categories = entry.get("categories") or []
        entry["category_count"] = len(categories)
        entry["categories"] = [value[:INFO_CATEGORY_CHARS] for value in categories[:INFO_CATEGORIES]]
        described.append(entry)
    return described


def check_table_shape(path: Path, suffix: str, filename: str) -> None:
    """Refuse what is not a table, or would be too large once read, from its first bytes (text) or its
    footer (Parquet): DatasetError naming the file."""
    with path.open("rb") as f:
        head = f.read(64 * 1024)
    if suffix == ".parquet":
        _check_parquet(path, head, filename)
        return
    if _utf16(head):
        raise DatasetError(
            f"{filename}: the text is UTF-16; save the table as UTF-8 (in Excel: 'CSV UTF-8')",
            code="file_type",
        )
    if b"\x00" in head:
        raise DatasetError(f"{filename}: not a text table (it holds binary data)")
    # Only counted here; a file that is not UTF-8 is named by the reader. The header row is read
    # whole (up to a cap), so a very wide table is counted, not estimated from its first bytes.
    with path.open("rb") as f:
        first = f.readline(MAX_HEADER_BYTES + 1)
    header = first.decode("utf-8-sig", errors="replace")
    sep = file_separator(path, filename)  # as training reads it (a ';' CSV is not one column)
    columns = header.count(sep) + 1
    if len(first) > MAX_HEADER_BYTES and not first.endswith(b"\n"):
        raise DatasetError(
            f"{filename}: the header row is longer than {MAX_HEADER_BYTES} bytes (over {columns} "
            f"columns); the limit is {MAX_TABLE_COLUMNS} columns"
        )
    if columns > MAX_TABLE_COLUMNS:
        raise DatasetError(f"{filename}: {columns} columns is above the limit of {MAX_TABLE_COLUMNS}")
    lines = _scan_text(path, sep, filename, _header_names(header, sep))
    if (lines + 1) * columns > MAX_TABLE_CELLS:
        raise DatasetError(
            f"{filename}: about {lines} rows of {columns} columns is above the limit of "
            f"{MAX_TABLE_CELLS} cells",
            code="too_large",
        )


def _header_names(header: str, sep: str) -> list[str]:
    import csv

    return next(csv.reader([header.rstrip("\r\n")], delimiter=sep), [])


def _scan_text(path: Path, sep: str, filename: str, names: list[str]) -> int:
    """The text's line count; on the way, a cell longer than MAX_CELL_CHARS is refused from the bytes
    before pandas parses anything (a 100 MB cell cost seconds of parsing and a copy of the cell): a
    run of more than MAX_CELL_CHARS * 4 + 2 bytes between separators and line ends is one (UTF-8
    takes at most 4 bytes a character, quotes 2). Shorter long cells are counted once parsed."""
    import numpy as np

    limit = MAX_CELL_CHARS * 4 + 2
    separator = ord(sep)
    lines = offset = 0
    cell_start = 0  # where the cell that the bytes read so far end in began
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            lines += block.count(b"\n")
            data = np.frombuffer(block, dtype=np.uint8)
            ends = np.flatnonzero((data == separator) | (data == 10) | (data == 13)) + offset
            starts = np.concatenate(([cell_start], ends[:-1] + 1))
            too_long = np.flatnonzero(ends - starts > limit)
            if too_long.size:
                _refuse_long_cell(path, int(starts[too_long[0]]), sep, filename, names)
            if ends.size:
                cell_start = int(ends[-1]) + 1
            offset += len(block)
            if offset - cell_start > limit:  # the last cell goes on: too long already
                _refuse_long_cell(path, cell_start, sep, filename, names)
    return lines


def _refuse_long_cell(path: Path, start: int, sep: str, filename: str, names: list[str]) -> NoReturn:
    """DatasetError naming the row and column of the cell that begins at byte `start` (counted from
    the line ends and separators before it: a quoted line end or separator can shift them)."""
    lines = index = 0  # line ends before the cell; separators since the last one
    with path.open("rb") as f:
        while (position := f.tell()) < start:
            block = f.read(min(1 << 20, start - position))
            lines += block.count(b"\n")
            last = block.rfind(b"\n")
            if last >= 0:
                index, block = 0, block[last + 1 :]
            index += block.count(sep.encode())
        prefix = f.read(PREFIX_CHARS * 4).decode("utf-8", errors="replace")[:PREFIX_CHARS]
    column = quote(names[index]) if index < len(names) else f"number {index + 1}"
    raise DatasetError(
        f"{filename}: row {lines}, column {column}: a cell is longer than the limit of {MAX_CELL_CHARS} "
        f"characters ({prefix!r}...)"
    )


def _utf16(head: bytes) -> bool:
    """A UTF-16 text: its byte-order mark, or ASCII text with every other byte zero."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    sample = head[:4096]
    if len(sample) < 8:
        return False
    even, odd = sample[0::2], sample[1::2]
    return even.count(0) > 0.9 * len(even) or odd.count(0) > 0.9 * len(odd)


def _check_parquet(path: Path, head: bytes, filename: str) -> None:
    if not head.startswith(b"PAR1"):
        raise DatasetError(f"{filename}: not a Parquet file (no PAR1 signature)")
    import pyarrow
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        meta, schema = parquet.metadata, parquet.schema_arrow
    except (pyarrow.ArrowException, OSError, ValueError) as exc:
        raise DatasetError(f"{filename}: not a readable Parquet file ({exc})") from None
    if meta.num_columns > MAX_TABLE_COLUMNS:
        raise DatasetError(
            f"{filename}: {meta.num_columns} columns is above the limit of {MAX_TABLE_COLUMNS}"
        )
    if meta.num_rows * meta.num_columns > MAX_TABLE_CELLS:
        raise DatasetError(
            f"{filename}: {meta.num_rows} rows of {meta.num_columns} columns is above the limit of "
            f"{MAX_TABLE_CELLS} cells",
            code="too_large",
        )
    for field in schema:
        if not _flat(field.type):
            raise DatasetError(
                f"{filename}: column {quote(field.name)} holds {field.type} values; a table cell must be "
                "a number or a text"
            )
    expanded = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if expanded > MAX_TABLE_BYTES * 4:
        raise DatasetError(
            f"{filename}: {expanded} bytes once decompressed is above the limit of {MAX_TABLE_BYTES * 4}",
            code="too_large",
        )
    _check_decoded_text(path, schema, filename)


def _flat(kind: Any) -> bool:
    """A type a table cell may have: a number, a truth value, a text, a date or time, or a
    dictionary of those (no list, map, struct, union or bytes)."""
    import pyarrow.types as t

    if t.is_dictionary(kind):
        return _flat(kind.value_type)
    return bool(
        t.is_integer(kind)
        or t.is_floating(kind)
        or t.is_boolean(kind)
        or t.is_decimal(kind)
        or t.is_string(kind)
        or t.is_large_string(kind)
        or t.is_temporal(kind)
        or t.is_null(kind)
    )


def _check_decoded_text(path: Path, schema: Any, filename: str) -> None:
    """The text columns' decoded size, row group by row group, read dictionary-encoded (so a repeated
    long value is held once): refused above MAX_DECODED_BYTES, and a cell above MAX_CELL_CHARS
    (counted in bytes here, a bound on its characters) before pandas makes a string of each row."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import pyarrow.types as t

    text = [
        f.name for f in schema if t.is_string(f.type) or t.is_large_string(f.type) or t.is_dictionary(f.type)
    ]
    if not text:
        return
    reader = pq.ParquetFile(path, read_dictionary=text)
    total = 0
    for group in range(reader.metadata.num_row_groups):
        table = reader.read_row_group(group, columns=text)
        for name, column in zip(table.column_names, table.columns, strict=True):
            for chunk in column.chunks:
                if t.is_dictionary(chunk.type):
                    lengths = pc.binary_length(chunk.dictionary)
                    decoded = pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0
                else:
                    lengths = pc.binary_length(chunk)
                    decoded = pc.sum(lengths).as_py() or 0
                longest = pc.max(lengths).as_py() or 0
                if longest > MAX_CELL_CHARS * 4:  # UTF-8: at most 4 bytes a character
                    raise DatasetError(
                        f"{filename}: column {quote(name)} holds a cell of {longest} bytes, above the limit "
                        f"of {MAX_CELL_CHARS} characters"
                    )
                total += decoded
                if total > MAX_DECODED_BYTES:
                    raise DatasetError(
                        f"{filename}: its text is above {MAX_DECODED_BYTES} bytes once decoded (reached in "
                        f"column {quote(name)}); the limit for a table's text is {MAX_DECODED_BYTES} bytes",
                        code="too_large",
                    )
