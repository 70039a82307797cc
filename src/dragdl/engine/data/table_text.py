"""The separator of a text table, told from its first bytes: one reading for every reader.

Excel writes ';'-separated CSV in many European locales (the comma being the decimal mark), and
tables also come tab- or '|'-separated. A separator read wrongly turns the whole table into one
column, silently; so the upload's checks and description, training, the CSV batch and REST
predictions, the CLI and the exported script all ask `detect_separator` here. No torch or pandas:
the server's prediction route imports it.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from pathlib import Path

SEPARATORS = (",", ";", "\t", "|")
"""The separators a text table may use, the first the default of a .csv."""
SAMPLE_BYTES = 64 * 1024
"""The bytes the separator is told from (whole lines of them)."""
SAMPLE_LINES = 50


DECIMAL_COMMA = r"^\s*([+-]?\d+),(\d+(?:[eE][+-]?\d+)?)\s*$"
"""A number written with a decimal comma ('1,5', '-0,25'), as in a ';'-separated file Excel writes
where the comma is the decimal mark. In such a file each cell like this is read as '1.5', the same
rule in every reader (training, predictions, the exported script), so a model sees the same values.
Thousands separators ('1.234,5') are not read as numbers: such a column stays text."""
_DECIMAL_COMMA = re.compile(DECIMAL_COMMA)


def decimal_point(cell: str) -> str:
    """`cell` with a decimal comma written as a point ('1,5' -> '1.5'); other cells as they are."""
    return _DECIMAL_COMMA.sub(r"\1.\2", cell)


def default_separator(filename: str) -> str:
    """What the name says: a tab for .tsv, else a comma."""
    return "\t" if Path(filename).suffix.lower() == ".tsv" else ","


def detect_separator(head: bytes, filename: str) -> str:
    """The separator of a text table from its first bytes (`head`, SAMPLE_BYTES are enough).

    Each candidate splits the first lines (quotes respected); the one giving the most columns while
    every line has the header's count wins. A header of one column, or no candidate that agrees
    on every line, keeps the name's default (a comma; a tab for .tsv), whose reader then names the
    row that does not fit."""
    default = default_separator(filename)
    sample = head[:SAMPLE_BYTES]
    if len(head) > SAMPLE_BYTES or not sample.endswith(b"\n"):
        cut = sample.rfind(b"\n")
        sample = sample[: cut + 1] if cut >= 0 else sample  # a line cut short would not agree
    text = sample.decode("utf-8-sig", errors="replace")
    best, best_columns = default, 1
    for sep in (default, *(s for s in SEPARATORS if s != default)):
        columns = _agreeing_columns(text, sep)
        if columns > best_columns:
            best, best_columns = sep, columns
    return best


def _agreeing_columns(text: str, sep: str) -> int:
    """The header's column count when every sampled line has as many, else 0."""
    try:
        rows = list(itertools.islice(csv.reader(io.StringIO(text), delimiter=sep), SAMPLE_LINES))
    except csv.Error:
        return 0
    rows = [row for row in rows if row and any(cell.strip() for cell in row)]
    if not rows:
        return 0
    count = len(rows[0])
    return count if all(len(row) == count for row in rows) else 0


def file_separator(path: Path, filename: str | None = None) -> str:
    """`detect_separator` on the first bytes of a file."""
    with path.open("rb") as f:
        head = f.read(SAMPLE_BYTES + 1)
    return detect_separator(head, filename or path.name)


def separator_name(sep: str) -> str:
    return {",": "commas", ";": "semicolons", "\t": "tabs", "|": "'|' characters"}.get(sep, repr(sep))
