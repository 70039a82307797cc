"""Tables: rows of numbers and categories, reaching the network as (F,) float features.

Table operators learn on the training rows before the network is built (a One-hot's width is the
number of categories it saw), and the table becomes one (N, F) tensor computed once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from dragdl.engine.data.base import DatasetInfo, Source
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.table_pipeline import TableStep, build_table_pipeline, fit_table_steps
from dragdl.engine.data.tables import TableSource
from dragdl.engine.inputs.base import (
    BatchSettings,
    BundleFacts,
    InputType,
    Prepared,
    Shape,
    operators_as,
    source_as,
)
from dragdl.engine.inputs.sections import InputSpec, Preprocessing, PreprocessStep, TableOp, TableSpec
from dragdl.engine.payloads import ColumnInfo


class Table(InputType):
    name: ClassVar[str] = "table"
    title: ClassVar[str] = "Table"
    export_input_name: ClassVar[str] = "features"
    samples_name: ClassVar[str] = "rows"
    upload_loose_only: ClassVar[bool] = True
    predicts_from: ClassVar[Literal["files", "rows"]] = "rows"

    def edge_label(self, shape: Shape) -> str:
        if len(shape) == 1 and shape[0] is not None:
            return f"{shape[0]} feature{'' if shape[0] == 1 else 's'}"
        return super().edge_label(shape)

    def sample_shape(self, info: DatasetInfo) -> Shape:
        return (len(info.columns),)

    def describe_sample(self, shape: Shape) -> str:
        return f"{shape[0]} column{'' if shape[0] == 1 else 's'}"

    def summary(self, info: DatasetInfo) -> dict[str, Any]:
        return {**super().summary(info), "columns": list(info.columns), "target": info.target}

    def prepare(self, source: Source, operators: Sequence[Any], train_rows: np.ndarray) -> Prepared:
        table, steps = _table(source), _steps(operators)
        return Prepared(tuple(steps), fit_table_steps(table.features, steps, train_rows))

    def pipeline(
        self, source: Source, splits: Splits, prepared: Prepared, settings: BatchSettings
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

    def bundle_fields(self, facts: BundleFacts) -> dict[str, Any]:
        """The table section (input columns, the columns a caller must give, the operators with what
        they learned), and the (F,) feature vector as the network's input."""
        info = facts.info
        assert info.target is not None
        steps = _steps(facts.operators)
        fitted = {step.node_id: dict(facts.fitted[step.node_id]) for step in steps}
        features = facts.network_input[0]
        assert features is not None
        table = TableSpec(
            columns=list(info.columns),
            inputs=required_columns(info.columns, steps, fitted),
            target=info.target,
            ops=[
                TableOp(
                    node_id=step.node_id,
                    type=step.type,
                    params=dict(step.params),
                    fitted=fitted[step.node_id],
                )
                for step in steps
            ],
            features=features,
        )
        return {
            "input": InputSpec(channels=1, size=None, network_input=[features]),
            "eval_transforms": [],
            # Clients run the operators with DragDL: they are named by type, not described by numbers.
            "preprocessing": Preprocessing(
                channels=1,
                size=None,
                steps=[PreprocessStep(op=op.type, params=op.params, fitted=op.fitted) for op in table.ops],
                portable=False,
                input_shape=[table.features],
            ),
            "table": table,
        }

    def model_fields(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """The input columns the network reads (name, kind, missing, categories) and the target."""
        table = manifest.get("table")
        if not isinstance(table, Mapping):
            return {}
        columns, inputs, target = table.get("columns"), table.get("inputs"), table.get("target")
        if isinstance(columns, list) and isinstance(inputs, list):  # only what the network reads
            columns = [c for c in columns if isinstance(c, dict) and c.get("name") in inputs]
        return {
            "input_columns": list(columns) if isinstance(columns, list) else None,
            "target": str(target) if isinstance(target, str) else None,
        }

    # -- uploads (inputs/table_upload.py) ---------------------------------------------------------

    def detect_upload(self, root: Path, options: Mapping[str, str] | None = None) -> str | None:
        """'table' for one .csv, .tsv or .parquet file sent on its own, without options."""
        from dragdl.engine.inputs.table_upload import detect_table_upload

        return detect_table_upload(root, options)

    def describe_upload(
        self, kind: str, root: Path, options: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Its columns (kinds, missing values, a few categories) and rows, every bound checked first."""
        from dragdl.engine.inputs.table_upload import describe_table_upload

        return describe_table_upload(root)


def required_columns(
    columns: Sequence[ColumnInfo], steps: Sequence[TableStep], fitted: Mapping[str, dict[str, Any]]
) -> list[str]:
    """The input columns the output of a fitted chain of table operators is computed from, in input
    order. A column dropped on the way (Select columns) is not needed to predict: the operators
    before the drop pass over a fitted column that prediction rows do not hold."""
    current = tuple(columns)
    origin = {c.name: c.name for c in current}
    for step in steps:
        assert step.infer is not None and step.source is not None  # set by TableOpNode.operator
        state = fitted[step.node_id]
        out = step.infer(current, state)
        origin = {c.name: origin[step.source(state, c.name)] for c in out}
        current = out
    needed = set(origin.values())
    return [c.name for c in columns if c.name in needed]


def _table(source: Source) -> TableSource:
    return source_as(source, TableSource, Table.name)


def _steps(operators: Sequence[Any]) -> list[TableStep]:
    return operators_as(operators, TableStep, Table.name)


TABLE = Table()
