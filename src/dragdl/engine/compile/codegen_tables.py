"""The data part of an exported script for a table graph (`dataset.table` and table operators).

The script keeps a table as the engine does (`engine/data/tables.py`): a dict of columns, float64
numbers with NaN where missing, object arrays of text (None where missing) for categories. Each
operator writes itself (`TableOpNode.script_functions`: a pair of plain functions, `fit_<op>` as
`fit` and `<op>` as `apply`; `script_step`: how `build_features` calls them); this module only
assembles them: the functions of the operators the graph uses, then `build_features`, which runs
them in graph order and stacks the float32 (N, F) network input (`data/table_pipeline.py`).
Batches are indexed out of that tensor like precomputed images. `TableScript` is the `table` input
type's writer of the data part (`codegen_inputs.py`).
"""

from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from dragdl.engine.analysis.validate import Analysis
from dragdl.engine.compile import codegen_template as tpl
from dragdl.engine.compile.codegen_format import WIDTH, statement
from dragdl.engine.compile.codegen_inputs import (
    RESERVED,
    DataPart,
    ScriptWriter,
    identifiers,
    register_script_writer,
)
from dragdl.engine.compile.codegen_tasks import TARGET_COLUMN
from dragdl.engine.data.base import DataContext, Source
from dragdl.engine.data.table_text import DECIMAL_COMMA, default_separator, file_separator
from dragdl.engine.data.tables import TableSource
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.tables import TABLE
from dragdl.engine.nodes.datasets_code import path_code
from dragdl.engine.nodes.registry import all_node_types
from dragdl.engine.nodes.tables import TableOpNode, TableParams
from dragdl.engine.nodes.tables import _table_file as table_file

if TYPE_CHECKING:
    from dragdl.engine.compile.codegen import Writer

TYPES = """
# A table: float64 numbers (NaN where missing) or text (None where missing) per column.
Columns = dict[str, np.ndarray]
Batches = Iterator[tuple[torch.Tensor, torch.Tensor]]
"""

LOAD_TABLE_HEAD = '''
# --- Data -----------------------------------------------------------------------------
def load_table() -> tuple[Columns, str]:
    """The table's columns (the target among them) and the name of the target column."""
'''

READ_COLUMN = '''
def read_column(cells: pd.Series) -> np.ndarray:
    """A column of numbers when every present cell reads as one (float64, NaN where
    missing), else of text categories (stripped; None where missing)."""
    if pd.api.types.is_bool_dtype(cells) or pd.api.types.is_numeric_dtype(cells):
        return cells.to_numpy(dtype=np.float64, na_value=np.nan)
    texts = [None if pd.isna(cell) else str(cell).strip() or None for cell in cells]
    numbers = []
    for text in texts:
        try:
            numbers.append(math.nan if text is None else float(text))
        except ValueError:
            return np.array(texts, dtype=object)
    return np.array(numbers, dtype=np.float64)
'''

COMMON = """
def take(columns: Columns, rows: np.ndarray) -> Columns:
    return {name: values[rows] for name, values in columns.items()}


def number_columns(columns: Columns) -> list[str]:
    return [name for name, values in columns.items() if values.dtype.kind == "f"]


def category_columns(columns: Columns) -> list[str]:
    return [name for name, values in columns.items() if values.dtype.kind != "f"]
"""

FEATURES = '''
def to_features(columns: Columns) -> torch.Tensor:
    """The network input: float32 (N, F), one feature per column in column order."""
    for name, values in columns.items():
        if values.dtype.kind != "f":
            raise ValueError(f"column {name!r} holds text: one-hot encode or drop it")
        if np.isnan(values).any():
            raise ValueError(f"column {name!r} has missing values: fill them (Impute)")
    parts = [values.astype(np.float32) for values in columns.values()]
    return torch.from_numpy(np.stack(parts, axis=1))
'''

WITH_TARGET = '''
def with_target(columns: Columns, target_name: str) -> Columns:
    """The rows whose target is present: {doc}"""
    target = columns[target_name]
    if target.dtype.kind == "f":
        missing = np.isnan(target)
    else:
        missing = np.array([value is None for value in target], dtype=bool)
    dropped = np.flatnonzero(missing)
    if len(dropped) == 0:
        return columns
    first = f"the target column {{target_name!r}} is empty in row {{dropped[0] + 1}}"
{tail}'''

# The train node's Rows without a target: drop (the default, as TableSource does) or refuse.
DROP_MISSING_TARGETS = """    kept = np.flatnonzero(~missing)
    if len(kept) == 0:
        raise ValueError(f"{first}, as in every row: no row has a target")
    s = "s" if len(dropped) > 1 else ""
    more = ", ..." if len(dropped) > 10 else ""
    rows = ", ".join(str(row + 1) for row in dropped[:10]) + more
    print(
        f"{len(dropped)} row{s} without a target in the column {target_name!r} "
        f"left out (row{s} {rows}); training on the other {len(kept)}"
    )
    return take(columns, kept)
"""
REFUSE_MISSING_TARGETS = """    count = len(dropped)
    raise ValueError(f"{first} ({count} rows in all); every row needs a target")
"""

SHUFFLED_BATCHES = '''
def shuffled_batches(x_all: torch.Tensor, y_all: torch.Tensor, epoch: int) -> Batches:
    """The training batches of one epoch, in an order drawn from (SEED, epoch)."""
    gen = torch.Generator().manual_seed(derive_seed(SEED, epoch, 0))
    order = torch.randperm(len(y_all), generator=gen)
    for start in range(0, len(order), BATCH_SIZE):
        rows = order[start : start + BATCH_SIZE]
        yield x_all[rows], y_all[rows]
'''

MAIN_HEAD = """

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\\n\\n")[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=Path("model.safetensors"))
    args = parser.parse_args()
    device = pick_device()
    if device.type == "cpu":
        # A table network is a few small matrices: threads cost more than they save.
        torch.set_num_threads(1)

    columns, target_name = load_table()
    columns = with_target(columns, target_name)
    target = columns.pop(target_name)
"""

MAIN_SPLITS = """    x_all = build_features(columns, train_idx)
    print(f"{x_all.shape[1]} features from {len(columns)} columns (besides the target)")

    def part(indices: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        rows = torch.from_numpy(indices)
        return x_all[rows], y_all[rows]

    val, test = part(val_idx), part(test_idx)
    train_batches = partial(shuffled_batches, *part(train_idx))
"""

STDLIB_IMPORTS = (
    "import argparse",
    "import math",
    "from collections.abc import Callable, Iterator",
    "from functools import partial",
    "from pathlib import Path",
)
THIRD_PARTY_IMPORTS = ("import numpy as np", "import torch", "from torch import nn")

_COMMON_NAMES = frozenset({"train", "columns", "take", "pd", "math", "number_columns", "category_columns"})


def reserved() -> frozenset[str]:
    """Names build_features uses: an operator's state variable (named after its node) avoids them.

    Every table operator's functions count, used or not, so a node's variable keeps its name
    whatever other operators the graph holds."""
    names = set(_COMMON_NAMES)
    for kind in all_node_types():
        if isinstance(kind, TableOpNode):
            names |= defined_names(kind.script_functions)
    return frozenset(names)


def defined_names(source: str) -> set[str]:
    """The functions a block of script code defines."""
    return {item.name for item in ast.parse(source).body if isinstance(item, ast.FunctionDef)}


def dataset_code(params: TableParams, target: str, sep: str | None = None) -> str:
    """The body of `load_table()` (top-level imports first, moved to the script's top). `sep`: the
    text table's separator as the engine detected it (`table_text`), else the name's default."""
    if params.source == "uploaded":  # the writer passes an uploaded table as its file
        raise NotImplementedError("an uploaded table cannot be exported as code yet; use source 'file'")
    name = json.dumps(target, ensure_ascii=False)
    if params.source != "file":
        loader = f"load_{params.source}"
        if params.source == "diabetes":
            last = f"columns[{name}] = bunch.target.astype(np.float64)"
        else:
            classes = "[str(bunch.target_names[t]) for t in bunch.target]"
            last = f"columns[{name}] = np.array(\n    {classes}, dtype=object\n)"
        return f"""# scikit-learn's {params.source} table; the target column: {name}.
from sklearn.datasets import {loader}

bunch = {loader}()
columns = {{
    str(name): bunch.data[:, i].astype(np.float64)
    for i, name in enumerate(bunch.feature_names)
}}
{last}
return columns, {name}
"""
    assert params.path is not None
    path = path_code(params.path)
    lower = params.path.lower()
    if lower.endswith(".parquet"):
        read = "pd.read_parquet(path)"
    else:
        separator = json.dumps(sep or default_separator(params.path))
        read = f"pd.read_csv(path, sep={separator}, dtype=str)  # cells as written"
        if separator == '";"':  # the comma is the decimal mark, as the engine reads it
            read += (
                f'\ndecimal = r"{DECIMAL_COMMA}"  # 1,5 is 1.5'
                '\nframe = frame.replace(decimal, r"\\1.\\2", regex=True)'
            )
    return f"""# A table file whose first row names the columns.
import pandas as pd

path = {path}
frame = {read}
columns = {{str(name): read_column(frame[name]) for name in frame.columns}}
return columns, {name}
"""


@dataclass(frozen=True)
class TableOp:
    node_id: str
    kind: TableOpNode[Any]
    params: BaseModel


def step_code(op: TableOp) -> str:
    """The lines of one operator (raises NotImplementedError for an operator without code)."""
    return "\n".join(step_lines(op, "state"))


def step_lines(op: TableOp, name: str) -> list[str]:
    """Lines of build_features for one operator: fit on `train`, transform `train` and `columns`."""
    fit, apply = op.kind.script_step(op.params)
    return [
        f"    # {op.node_id}: {op.kind.type.removeprefix('op.')}",
        statement(f"{name} = ", fit, 4),
        statement("train = ", f"{apply}(train, {name})", 4),
        statement("columns = ", f"{apply}(columns, {name})", 4),
    ]


def helpers(ops: Sequence[TableOp]) -> str:
    """The functions of the operators the graph uses, each once, in the order of first use."""
    used = {op.kind.type: op.kind.script_functions for op in ops}
    return "\n\n\n".join(code.strip("\n") for code in used.values() if code.strip())


def build_features(ops: Sequence[TableOp], names: dict[str, str]) -> str:
    order = ", ".join(op.node_id for op in ops) or "none"
    doc = (
        f'"""The table operators in graph order ({order}): each learns from the training rows '
        'as the operators before it left them, then transforms every row."""'
    )
    lines = [
        "def build_features(columns: Columns, train_idx: np.ndarray) -> torch.Tensor:",
        textwrap.fill(doc, WIDTH, initial_indent="    ", subsequent_indent="    "),
        "    train = take(columns, train_idx)",
    ]
    for op in ops:
        lines += step_lines(op, names[op.node_id])
    lines.append("    return to_features(columns)")
    return "\n".join(lines) + "\n"


class TableScript(ScriptWriter):
    """load_table, the operators' fit/transform functions and build_features."""

    def compile(
        self, graph: Graph | dict[str, object], ctx: DataContext, analysis: Analysis
    ) -> tuple[Analysis, Source | None]:
        # A One-hot's width is the categories of the training rows: compile as the engine does
        # (fitting the operators) for the network's exact shapes. Tables are small; the network is
        # only read, so it is built on the meta device (no memory, however wide its layers).
        from dragdl.engine.compile.plan import compile_graph

        plan = compile_graph(graph, ctx, inspect_only=True)
        return plan.analysis, plan.source

    def data(self, writer: Writer) -> DataPart:
        s = writer.structure
        assert s.dataset_id is not None and isinstance(writer.source, TableSource)
        params = s.nodes[s.dataset_id].params
        assert isinstance(params, TableParams)
        if params.source == "uploaded":
            params = params.model_copy(update={"source": "file", "path": _uploaded_file(writer, params)})
        sep = _separator(writer, params)
        body = writer.body(writer.node_code(s.dataset_id, dataset_code, params, writer.source.target, sep))
        ops = []
        for node_id in s.pipeline:
            info = s.nodes[node_id]
            assert info.params is not None and isinstance(info.kind, TableOpNode)
            ops.append(TableOp(node_id, info.kind, info.params))
            writer.node_code(node_id, step_code, ops[-1])  # codegen_unsupported
        names = identifiers([op.node_id for op in ops], RESERVED | reserved())
        data = LOAD_TABLE_HEAD + body + "\n"
        if "read_column(" in body:
            data += "\n" + READ_COLUMN
        data += "\n" + writer.blocks.split + "\n" + tpl.DERIVE_SEED + "\n" + COMMON
        data += "\n" + _with_target(writer)
        functions = helpers(ops)
        data += "\n\n" + (functions + "\n\n\n" if functions else "") + FEATURES.strip("\n")
        data += "\n\n\n" + build_features(ops, names)
        targets, target_helpers = writer.task_targets(TARGET_COLUMN)
        if target_helpers:
            data += "\n" + target_helpers
        data += "\n" + SHUFFLED_BATCHES
        summary = writer.blocks.main_summary.replace(" images", " rows")
        return DataPart(
            stdlib_imports=STDLIB_IMPORTS,
            third_party_imports=THIRD_PARTY_IMPORTS,
            types=TYPES,
            data=data,
            main=MAIN_HEAD + targets + MAIN_SPLITS + summary,
            samples="rows",
        )


def _with_target(writer: Writer) -> str:
    """`with_target`, as the train node's Rows without a target asks: rows whose target is empty
    are left out and counted (drop, as TableSource does by default) or refused."""
    train_id = writer.structure.train_id
    params = writer.structure.nodes[train_id].params if train_id is not None else None
    if getattr(params, "missing_targets", "drop") == "refuse":
        return WITH_TARGET.format(doc="a row without one is refused.", tail=REFUSE_MISSING_TARGETS)
    return WITH_TARGET.format(doc="rows without one are left out and counted.", tail=DROP_MISSING_TARGETS)


def _separator(writer: Writer, params: TableParams) -> str | None:
    """The separator the engine reads the table file with (compile_graph has read it), so that the
    script reads a ';'-separated CSV as the engine did; None when there is no text file to read."""
    from dragdl.engine.nodes.datasets import resolve_path

    if params.source != "file" or not params.path or params.path.lower().endswith(".parquet"):
        return None
    path = resolve_path(params.path, writer.ctx)
    return file_separator(path) if path.is_file() else None


def _uploaded_file(writer: Writer, params: TableParams) -> str:
    """The file of an uploaded table, where it is stored (relative to the data dir when under it:
    the script reads it as DATA_DIR / path). compile_graph has opened it already."""
    ctx = writer.ctx
    entry = ctx.uploaded[params.dataset_id or ""]
    folder = entry.path if entry.path.is_absolute() else ctx.data_dir / entry.path
    path = table_file(folder, "dataset_id").resolve()
    data_dir = ctx.data_dir.resolve()
    return str(path.relative_to(data_dir)) if path.is_relative_to(data_dir) else str(path)


register_script_writer(TABLE.name, TableScript())
