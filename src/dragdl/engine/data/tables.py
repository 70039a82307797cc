"""Tables: columns of numbers and categories, read from CSV/TSV/Parquet or scikit-learn's sets.

A `Table` is a plain column store: float64 arrays (NaN for a missing number) and object arrays
of str (None for a missing category). Column kinds are decided once, when the table is read:
a column is a number when every present value reads as one, else a category. Prediction rows
are read against the training schema (`rows_to_table`), so a served model sees the same kinds.
"""

from __future__ import annotations

import contextlib
import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from dragdl.engine.data.base import DatasetError, DatasetInfo, Source
from dragdl.engine.data.table_text import DECIMAL_COMMA, file_separator, separator_name
from dragdl.engine.payloads import ColumnInfo, ColumnKind

TableName = Literal["iris", "wine", "breast_cancer", "diabetes"]
TABLE_NAMES: tuple[str, ...] = get_args(TableName)
TABLE_SUFFIXES = frozenset({".csv", ".tsv", ".parquet"})


@dataclass
class Table:
    """Named columns of equal length."""

    columns: dict[str, np.ndarray]

    def __post_init__(self) -> None:
        lengths = {len(values) for values in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"table columns differ in length: {sorted(lengths)}")

    @property
    def num_rows(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    @property
    def names(self) -> list[str]:
        return list(self.columns)

    def kind(self, name: str) -> ColumnKind:
        return "number" if self.columns[name].dtype.kind == "f" else "category"

    def column_info(self, name: str) -> ColumnInfo:
        values = self.columns[name]
        if self.kind(name) == "number":
            return ColumnInfo(name=name, kind="number", missing=int(np.isnan(values).sum()))
        present = [v for v in values if v is not None]
        return ColumnInfo(
            name=name,
            kind="category",
            missing=len(values) - len(present),
            categories=tuple(sorted(set(present))),
        )

    def schema(self) -> list[ColumnInfo]:
        return [self.column_info(name) for name in self.columns]

    def take(self, rows: np.ndarray) -> Table:
        return Table({name: values[rows] for name, values in self.columns.items()})

    def without(self, name: str) -> Table:
        return Table({key: values for key, values in self.columns.items() if key != name})

    def require(self, name: str, what: str = "column", field: str | None = None) -> np.ndarray:
        """The named column, or a DatasetError listing the close names (a typo is the usual cause)."""
        if name in self.columns:
            return self.columns[name]
        raise unknown_column(name, self.names, what, field)


def unknown_column(
    name: str, known: Sequence[str], what: str = "column", field: str | None = None
) -> DatasetError:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    listed = ", ".join(repr(c) for c in known[:20]) + (" ..." if len(known) > 20 else "")
    return DatasetError(
        f"the table has no {what} {name!r}{hint} (columns: {listed})", field=field, code="column_unknown"
    )


# -- reading ------------------------------------------------------------------------------------

MISSING_TOKENS: frozenset[str] = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
"""The cell texts that mean a missing value wherever a table is read: an uploaded or server file,
training, the web form's and REST's JSON rows, a CSV batch, the SDK and the CLI. pandas' default NA
strings (a test holds them equal), so a value read as missing in training is missing in prediction;
a spreadsheet's "NA" must not be refused as "not a number" by one path and accepted by another."""


def is_missing_text(text: str) -> bool:
    """Whether a cell's text (surrounding spaces ignored) is a missing value."""
    return text.strip() in MISSING_TOKENS


def _number_or_none(value: Any) -> float | None:
    """A value as a float, NaN for missing, None when it is text that is not a number."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            return float(value)
        except OverflowError:  # a JSON integer of 400 digits: not a number a model can read
            return None
    text = str(value).strip()
    if text in MISSING_TOKENS:
        return math.nan
    try:
        return float(text)
    except ValueError:
        return None


def quote_cell(value: Any, limit: int = 40) -> str:
    """A cell for an error message: the repr of a bounded prefix, so a 30 MB cell is not repeated."""
    text = str(value)
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def _category(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return None if text in MISSING_TOKENS else text


def column_from_values(values: Sequence[Any]) -> np.ndarray:
    """float64 when every present value reads as a number, else an object array of str/None."""
    numbers = [_number_or_none(v) for v in values]
    if all(n is not None for n in numbers):
        return np.asarray(numbers, dtype=np.float64)
    return np.asarray([_category(v) for v in values], dtype=object)


def _table_from_frame(frame: Any, path: Path, max_categories: int | None = None) -> Table:
    import pandas as pd

    if len(frame.columns) == 0 or len(frame) == 0:
        raise DatasetError(f"{path.name} has no data rows", field="path", code="table_empty")
    names = [str(c) for c in frame.columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DatasetError(
            f"{path.name} has more than one column named {duplicates[0]!r}",
            field="path",
            code="dataset_invalid",
        )
    if max_categories is not None:
        for name, column in zip(names, frame.columns, strict=True):
            _check_category_count(frame[column], name, max_categories, path)
    columns: dict[str, np.ndarray] = {}
    for name, series in zip(names, (frame[c] for c in frame.columns), strict=True):
        if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
            columns[name] = series.to_numpy(dtype=np.float64, na_value=np.nan)
            continue
        values = series.tolist()
        for row, value in enumerate(values, start=1):
            # Parquet can nest lists, maps and bytes in a cell; a table cell is a number or a text.
            if isinstance(value, list | tuple | dict | set | np.ndarray | bytes | bytearray):
                raise DatasetError(
                    f"{path.name}: column {name!r} holds {type(value).__name__} values (row {row}); "
                    "a table cell must be a number or a text",
                    field="path",
                    code="dataset_invalid",
                )
        columns[name] = column_from_values([None if pd.isna(v) else v for v in values])
    return Table(columns)


def read_table(path: Path, max_categories: int | None = None) -> Table:
    """A CSV (comma), TSV (tab) or Parquet file; the first CSV/TSV line names the columns.

    `max_categories`: a category column with more distinct values is refused (naming it and the row
    where the limit was passed), counted by pandas before any cell is converted in Python."""
    return _table_from_frame(_read_frame(path), path, max_categories)


def _check_category_count(series: Any, name: str, limit: int, path: Path) -> None:
    """Refuse a category column of more than `limit` distinct values, counted on pandas' distinct
    values (a hash table in C) before any cell is converted: a column of 10^6 identifiers took
    seconds of conversion per value before it was counted."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return
    values = series.to_numpy(dtype=object)
    distinct = pd.unique(values[pd.notna(values)])  # in the order they first appear
    if len(distinct) <= limit:  # stripping can only merge values
        return
    with contextlib.suppress(ValueError, TypeError, OverflowError):
        distinct.astype(np.float64)  # float() of each value, in C: a number column has no categories
        return
    if all(_number_or_none(value) is not None for value in distinct):  # stops at the first text
        return  # numbers with blanks or the like ("1_000" reads as one too)
    # The first 2 * limit + 1 distinct values hold the value past the limit unless stripping merges
    # many of them; only then is the whole column stripped.
    for stop in dict.fromkeys((2 * limit + 1, len(distinct))):
        stripped = [str(value).strip() for value in distinct[:stop]]
        categories = list(dict.fromkeys(value for value in stripped if value))
        if len(categories) > limit:
            break
    else:
        return
    first = distinct[stripped.index(categories[limit])]  # the first value past the limit
    row = int(np.flatnonzero(values == first)[0]) + 1
    raise DatasetError(
        f"{path.name}: column {quote_cell(name)} has more than {limit} distinct values (reached in row "
        f"{row}); a category column takes at most {limit}: leave out an identifier or free-text column",
        field="path",
        code="dataset_invalid",
    )


def _check_header_names(path: Path, sep: str) -> None:
    """pandas renames a repeated column name ('price', 'price.1'): refused instead, naming it."""
    import csv

    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            names = next(csv.reader(f, delimiter=sep), [])
    except (UnicodeDecodeError, csv.Error):
        return  # the reader names what is wrong with the file
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise DatasetError(
            f"{path.name} has more than one column named {duplicates[0]!r}; give each column its own "
            "name in the header line",
            field="path",
            code="dataset_invalid",
        )


def _read_delimited(path: Path, sep: str) -> Any:
    import warnings

    import pandas as pd

    with warnings.catch_warnings():
        # index_col=False: a row with more fields than the header is an error, never an index that
        # silently eats the first column (as a ';'-separated export read with ',' would).
        warnings.simplefilter("error", pd.errors.ParserWarning)
        _check_header_names(path, sep)
        try:
            frame = pd.read_csv(
                path,
                sep=sep,
                dtype=str,
                keep_default_na=False,
                na_values=sorted(MISSING_TOKENS),
                index_col=False,
                encoding="utf-8-sig",
            )
        except pd.errors.ParserWarning:
            raise DatasetError(
                f"{path.name}: some rows have more fields than the header line names (read as separated "
                f"by {separator_name(sep)}); give each column one name in the header line",
                field="path",
                code="dataset_invalid",
            ) from None
    # Where ';' separates, the comma is the decimal mark (Excel in many European locales).
    return frame.replace(DECIMAL_COMMA, r"\1.\2", regex=True) if sep == ";" else frame


def _read_frame(path: Path) -> Any:
    import pandas as pd

    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise DatasetError(
            f"{path.name}: a table must be a .csv, .tsv or .parquet file",
            field="path",
            code="dataset_invalid",
        )
    if not path.is_file():
        raise DatasetError(f"table file {path} does not exist", field="path", code="dataset_invalid")
    try:
        # A text table: dtype=str keeps every cell as written, the kinds are decided here, not by
        # pandas' guesses (which turn "007" into 7 and a column with one typo into text silently).
        frame = pd.read_parquet(path) if suffix == ".parquet" else _read_delimited(path, file_separator(path))
    except pd.errors.EmptyDataError:
        raise DatasetError(f"{path.name} is empty", field="path", code="table_empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as exc:
        raise DatasetError(f"cannot read {path.name}: {exc}", field="path", code="dataset_invalid") from exc
    return frame


def read_rows(path: Path) -> list[dict[str, Any]]:
    """A CSV/TSV/Parquet file as rows of {column: value}, for prediction. CSV cells stay text as
    written ("007" stays "007"): `rows_to_table` reads them against the model's own column kinds."""
    import pandas as pd

    frame = _read_frame(path)
    if len(frame.columns) == 0 or len(frame) == 0:
        raise DatasetError(f"{path.name} has no data rows", field="path", code="table_empty")
    names = [str(c) for c in frame.columns]
    return [
        {name: (None if pd.isna(value) else value) for name, value in zip(names, values, strict=True)}
        for values in frame.itertuples(index=False, name=None)
    ]


# -- scikit-learn's bundled sets --------------------------------------------------------------

# The target gets a readable name; classification targets hold the class names, not 0..k-1.
_TARGET_NAMES: dict[str, str] = {
    "iris": "species",
    "wine": "cultivar",
    "breast_cancer": "diagnosis",
    "diabetes": "progression",
}


@cache
def _load_builtin(name: str) -> Table:
    from sklearn import datasets

    loader = {
        "iris": datasets.load_iris,
        "wine": datasets.load_wine,
        "breast_cancer": datasets.load_breast_cancer,
        "diabetes": datasets.load_diabetes,
    }[name]
    bunch = loader()
    columns = {
        str(n): np.asarray(bunch.data[:, i], dtype=np.float64) for i, n in enumerate(bunch.feature_names)
    }
    target = np.asarray(bunch.target)
    if name == "diabetes":
        columns[_TARGET_NAMES[name]] = target.astype(np.float64)
    else:
        names = [str(n) for n in bunch.target_names]
        columns[_TARGET_NAMES[name]] = np.asarray([names[int(t)] for t in target], dtype=object)
    return Table(columns)


def builtin_table(name: str) -> tuple[Table, str]:
    """(table, target column) for one of scikit-learn's bundled sets; offline. Read-only: cached."""
    if name not in TABLE_NAMES:
        raise DatasetError(
            f"unknown built-in table {name!r} (choose one of {', '.join(TABLE_NAMES)})",
            field="source",
            code="dataset_invalid",
        )
    return _load_builtin(name), _TARGET_NAMES[name]


# -- prediction rows ----------------------------------------------------------------------------


def rows_to_table(
    rows: Sequence[Mapping[str, Any]], schema: Sequence[ColumnInfo], first_row: int = 1
) -> Table:
    """Rows of {column: value} read against the training schema.

    A missing key, None or one of MISSING_TOKENS ("", "NA", ...) is a missing value (an Impute node
    may fill it), but a column no row has is an error (a renamed or forgotten column), and so is a
    category the training table did not hold; other keys are ignored (an id or the target column may
    come along). Errors name the row (numbered from `first_row`, 1-based) and the column.
    """
    if not rows:
        raise DatasetError("no rows to predict", field="rows", code="table_empty")
    given = {key for row in rows for key in row}
    absent = [info.name for info in schema if info.name not in given]
    if absent:
        raise DatasetError(
            f"no row has the column {absent[0]!r}"
            + (f" (nor {', '.join(repr(a) for a in absent[1:4])})" if len(absent) > 1 else "")
            + f"; the model reads the columns {', '.join(repr(c.name) for c in schema)}",
            field="rows",
            code="column_unknown",
        )
    columns: dict[str, np.ndarray] = {}
    for info in schema:
        if info.kind == "number":
            numbers = np.empty(len(rows), dtype=np.float64)
            for i, row in enumerate(rows):
                value = _number_or_none(row.get(info.name))
                if value is None:
                    raise DatasetError(
                        f"row {i + first_row}, column {info.name!r}: {quote_cell(row.get(info.name))} is "
                        "not a number",
                        field="rows",
                        code="value_not_numeric",
                    )
                numbers[i] = value
            columns[info.name] = numbers
        else:
            values = [_category(row.get(info.name)) for row in rows]
            known = set(info.categories)
            for i, category in enumerate(values):
                # One-hot would answer an unseen value as "none of them": a typo must not pass silently.
                if category is not None and known and category not in known:
                    shown = ", ".join(quote_cell(c) for c in info.categories[:10])
                    more = ", ..." if len(info.categories) > 10 else ""
                    raise DatasetError(
                        f"row {i + first_row}, column {info.name!r}: {quote_cell(category)} is not one of "
                        f"the values seen in training ({shown}{more})",
                        field="rows",
                        code="unknown_category",
                    )
            columns[info.name] = np.asarray(values, dtype=object)
    return Table(columns)


# -- a table as a training source ---------------------------------------------------------------


def _class_name(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


MissingTargets = Literal["drop", "refuse"]
"""What a table's rows without a target become: left out of the data (named in the dataset's
description and the training log), or an error naming the first of them."""

SHOWN_ROWS = 10
"""How many of the rows left out a description names (all are counted)."""


class TableSource(Source):
    """A table split into features and a target column: a `Source` for the kinds.

    `labels` index the sorted distinct target values (numbers sorted as numbers), which the
    classification kind uses; the regression kind reads `target_values()`. Rows whose target is
    missing are left out (`missing_targets="drop"`, counted in `info.missing_targets`) or refused.
    """

    def __init__(
        self,
        table: Table,
        target: str,
        field: str | None = "target",
        missing_targets: MissingTargets = "drop",
    ) -> None:
        values = table.require(target, "target column", field)
        if table.num_rows == 0:
            raise DatasetError("the table has no data rows", field="path", code="table_empty")
        if len(table.columns) < 2:
            raise DatasetError(
                f"the table has only the target column {target!r}; it needs at least one feature column",
                field=field,
                code="table_empty",
            )
        numeric = values.dtype.kind == "f"
        missing = np.isnan(values) if numeric else np.asarray([v is None for v in values], dtype=bool)
        dropped = np.flatnonzero(missing)
        if len(dropped) and (missing_targets == "refuse" or len(dropped) == table.num_rows):
            raise missing_target_error(target, int(dropped[0]) + 1, len(dropped), field)
        # Row numbers in messages stay the file's: `_rows` maps a kept row to its place there.
        self._rows = np.flatnonzero(~missing)
        if len(dropped):
            table = table.take(self._rows)
            values = values[self._rows]
        self.target = target
        self.features = table.without(target)
        self._target_column = values
        distinct, labels = np.unique(values if numeric else values.astype(str), return_inverse=True)
        self.labels: np.ndarray = labels.astype(np.int64).reshape(-1)
        classes = tuple(_class_name(v) for v in distinct.tolist())
        text = (
            None if numeric else next((i for i, v in enumerate(values) if _number_or_none(v) is None), None)
        )
        self.info = DatasetInfo(
            classes=classes,
            channels=0,
            size=None,
            count=table.num_rows,
            columns=tuple(self.features.schema()),
            target=target,
            target_text=None if text is None else (self.row_number(text), str(values[text])),
            missing_targets=len(dropped),
            missing_target_rows=tuple(int(row) + 1 for row in dropped[:SHOWN_ROWS]),
        )

    def row_number(self, index: int) -> int:
        """The 1-based row of the file that kept row `index` came from."""
        return int(self._rows[index]) + 1

    def target_values(self) -> np.ndarray:
        values = self._target_column
        if values.dtype.kind == "f":
            return values.astype(np.float64)
        for i, value in enumerate(values):
            if _number_or_none(value) is None:
                raise DatasetError(
                    f"the target column {self.target!r} holds the text {quote_cell(value)} in row "
                    f"{self.row_number(i)}; regression needs a number in every row",
                    field="target",
                    code="target_not_numeric",
                )
        raise AssertionError("a text column whose values are all numbers")  # column_from_values decides


def missing_target_error(target: str, first_row: int, count: int, field: str | None) -> DatasetError:
    """Rows without a target, refused (the train node asks it, or no row has one)."""
    return DatasetError(
        f"the target column {target!r} is empty in row {first_row} ({count} rows in all); "
        "every row needs a target",
        field=field,
        code="target_missing",
    )
