"""The table operators: Standardize, One-hot, Fill missing values (Impute), Select columns.

Each is one class holding all it is (the contract is `tables.TableOpNode`): its output columns,
what it learns from the training rows, the transform, and its part of the exported script (the
plain `fit_<op>`/`<op>` functions and the line that calls them), so adding an operator is adding a
class here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data.tables import Table
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.nodes.registry import register
from dragdl.engine.nodes.tables import (
    COLUMNS_FIELD,
    Columns,
    TableOpNode,
    check_known,
    chosen_columns,
    replace_columns,
    script_columns,
)
from dragdl.engine.payloads import ColumnInfo

_STRICT = ConfigDict(extra="forbid")

# --- op.Standardize -----------------------------------------------------------------------------


class StandardizeParams(BaseModel):
    model_config = _STRICT
    columns: list[str] = COLUMNS_FIELD


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
        chosen_columns(params.columns, columns, "number")
        return columns

    def fit(self, params: StandardizeParams, table: Table) -> dict[str, Any]:
        stats: dict[str, dict[str, float]] = {}
        for column in chosen_columns(params.columns, tuple(table.schema()), "number"):
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

    script_functions = '''
def fit_standardize(columns: Columns, names: list[str]) -> dict[str, tuple[float, ...]]:
    """Mean and standard deviation of each column's present values.

    A constant column gets deviation 1: it carries no information and becomes 0.
    """
    stats = {}
    for name in names:
        present = columns[name][~np.isnan(columns[name])]
        mean = float(present.mean()) if len(present) else 0.0
        std = float(present.std()) if len(present) else 1.0
        stats[name] = (mean, std if std > 1e-12 else 1.0)
    return stats


def standardize(columns: Columns, stats: dict[str, tuple[float, ...]]) -> Columns:
    """Mean 0 and deviation 1 (measured on the training rows); missing stays missing."""
    out = dict(columns)
    for name, (mean, std) in stats.items():
        out[name] = (columns[name] - mean) / std
    return out
'''

    def script_step(self, params: StandardizeParams) -> tuple[str, str]:
        return f"fit_standardize(train, {script_columns(params.columns, 'number_columns')})", "standardize"


# --- op.OneHot ----------------------------------------------------------------------------------


class OneHotParams(BaseModel):
    model_config = _STRICT
    columns: list[str] = COLUMNS_FIELD
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
        chosen = chosen_columns(params.columns, columns, "category")
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
        chosen = chosen_columns(params.columns, tuple(table.schema()), "category")
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

    script_functions = '''
def fit_one_hot(columns: Columns, names: list[str]) -> dict[str, list[str]]:
    """The categories of each column seen in the training rows, sorted."""
    return {name: sorted({v for v in columns[name] if v is not None}) for name in names}


def one_hot(columns: Columns, categories: dict[str, list[str]]) -> Columns:
    """Each category column becomes one 0/1 column per category (named column=category),
    in its place; an unseen or missing category gives all zeros."""
    out = {}
    for name, values in columns.items():
        if name not in categories:
            out[name] = values
            continue
        for category in categories[name]:
            out[f"{name}={category}"] = (values == category).astype(np.float64)
    return out
'''

    def script_step(self, params: OneHotParams) -> tuple[str, str]:
        return f"fit_one_hot(train, {script_columns(params.columns, 'category_columns')})", "one_hot"


# --- op.Impute ----------------------------------------------------------------------------------


class ImputeParams(BaseModel):
    model_config = _STRICT
    strategy: Literal["mean", "median", "most_frequent"] = Field(
        "mean",
        title="Fill with",
        description="What replaces a missing value, measured on the training rows: the mean or median "
        "(number columns), or the most frequent value (any column).",
    )
    columns: list[str] = COLUMNS_FIELD


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
        return chosen_columns(params.columns, columns, kind)

    def infer(self, params: ImputeParams, columns: Columns, state: dict[str, Any] | None) -> Columns:
        chosen = self._targets(params, columns)
        return replace_columns(columns, {c.name: c.model_copy(update={"missing": 0}) for c in chosen})

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

    script_functions = '''
def fit_impute(
    columns: Columns, names: list[str], strategy: str
) -> dict[str, float | str | None]:
    """What fills each column's gaps: the mean, median or most frequent value of its
    present training values (0 for a number column with none)."""
    fill: dict[str, float | str | None] = {}
    for name in names:
        values = columns[name]
        if values.dtype.kind == "f":
            present = values[~np.isnan(values)]
            if len(present) == 0:
                fill[name] = 0.0
            elif strategy == "mean":
                fill[name] = float(present.mean())
            elif strategy == "median":
                fill[name] = float(np.median(present))
            else:
                uniques, counts = np.unique(present, return_counts=True)
                fill[name] = float(uniques[int(np.argmax(counts))])
        else:
            texts = [v for v in values if v is not None]
            if texts:
                texts = np.asarray(texts, dtype=str)
                uniques, counts = np.unique(texts, return_counts=True)
                fill[name] = str(uniques[int(np.argmax(counts))])
            else:
                fill[name] = None
    return fill


def impute(columns: Columns, fill: dict[str, float | str | None]) -> Columns:
    out = dict(columns)
    for name, value in fill.items():
        values = columns[name]
        if values.dtype.kind == "f":
            out[name] = np.where(np.isnan(values), float(value or 0.0), values)
        else:
            filled = [value if v is None else v for v in values]
            out[name] = np.array(filled, dtype=object)
    return out
'''

    def script_step(self, params: ImputeParams) -> tuple[str, str]:
        # "list" names every column: the most frequent value fills categories too.
        every = "list" if params.strategy == "most_frequent" else "number_columns"
        return (
            f"fit_impute(train, {script_columns(params.columns, every)}, {json.dumps(params.strategy)})",
            "impute",
        )


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
        check_known(params.columns, columns)
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

    script_functions = '''
def all_but(columns: Columns, names: list[str]) -> list[str]:
    """The names of the columns not listed, in table order."""
    return [name for name in columns if name not in names]


def select(columns: Columns, names: list[str]) -> Columns:
    """Only the named columns, in that order."""
    return {name: columns[name] for name in names}
'''

    def script_step(self, params: SelectColumnsParams) -> tuple[str, str]:
        listed = json.dumps(list(dict.fromkeys(params.columns)), ensure_ascii=False)
        return (listed if params.mode == "keep" else f"all_but(train, {listed})"), "select"


__all__ = [
    "Impute",
    "ImputeParams",
    "OneHot",
    "OneHotParams",
    "SelectColumns",
    "SelectColumnsParams",
    "Standardize",
    "StandardizeParams",
]
