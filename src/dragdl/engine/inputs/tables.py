"""Tables: rows of numbers and categories, reaching the network as (F,) float features.

Table operators learn on the training rows before the network is built (a One-hot's width is the
number of categories it saw), and the table becomes one (N, F) tensor computed once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dragdl.engine.data.base import DatasetInfo, ImageSource
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.table_pipeline import TableStep, build_table_pipeline, fit_table_steps
from dragdl.engine.data.tables import TableSource
from dragdl.engine.inputs.base import BatchSettings, InputType, Prepared, Shape


class Table(InputType):
    name: ClassVar[str] = "table"
    title: ClassVar[str] = "Table"
    export_input_name: ClassVar[str] = "features"

    def edge_label(self, shape: Shape) -> str:
        if len(shape) == 1 and shape[0] is not None:
            return f"{shape[0]} feature{'' if shape[0] == 1 else 's'}"
        return super().edge_label(shape)

    def sample_shape(self, info: DatasetInfo) -> Shape:
        return (len(info.columns),)

    def summary(self, info: DatasetInfo) -> dict[str, Any]:
        return {"channels": info.channels, "size": None, "columns": list(info.columns), "target": info.target}

    def prepare(self, source: ImageSource, operators: Sequence[Any], train_rows: np.ndarray) -> Prepared:
        table, steps = _table(source), _steps(operators)
        return Prepared(tuple(steps), fit_table_steps(table.features, steps, train_rows))

    def pipeline(
        self, source: ImageSource, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        assert prepared.fitted is not None  # `prepare` fitted the operators on the training rows
        return build_table_pipeline(
            _table(source),
            splits,
            _steps(prepared.operators),
            prepared.fitted,
            settings.targets,
            settings.batch_size,
            settings.seed,
            settings.device,
        )


def _table(source: ImageSource) -> TableSource:
    if not isinstance(source, TableSource):
        raise TypeError(f"a table input needs a table source, not {type(source).__name__}")
    return source


def _steps(operators: Sequence[Any]) -> list[TableStep]:
    steps = list(operators)
    for step in steps:
        if not isinstance(step, TableStep):
            raise TypeError(f"a table input takes table operators, not {type(step).__name__}")
    return steps


TABLE = Table()
