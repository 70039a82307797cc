"""The data part of an exported script for a table graph (`dataset.table` and table operators).

The script keeps a table as the engine does (`engine/data/tables.py`): a dict of columns, float64
numbers with NaN where missing, object arrays of text (None where missing) for categories. Each
operator is a pair of plain functions, `fit_<op>` (what it learns from the training rows, as
`TableOpNode.fit`) and `<op>` (the transform, as `apply`), written out so a user can read them;
`build_features` runs them in graph order and stacks the float32 (N, F) network input
(`data/table_pipeline.py`). Batches are indexed out of that tensor like precomputed images.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from dragdl.engine.compile.codegen_format import WIDTH, statement
from dragdl.engine.nodes.datasets_code import path_code
from dragdl.engine.nodes.tables import ImputeParams, SelectColumnsParams, TableParams

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

HELPERS: dict[str, str] = {
    "op.Standardize": '''
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
''',
    "op.OneHot": '''
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
''',
    "op.Impute": '''
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
''',
    "op.SelectColumns": '''
def all_but(columns: Columns, names: list[str]) -> list[str]:
    """The names of the columns not listed, in table order."""
    return [name for name in columns if name not in names]


def select(columns: Columns, names: list[str]) -> Columns:
    """Only the named columns, in that order."""
    return {name: columns[name] for name in names}
''',
}

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

CLASS_LABELS = '''
def class_labels(target: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Class indices into the sorted distinct targets (numbers sorted as numbers)."""
    values = target if target.dtype.kind == "f" else target.astype(str)
    distinct, labels = np.unique(values, return_inverse=True)
    classes = [
        str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        for v in distinct.tolist()
    ]
    return labels.astype(np.int64).reshape(-1), classes
'''

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
    target = columns.pop(target_name)
"""

CLASSIFICATION_TARGETS = """    labels, classes = class_labels(target)
    train_idx, val_idx, test_idx = split_indices(labels, None)
    y_all = torch.from_numpy(labels)
"""

REGRESSION_TARGETS = """    targets = target.astype(np.float32)  # regression: the target column's numbers
    train_idx, val_idx, test_idx = split_indices(len(targets), None)
    y_all = torch.from_numpy(targets)
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

RESERVED = frozenset(
    {"train", "columns", "take", "select", "all_but", "impute", "standardize", "one_hot", "pd", "math"}
    | {"fit_standardize", "fit_one_hot", "fit_impute", "number_columns", "category_columns"}
)
"""Names build_features uses: an operator's state variable (named after its node) avoids them."""


def dataset_code(params: TableParams, target: str) -> str:
    """The body of `load_table()` (top-level imports first, moved to the script's top)."""
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
        sep = '"\\t"' if lower.endswith(".tsv") else '","'
        read = f"pd.read_csv(path, sep={sep}, dtype=str)  # cells as written"
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
    type: str
    params: BaseModel


def _names(listed: Sequence[str], fallback: str) -> str:
    return json.dumps(list(listed), ensure_ascii=False) if listed else f"{fallback}(train)"


def step_code(op: TableOp) -> str:
    """The lines of one operator (raises NotImplementedError for an operator without code)."""
    return "\n".join(step_lines(op, "state"))


def step_lines(op: TableOp, name: str) -> list[str]:
    """Lines of build_features for one operator: fit on `train`, transform `train` and `columns`."""
    p: Any = op.params
    if op.type == "op.Standardize":
        fit, apply = f"fit_standardize(train, {_names(p.columns, 'number_columns')})", "standardize"
    elif op.type == "op.OneHot":
        fit, apply = f"fit_one_hot(train, {_names(p.columns, 'category_columns')})", "one_hot"
    elif op.type == "op.Impute":
        assert isinstance(p, ImputeParams)
        every = "list" if p.strategy == "most_frequent" else "number_columns"
        fit = f"fit_impute(train, {_names(p.columns, every)}, {json.dumps(p.strategy)})"
        apply = "impute"
    elif op.type == "op.SelectColumns":
        assert isinstance(p, SelectColumnsParams)
        listed = json.dumps(list(dict.fromkeys(p.columns)), ensure_ascii=False)
        fit = listed if p.mode == "keep" else f"all_but(train, {listed})"
        apply = "select"
    else:
        raise NotImplementedError(f"{op.type} cannot be exported as code yet")
    return [
        f"    # {op.node_id}: {op.type.removeprefix('op.')}",
        statement(f"{name} = ", fit, 4),
        statement("train = ", f"{apply}(train, {name})", 4),
        statement("columns = ", f"{apply}(columns, {name})", 4),
    ]


def helpers(ops: Sequence[TableOp]) -> str:
    """The operator functions the graph uses, in a fixed order."""
    used = {op.type for op in ops}
    return "\n\n\n".join(code.strip("\n") for kind, code in HELPERS.items() if kind in used)


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
