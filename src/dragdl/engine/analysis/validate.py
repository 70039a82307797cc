"""Graph validation: the fixed stages of ARCHITECTURE.md section 3, all errors collected.

schema -> node types -> params -> edges and port types -> cycles and reachability ->
shape inference -> cross-node rules. The result carries every node's inferred output shape so
the canvas can print shapes on edges, even when other parts of the graph are wrong.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dragdl.engine.analysis.size import check_size
from dragdl.engine.analysis.structure import Structure, check_edges, check_nodes, check_topology, parse_graph
from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo
from dragdl.engine.data.tables import missing_target_error
from dragdl.engine.graph.errors import GraphError, NodeError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.registry import find_input_type
from dragdl.engine.nodes.base import (
    DatasetNode,
    LayerNode,
    ModelNode,
    OpNode,
    Shape,
    ShapeContext,
    format_shape,
)
from dragdl.engine.nodes.tables import Columns, TableOpNode
from dragdl.engine.payloads import DatasetSummary, ValidationResult
from dragdl.engine.sweep.check import check_search
from dragdl.engine.tasks.settings import TrainSettings


@dataclass
class Analysis:
    """Everything validation learned; the compiler builds from it."""

    structure: Structure
    data_dir: Path
    """The DataContext's data dir, handed to the nodes that build from this analysis."""
    shapes: dict[str, Shape] = field(default_factory=dict)
    dataset_info: DatasetInfo | None = None
    errors: list[GraphError] = field(default_factory=list)
    warnings: list[GraphError] = field(default_factory=list)
    """Problems that leave the graph valid (severity "warning"): shown with the errors, never
    compiled into `GraphInvalid`."""
    num_outputs: int | None = None
    """Width of the network's last layer, from the task kind and the dataset (None: not known)."""
    columns: dict[str, Columns] = field(default_factory=dict)
    """The columns each table node outputs (the dataset's features, then each operator's)."""
    fitted: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """What table operators learned on the training rows, when known (compiling, bundles)."""

    @property
    def graph(self) -> Graph:
        return self.structure.graph

    def shape_context(self, node_id: str) -> ShapeContext:
        return ShapeContext(
            num_outputs=self.num_outputs,
            data_dir=self.data_dir,
            node_id=node_id,
            input_nodes=tuple(self.structure.inputs[node_id]),
        )


def analyze(
    raw: dict[str, Any] | Graph,
    ctx: DataContext,
    dataset_info: DatasetInfo | None = None,
    fitted: Mapping[str, dict[str, Any]] | None = None,
) -> Analysis:
    """Run every stage and collect all errors in `Analysis.errors`.

    `dataset_info` stands in for the dataset node's own description; a trained bundle uses it to
    rebuild its network where the dataset is not available. `fitted` is what table operators
    learned on the training rows: a One-hot's width is then the categories it saw there.
    """
    errors: list[GraphError] = []
    graph = parse_graph(raw, errors)
    if graph is None:
        analysis = Analysis(structure=Structure(graph=Graph()), data_dir=ctx.data_dir, errors=errors)
        return analysis
    structure = check_nodes(graph, errors)
    known_ids = {node.id for node in graph.nodes}
    check_edges(structure, errors, unknown_ids=known_ids - set(structure.nodes))
    check_topology(structure, errors)
    errors.extend(
        check_search(graph.search, {nid: (n.kind, n.node.params) for nid, n in structure.nodes.items()})
    )
    analysis = Analysis(structure=structure, data_dir=ctx.data_dir, errors=errors, fitted=fitted or {})
    if structure.order:
        _infer_shapes(analysis, ctx, dataset_info)
        _check_output(analysis)
        _check_missing_targets(analysis)
        check_size(analysis)
    return analysis


def validate_graph(raw: dict[str, Any] | Graph, ctx: DataContext) -> ValidationResult:
    return to_result(analyze(raw, ctx))


def to_result(analysis: Analysis) -> ValidationResult:
    info = analysis.dataset_info
    model_inputs: dict[str, dict[str, Any]] = {}
    for node_id, node in analysis.structure.nodes.items():
        if isinstance(node.kind, ModelNode) and node.params is not None:
            # A node that cannot describe itself has its problem reported by shape inference.
            with contextlib.suppress(NodeError):
                model_inputs[node_id] = node.kind.describe_input(node.params)
    task = analysis.structure.task
    # A table's numeric target has as many distinct values as rows: they are no classes to list.
    values_target = bool(
        task is not None and not task.classes_are_vocabulary and info is not None and info.target
    )
    return ValidationResult(
        ok=not analysis.errors,
        errors=analysis.errors + analysis.warnings,
        shapes={node_id: _shape_text(analysis, node_id, shape) for node_id, shape in analysis.shapes.items()},
        dataset=None if info is None else _dataset_summary(analysis, info, values_target),
        model_inputs=model_inputs,
        task=None if task is None else task.name,
    )


def _dataset_summary(analysis: Analysis, info: DatasetInfo, values_target: bool) -> DatasetSummary:
    dataset = analysis.structure.nodes[analysis.structure.dataset_id or ""].kind
    assert isinstance(dataset, DatasetNode)
    input_type = dataset.input_type
    return DatasetSummary(
        input_type=input_type.name,
        classes=[] if values_target else list(info.classes),
        count=info.count,
        missing_targets=info.missing_targets,
        missing_target_rows=list(info.missing_target_rows),
        **input_type.summary(info),
    )


def _shape_text(analysis: Analysis, node_id: str, shape: Shape) -> str:
    """How the canvas prints a node's output: as its port's input type labels it ("13 features",
    "28 x 28 seq"), else as a shape (16x28x28)."""
    outputs = analysis.structure.nodes[node_id].kind.outputs
    input_type = find_input_type(outputs[0].types[0]) if outputs else None
    return format_shape(shape) if input_type is None else input_type.edge_label(shape)


def _check_table_input(analysis: Analysis, sources: list[str]) -> None:
    """A table reaching the network must be numbers only, with no missing value (checked on the
    whole table, so that training and prediction cannot meet one later)."""
    for source in sources:
        for column in analysis.columns.get(source, ()):
            if column.kind != "number":
                raise NodeError(
                    "text_feature",
                    f"column {column.name!r} holds text (categories) and reaches this layer from {source}: "
                    "add a One-hot node before the network, or drop it with Select columns",
                    column=column.name,
                )
            if column.missing:
                raise NodeError(
                    "missing_values",
                    f"column {column.name!r} has {column.missing} missing values and reaches this layer "
                    f"from {source}: add a Fill missing values (Impute) node before the network",
                    column=column.name,
                    missing=column.missing,
                )


def _infer_shapes(analysis: Analysis, ctx: DataContext, known_dataset: DatasetInfo | None) -> None:
    """Stage 6: walk the graph in order; a node is skipped when one of its inputs has no shape."""
    structure = analysis.structure
    for node_id in structure.order:
        info = structure.nodes[node_id]
        if info.params is None:
            continue
        sources = structure.inputs[node_id]
        unconnected = bool(info.kind.inputs) and not sources  # reported by the topology stage
        if unconnected or any(source not in analysis.shapes for source in sources):
            continue
        in_shapes = [analysis.shapes[source] for source in sources]
        kind = info.kind
        try:
            if isinstance(kind, DatasetNode):
                dataset = known_dataset or kind.describe(info.params, ctx)
                analysis.dataset_info = dataset
                task = structure.task
                if task is not None:
                    analysis.num_outputs = task.output_size(dataset)  # DatasetError: on this node
                    analysis.warnings.extend(
                        warning.to_graph_error(structure.train_id, "warning")
                        for warning in task.dataset_warnings(dataset)
                    )
                analysis.columns[node_id] = dataset.columns
                analysis.shapes[node_id] = kind.input_type.sample_shape(dataset)
            elif isinstance(kind, TableOpNode):
                columns = kind.infer(info.params, analysis.columns[sources[0]], analysis.fitted.get(node_id))
                analysis.columns[node_id] = columns
                analysis.shapes[node_id] = (len(columns),)
            elif isinstance(kind, OpNode):
                analysis.shapes[node_id] = kind.infer(info.params, in_shapes[0])
            elif isinstance(kind, LayerNode):
                _check_table_input(analysis, sources)
                analysis.shapes[node_id] = kind.infer(info.params, in_shapes, analysis.shape_context(node_id))
            elif isinstance(kind, ModelNode):
                shape_ctx = analysis.shape_context(node_id)
                analysis.shapes[node_id] = kind.infer(info.params, in_shapes[0], shape_ctx)
        except NodeError as exc:
            analysis.errors.append(exc.to_graph_error(node_id))
        except DatasetError as exc:
            analysis.errors.append(
                GraphError(code=exc.code, message=exc.message, node_id=node_id, field=exc.field)
            )


def _check_output(analysis: Analysis) -> None:
    """Stage 7: the network must end in what the task kind trains: one score per class, or a value."""
    structure = analysis.structure
    train_id, task = structure.train_id, structure.task
    if train_id is None or task is None or not structure.inputs[train_id]:
        return
    last = structure.inputs[train_id][0]
    shape = analysis.shapes.get(last)
    outputs = analysis.num_outputs
    if shape is None or outputs is None or shape == (outputs,):
        return
    label = structure.nodes[last].label
    if len(shape) != 1:
        message = (
            f"the network ends with a {format_shape(shape)} feature map at {label}, but training needs "
            f"{task.expected_output(outputs)}: add Flatten (or GlobalAvgPool) and a Linear with "
            "out_features 'auto'"
        )
    else:
        message = (
            f"the network ends with {format_shape(shape)} outputs at {label}, but "
            f"{task.output_width_hint(outputs)}"
        )
    analysis.errors.append(
        GraphError(
            code=task.output_mismatch_code,
            message=message,
            node_id=last,
            field="out_features" if len(shape) == 1 else None,
            details={"shape": format_shape(shape), "classes": outputs, "task": task.name},
        )
    )


def _check_missing_targets(analysis: Analysis) -> None:
    """Stage 7: the dataset left out rows without a target; a train node may refuse them instead."""
    structure, info = analysis.structure, analysis.dataset_info
    if info is None or not info.missing_targets or structure.train_id is None:
        return
    params = structure.nodes[structure.train_id].params
    if not isinstance(params, TrainSettings) or params.missing_targets != "refuse":
        return
    column, row = info.target or "", info.missing_target_rows[0]
    refused = missing_target_error(column, row, info.missing_targets, "target")
    analysis.errors.append(
        GraphError(
            code=refused.code,
            message=f"{refused.message} ({structure.train_id} refuses rows without a target; its Rows "
            "without a target setting at drop leaves them out)",
            node_id=structure.dataset_id,
            field="target",
            details={
                "column": column,
                "row": row,
                "count": info.missing_targets,
                "train": structure.train_id,
            },
        )
    )
