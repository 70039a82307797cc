"""Table nodes: `dataset.table` and the table operators (Standardize, OneHot, Impute, SelectColumns).

A table operator works on whole columns. Those that learn something (a mean, the categories)
learn it from the training rows only (`fit`), and the state is plain JSON, so the same transform
runs again in prediction from the bundle. Every operator says what columns it outputs (`infer`),
which is how validation shows "13 features" on each edge before any row is read.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo
from dragdl.engine.data.table_pipeline import table_features
from dragdl.engine.data.tables import (
    TABLE_SUFFIXES,
    Table,
    TableName,
    TableSource,
    builtin_table,
    read_table,
    unknown_column,
)
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.nodes.base import DatasetNode
from dragdl.engine.nodes.registry import NodeType, OptionalServerPath, P, Port, register
from dragdl.engine.payloads import ColumnInfo

_STRICT = ConfigDict(extra="forbid")
TABLE_KIND = "table"
"""The kind of an uploaded dataset that is one table file (read by `dataset.table`)."""

Columns = tuple[ColumnInfo, ...]


# --- dataset.table ------------------------------------------------------------------------------


class TableParams(BaseModel):
    model_config = _STRICT

    source: Literal["iris", "wine", "breast_cancer", "diabetes", "file", "uploaded"] = Field(
        "iris",
        title="Table",
        description="A table that ships with scikit-learn (iris, wine, breast_cancer: classes; "
        "diabetes: a value), a CSV/TSV/Parquet file on the server ('file'), or one of your uploaded "
        "tables ('uploaded').",
    )
    path: OptionalServerPath = Field(
        None,
        title="Table file",
        description="With source 'file': a .csv, .tsv or .parquet file whose first row names the columns. "
        "Relative paths are taken under the data dir.",
    )
    dataset_id: str | None = Field(
        None,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        title="Uploaded table",
        description="With source 'uploaded': the id of one of your uploaded tables (Datasets page).",
    )
    target: str | None = Field(
        None,
        max_length=200,
        title="Target column",
        description="The column to predict; empty: the built-in table's target, or else the last column.",
    )


def _table_file(path: Path, field: str) -> Path:
    """`path` itself, or the one table file at the top of an uploaded dataset's folder."""
    if not path.is_dir():
        return path
    found = sorted(
        p for p in path.iterdir() if p.suffix.lower() in TABLE_SUFFIXES and not p.name.startswith(".")
    )
    if len(found) != 1:
        raise DatasetError(
            f"expected one .csv, .tsv or .parquet file in {path}, found {len(found)}", field=field
        )
    return found[0]


def open_table(params: TableParams, ctx: DataContext) -> TableSource:
    """The table and its target as the params say; raises DatasetError on the field concerned."""
    from dragdl.engine.nodes.datasets import resolve_path

    if params.source == "file":
        if not params.path:
            raise DatasetError("choose a table file (source 'file')", field="path")
        table, default_target, field = read_table(resolve_path(params.path, ctx)), None, "path"
    elif params.source == "uploaded":
        entry = ctx.uploaded.get(params.dataset_id or "")
        if not params.dataset_id or entry is None:
            raise DatasetError(f"dataset {params.dataset_id or '(none)'} not found", field="dataset_id")
        if entry.kind != TABLE_KIND:
            raise DatasetError(
                f"dataset {params.dataset_id} holds images ({entry.kind}); "
                "open it with an Uploaded dataset node",
                field="dataset_id",
            )
        path = entry.path if entry.path.is_absolute() else ctx.data_dir / entry.path
        table, default_target, field = read_table(_table_file(path, "dataset_id")), None, "dataset_id"
    else:
        table, builtin_target = builtin_table(params.source)
        default_target, field = builtin_target, "source"
    target = params.target or default_target or table.names[-1]
    try:
        return TableSource(table, target, field="target" if params.target else field)
    except DatasetError as exc:
        if exc.field in ("path", None):
            exc.field = field
        raise


@register
class TableDataset(DatasetNode[TableParams]):
    type = "dataset.table"
    title = "Table"
    description = (
        "Rows of numbers and categories with one target column: a class to predict (classification) or a "
        "value (regression, with a Regressor). Shows each column's type and missing values."
    )
    params_model = TableParams
    outputs: ClassVar = (Port("out", ("table",), label="table"),)

    def describe(self, params: TableParams, ctx: DataContext) -> DatasetInfo:
        # Tables are small: reading the file is the description (kinds and missing counts need every row).
        return open_table(params, ctx).info

    def open(self, params: TableParams, ctx: DataContext) -> TableSource:
        return open_table(params, ctx)


# --- the table operator contract ----------------------------------------------------------------


class TableOpNode(NodeType[P]):
    """A table -> table operator. `fit` sees the training rows only; its state is JSON."""

    category: ClassVar = "op"
    inputs: ClassVar = (Port("in", ("table",), label="table"),)
    outputs: ClassVar = (Port("out", ("table",), label="table"),)

    @abstractmethod
    def infer(self, params: P, columns: Columns, state: dict[str, Any] | None) -> Columns:
        """The output columns; `state` (what `fit` learned) when known. Raises NodeError."""

    def fit(self, params: P, table: Table) -> dict[str, Any]:
        """What the operator learns from the training rows (nothing by default)."""
        return {}

    @abstractmethod
    def apply(self, params: P, table: Table, state: dict[str, Any]) -> Table: ...

    def source(self, params: P, state: dict[str, Any], name: str) -> str:
        """The input column an output column is computed from (by default the column of that name)."""
        return name


def required_columns(
    columns: Columns, ops: Sequence[tuple[TableOpNode[Any], BaseModel, dict[str, Any]]]
) -> list[str]:
    """The input columns the output of a fitted chain of table operators is computed from, in input
    order. A column dropped on the way (Select columns) is not needed to predict: the operators
    before the drop pass over a fitted column that prediction rows do not hold."""
    current = tuple(columns)
    origin = {c.name: c.name for c in current}
    for kind, params, state in ops:
        out = kind.infer(params, current, state)
        origin = {c.name: origin[kind.source(params, state, c.name)] for c in out}
        current = out
    needed = set(origin.values())
    return [c.name for c in columns if c.name in needed]


def _check_known(names: Sequence[str], columns: Columns, field: str = "columns") -> None:
    known = [c.name for c in columns]
    for name in names:
        if name not in known:
            exc = unknown_column(name, known)
            raise NodeError("column_unknown", exc.message, field=field, column=name)


def _chosen(listed: Sequence[str], columns: Columns, kind: str | None) -> list[ColumnInfo]:
    """The listed columns (all of `kind` when the list is empty), checked to exist and have `kind`."""
    _check_known(listed, columns)
    if not listed:
        return [c for c in columns if kind is None or c.kind == kind]
    by_name = {c.name: c for c in columns}
    chosen = [by_name[name] for name in listed]
    for column in chosen:
        if kind is not None and column.kind != kind:
            raise NodeError(
                "column_kind",
                f"column {column.name!r} holds {column.kind}s, not {kind}s",
                field="columns",
                column=column.name,
                kind=column.kind,
            )
    return chosen


def _replace(columns: Columns, changed: dict[str, ColumnInfo]) -> Columns:
    return tuple(changed.get(c.name, c) for c in columns)


_COLUMNS_FIELD: list[str] = Field(
    default_factory=list,
    max_length=1000,
    title="Columns",
    description="Columns to work on; empty: every column it applies to.",
)


# --- op.Standardize -----------------------------------------------------------------------------


class StandardizeParams(BaseModel):
    model_config = _STRICT
    columns: list[str] = _COLUMNS_FIELD


@register
class Standardize(TableOpNode[StandardizeParams]):
    type = "op.Standardize"
    title = "Standardize"
    description = (
        "Scales number columns to mean 0 and standard deviation 1, with the mean and deviation measured "
        "on the training rows. Missing values stay missing."
    )
    params_model = StandardizeParams

    def infer(self, params: StandardizeParams, columns: Columns, state: dict[str, Any] | None) -> Columns:
        _chosen(params.columns, columns, "number")
        return columns

    def fit(self, params: StandardizeParams, table: Table) -> dict[str, Any]:
        stats: dict[str, dict[str, float]] = {}
        for column in _chosen(params.columns, tuple(table.schema()), "number"):
            values = table.columns[column.name]
            present = values[~np.isnan(values)]
            mean = float(present.mean()) if len(present) else 0.0
            std = float(present.std()) if len(present) else 1.0
            # A constant column would divide by zero; it carries no information, so it maps to 0.
            stats[column.name] = {"mean": mean, "std": std if std > 1e-12 else 1.0}
        return {"columns": stats}

    def apply(self, params: StandardizeParams, table: Table, state: dict[str, Any]) -> Table:
        columns = dict(table.columns)
        for name, stat in state["columns"].items():
            # A fitted column absent from prediction rows is one a later Select columns drops: a
            # caller gives only the columns the network reads (`required_columns`).
            if name in columns:
                columns[name] = (columns[name] - stat["mean"]) / stat["std"]
        return Table(columns)


# --- op.OneHot ----------------------------------------------------------------------------------


class OneHotParams(BaseModel):
    model_config = _STRICT
    columns: list[str] = _COLUMNS_FIELD
    max_categories: int = Field(
        50,
        ge=2,
        le=5000,
        title="Most categories per column",
        description="A column with more distinct values than this is refused: it is likely free text "
        "or an identifier, whose 0/1 columns would only add noise (drop it with Select columns).",
    )


def _check_categories(params: OneHotParams, categories: dict[str, list[str]]) -> None:
    for name, values in categories.items():
        if len(values) > params.max_categories:
            raise NodeError(
                "too_many_categories",
                f"column {name!r} has {len(values)} distinct values, more than {params.max_categories}: "
                "it looks like free text or an identifier; drop it with Select columns, or raise "
                "'Most categories per column'",
                field="max_categories",
                column=name,
                count=len(values),
            )


def _one_hot_name(column: str, category: str) -> str:
    return f"{column}={category}"


@register
class OneHot(TableOpNode[OneHotParams]):
    type = "op.OneHot"
    title = "One-hot"
    description = (
        "Turns each category column into one 0/1 column per category seen in the training rows. "
        "A category it has not seen (or a missing one) gives all zeros."
    )
    params_model = OneHotParams

    def infer(self, params: OneHotParams, columns: Columns, state: dict[str, Any] | None) -> Columns:
        chosen = _chosen(params.columns, columns, "category")
        categories = {c.name: list(c.categories) for c in chosen} if state is None else state["categories"]
        _check_categories(params, categories)
        out: list[ColumnInfo] = []
        for column in columns:
            if column.name in categories:
                out.extend(
                    ColumnInfo(name=_one_hot_name(column.name, cat), kind="number")
                    for cat in categories[column.name]
                )
            else:
                out.append(column)
        return tuple(out)

    def fit(self, params: OneHotParams, table: Table) -> dict[str, Any]:
        chosen = _chosen(params.columns, tuple(table.schema()), "category")
        categories = {c.name: list(c.categories) for c in chosen}
        _check_categories(params, categories)
        return {"categories": categories}

    def source(self, params: OneHotParams, state: dict[str, Any], name: str) -> str:
        for column, values in state["categories"].items():
            if name in {_one_hot_name(column, category) for category in values}:
                return str(column)
        return name

    def apply(self, params: OneHotParams, table: Table, state: dict[str, Any]) -> Table:
        categories: dict[str, list[str]] = state["categories"]
        columns: dict[str, np.ndarray] = {}
        for name, values in table.columns.items():
            if name not in categories:
                columns[name] = values
                continue
            for category in categories[name]:
                columns[_one_hot_name(name, category)] = (values == category).astype(np.float64)
        return Table(columns)


# --- op.Impute ----------------------------------------------------------------------------------


class ImputeParams(BaseModel):
    model_config = _STRICT
    strategy: Literal["mean", "median", "most_frequent"] = Field(
        "mean",
        title="Fill with",
        description="What replaces a missing value, measured on the training rows: the mean or median "
        "(number columns), or the most frequent value (any column).",
    )
    columns: list[str] = _COLUMNS_FIELD


@register
class Impute(TableOpNode[ImputeParams]):
    type = "op.Impute"
    title = "Fill missing values"
    description = (
        "Fills missing values with the mean, median or most frequent value of the column in the "
        "training rows."
    )
    params_model = ImputeParams

    def _targets(self, params: ImputeParams, columns: Columns) -> list[ColumnInfo]:
        kind = None if params.strategy == "most_frequent" else "number"
        return _chosen(params.columns, columns, kind)

    def infer(self, params: ImputeParams, columns: Columns, state: dict[str, Any] | None) -> Columns:
        chosen = self._targets(params, columns)
        return _replace(columns, {c.name: c.model_copy(update={"missing": 0}) for c in chosen})

    def fit(self, params: ImputeParams, table: Table) -> dict[str, Any]:
        fill: dict[str, float | str | None] = {}
        for column in self._targets(params, tuple(table.schema())):
            values = table.columns[column.name]
            if column.kind == "number":
                present = values[~np.isnan(values)]
                if len(present) == 0:
                    fill[column.name] = 0.0  # no value to learn from: 0 (the mean after Standardize)
                elif params.strategy == "mean":
                    fill[column.name] = float(present.mean())
                elif params.strategy == "median":
                    fill[column.name] = float(np.median(present))
                else:
                    uniques, counts = np.unique(present, return_counts=True)
                    fill[column.name] = float(uniques[int(np.argmax(counts))])
            else:
                texts = [v for v in values if v is not None]
                if texts:
                    uniques, counts = np.unique(np.asarray(texts, dtype=str), return_counts=True)
                    fill[column.name] = str(uniques[int(np.argmax(counts))])
                else:
                    fill[column.name] = None
        return {"fill": fill}

    def apply(self, params: ImputeParams, table: Table, state: dict[str, Any]) -> Table:
        columns = dict(table.columns)
        for name, value in state["fill"].items():
            if name not in columns:  # dropped later, as in Standardize.apply
                continue
            values = columns[name]
            if values.dtype.kind == "f":
                columns[name] = np.where(np.isnan(values), float(value), values)
            else:
                columns[name] = np.asarray([value if v is None else v for v in values], dtype=object)
        return Table(columns)


# --- op.SelectColumns ---------------------------------------------------------------------------


class SelectColumnsParams(BaseModel):
    model_config = _STRICT
    mode: Literal["keep", "drop"] = Field(
        "keep",
        title="Mode",
        description="'keep': only the listed columns, in that order; 'drop': all but them.",
    )
    columns: list[str] = Field(
        min_length=1, max_length=1000, title="Columns", description="The columns to keep or drop."
    )


@register
class SelectColumns(TableOpNode[SelectColumnsParams]):
    type = "op.SelectColumns"
    title = "Select columns"
    description = "Keeps only the listed columns, or drops them."
    params_model = SelectColumnsParams

    def _names(self, params: SelectColumnsParams, names: Sequence[str]) -> list[str]:
        if params.mode == "keep":
            return list(dict.fromkeys(params.columns))
        dropped = set(params.columns)
        return [n for n in names if n not in dropped]

    def infer(self, params: SelectColumnsParams, columns: Columns, state: dict[str, Any] | None) -> Columns:
        _check_known(params.columns, columns)
        by_name = {c.name: c for c in columns}
        kept = tuple(by_name[name] for name in self._names(params, list(by_name)))
        if not kept:
            raise NodeError("table_empty", "no column is left: keep at least one", field="columns")
        return kept

    def apply(self, params: SelectColumnsParams, table: Table, state: dict[str, Any]) -> Table:
        # Prediction rows hold only the columns the network reads (`required_columns`): a kept
        # column that a later Select columns drops may be absent.
        return Table(
            {name: table.columns[name] for name in self._names(params, table.names) if name in table.columns}
        )


__all__ = [
    "TABLE_KIND",
    "Columns",
    "Impute",
    "OneHot",
    "SelectColumns",
    "Standardize",
    "TableDataset",
    "TableName",
    "TableOpNode",
    "TableParams",
    "open_table",
    "table_features",
]
