"""Table nodes: `dataset.table` and the table operator contract (the operators: `table_ops.py`).

A table operator works on whole columns. Those that learn something (a mean, the categories)
learn it from the training rows only (`fit`), and the state is plain JSON, so the same transform
runs again in prediction from the bundle. Every operator says what columns it outputs (`infer`),
which is how validation shows "13 features" on each edge before any row is read, and writes
itself into the exported script (`script_functions`, `script_step`).
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo
from dragdl.engine.data.table_pipeline import TableStep, table_features
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
from dragdl.engine.inputs.base import InputType
from dragdl.engine.inputs.sequence_upload import SEQUENCE_KIND
from dragdl.engine.inputs.tables import TABLE
from dragdl.engine.nodes.base import DatasetNode, OperatorNode, Shape
from dragdl.engine.nodes.registry import OptionalServerPath, P, Port, register
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
        "diabetes: a value), a CSV/TSV/Parquet file on the server, or one of your uploaded tables.",
    )
    path: OptionalServerPath = Field(
        None,
        title="Table file",
        description="A .csv, .tsv or .parquet file on the server whose first row names the columns. "
        "Relative paths are taken under the data dir.",
        # The form shows each source's own field only: 'Table file' beside an uploaded table misled.
        json_schema_extra={"x-show-if": {"source": ["file"]}},
    )
    dataset_id: str | None = Field(
        None,
        max_length=64,
        pattern=r"^[A-Za-z0-9_-]+$",
        title="Uploaded table",
        description="One of your uploaded tables (Datasets page).",
        json_schema_extra={"x-show-if": {"source": ["uploaded"]}},
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
        if entry.kind == SEQUENCE_KIND:
            raise DatasetError(
                f"dataset {params.dataset_id} is a sequence set: open it with a Sequences node "
                "(source 'uploaded')",
                field="dataset_id",
            )
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
    input_type: ClassVar[InputType] = TABLE

    def describe(self, params: TableParams, ctx: DataContext) -> DatasetInfo:
        # Tables are small: reading the file is the description (kinds and missing counts need every row).
        return open_table(params, ctx).info

    def open(self, params: TableParams, ctx: DataContext) -> TableSource:
        return open_table(params, ctx)


# --- the table operator contract ----------------------------------------------------------------


class TableOpNode(OperatorNode[P]):
    """A table -> table operator. `fit` sees the training rows only; its state is JSON."""

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

    def operator(self, node_id: str, params: P, in_shape: Shape, label: str) -> TableStep:
        return TableStep(
            node_id=node_id,
            fit=partial(self.fit, params),
            apply=partial(self.apply, params),
            type=self.type,
            params=params.model_dump(mode="json"),
            infer=partial(self.infer, params),
            source=partial(self.source, params),
        )

    def source(self, params: P, state: dict[str, Any], name: str) -> str:
        """The input column an output column is computed from (by default the column of that name)."""
        return name

    script_functions: ClassVar[str] = ""
    """The exported script's plain functions for this operator: `fit_<op>(columns, ...)` learning
    what `fit` learns, with the engine's statistics, and `<op>(columns, state)` applying it as
    `apply` does, over a dict of column arrays (float64 numbers with NaN, object arrays of text
    with None; `compile/codegen_tables.py` defines `Columns` and the helpers `take`,
    `number_columns` and `category_columns`). Written for a reader: it is the user's code."""

    def script_step(self, params: P) -> tuple[str, str]:
        """The operator in the script's `build_features`: (an expression fitting it on the training
        rows `train`, the name of the function applying its state). Raises NotImplementedError for
        an operator without script code (export refuses it as `codegen_unsupported`)."""
        raise NotImplementedError(f"{self.type} cannot be exported as code yet")


def script_columns(listed: Sequence[str], every: str) -> str:
    """The script's argument naming an operator's columns: the list, or `every(train)` when empty."""
    return json.dumps(list(listed), ensure_ascii=False) if listed else f"{every}(train)"


def check_known(names: Sequence[str], columns: Columns, field: str = "columns") -> None:
    known = [c.name for c in columns]
    for name in names:
        if name not in known:
            exc = unknown_column(name, known)
            raise NodeError("column_unknown", exc.message, field=field, column=name)


def chosen_columns(listed: Sequence[str], columns: Columns, kind: str | None) -> list[ColumnInfo]:
    """The listed columns (all of `kind` when the list is empty), checked to exist and have `kind`."""
    check_known(listed, columns)
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


def replace_columns(columns: Columns, changed: dict[str, ColumnInfo]) -> Columns:
    return tuple(changed.get(c.name, c) for c in columns)


COLUMNS_FIELD: list[str] = Field(
    default_factory=list,
    max_length=1000,
    title="Columns",
    description="Columns to work on; empty: every column it applies to.",
)


__all__ = [
    "COLUMNS_FIELD",
    "TABLE_KIND",
    "Columns",
    "TableDataset",
    "TableName",
    "TableOpNode",
    "TableParams",
    "check_known",
    "chosen_columns",
    "open_table",
    "replace_columns",
    "script_columns",
    "table_features",
]
