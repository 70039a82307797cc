"""compile(graph) -> Plan: the dataset, the operator stages, the network and the train config.

Same graph + same seed -> same Plan (the network is initialised from the seed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dragdl.engine.analysis.validate import Analysis, analyze
from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo, Source
from dragdl.engine.data.stages import OpStage
from dragdl.engine.data.table_pipeline import TableStep
from dragdl.engine.graph.errors import GraphError, GraphInvalid, NodeError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.base import Fitted, InputType, Prepared
from dragdl.engine.network.module import GraphModule
from dragdl.engine.nodes.base import DatasetNode, LayerNode, ModelNode, OperatorNode, Shape
from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.settings import TrainSettings


@dataclass
class Plan:
    graph: Graph
    analysis: Analysis
    source: Source
    input_type: InputType
    """The dataset node's input type: it runs the operators and batches the data."""
    prepared: Prepared
    """The graph's data operators, ready for the input type's pipeline."""
    model: nn.Module
    config: TrainSettings
    classes: list[str]
    input_shape: Shape
    """Per-sample shape entering the network, e.g. (1, 28, 28)."""
    task: TaskKind
    targets: np.ndarray
    """The task kind's training target per sample (int64 class index or float32 value)."""

    @property
    def fitted(self) -> Fitted | None:
        """What operators learned before the network was built (a table's); None if nothing did."""
        return self.prepared.fitted

    @property
    def stages(self) -> list[OpStage]:
        """The operators that are image stages, in order (what the feature cache and the image bundle
        sections read)."""
        return [op for op in self.prepared.operators if isinstance(op, OpStage)]

    @property
    def table_steps(self) -> tuple[TableStep, ...]:
        """The operators that are table steps, in order (the table bundle section's)."""
        return tuple(op for op in self.prepared.operators if isinstance(op, TableStep))


def compile_graph(
    raw: dict[str, Any] | Graph,
    ctx: DataContext,
    overrides: dict[str, Any] | None = None,
    *,
    inspect_only: bool = False,
) -> Plan:
    """Validate, then build every torch object. Raises GraphInvalid with all errors.

    `overrides` replaces train params (for example `{"epochs": 1}` from the CLI). `inspect_only`
    builds the network on the meta device (shapes, no memory): for a caller that only reads the
    plan (the code generator), never for one that trains it.
    """
    analysis = _checked(raw, ctx, overrides)
    structure = analysis.structure
    assert structure.dataset_id is not None and structure.train_id is not None
    config = structure.nodes[structure.train_id].params
    task = structure.task
    assert isinstance(config, TrainSettings) and task is not None

    dataset_node = structure.nodes[structure.dataset_id]
    assert isinstance(dataset_node.kind, DatasetNode) and dataset_node.params is not None
    try:
        source = dataset_node.kind.open(dataset_node.params, ctx)
        targets = task.targets(source)
    except DatasetError as exc:
        raise GraphInvalid(
            [GraphError(code=exc.code, message=exc.message, node_id=structure.dataset_id, field=exc.field)]
        ) from exc

    train = task.split(targets, config.val_split, config.test_split, config.seed, source.test_indices).train
    input_type = dataset_node.kind.input_type
    operators = _operators(analysis)
    with _node_errors(structure.dataset_id):
        prepared = input_type.prepare(source, operators, train)
    if prepared.fitted is not None:
        # Operators that learned from the training rows before the network is built (a One-hot's
        # width is the number of categories it saw there): the shapes after them follow from that.
        analysis = _checked(raw, ctx, overrides, source.info, prepared.fitted)
        structure = analysis.structure
    torch.manual_seed(config.seed)
    with torch.device("meta") if inspect_only else contextlib.nullcontext():
        model = build_network(analysis)
    # A regressor's output is mapped back from the standardized target it learns (training rows only).
    model.set_output_scale(task.output_scale(config, targets[train]))
    network_input = structure.network_input
    assert network_input is not None and analysis.dataset_info is not None
    return Plan(
        graph=analysis.graph,
        analysis=analysis,
        source=source,
        input_type=input_type,
        prepared=prepared,
        model=model,
        config=config,
        classes=list(analysis.dataset_info.classes),
        input_shape=analysis.shapes[network_input],
        task=task,
        targets=targets,
    )


def _checked(
    raw: dict[str, Any] | Graph,
    ctx: DataContext,
    overrides: dict[str, Any] | None,
    dataset_info: DatasetInfo | None = None,
    fitted: dict[str, dict[str, Any]] | None = None,
) -> Analysis:
    analysis = analyze(raw, ctx, dataset_info, fitted)
    if overrides:
        _apply_overrides(analysis, overrides)
    if analysis.errors:
        raise GraphInvalid(analysis.errors)
    return analysis


def compile_network(
    raw: dict[str, Any] | Graph,
    dataset_info: DatasetInfo,
    fitted: dict[str, dict[str, Any]] | None = None,
) -> tuple[nn.Module, Analysis]:
    """Rebuild only the network of a graph, from a stored dataset description (no dataset needed).

    Used to load trained bundles: the weights come from the bundle, so the seed does not matter;
    `fitted` is what a table graph's operators learned (the bundle keeps it).
    """
    ctx = DataContext(data_dir=Path("."), allow_download=False)
    analysis = analyze(raw, ctx, dataset_info=dataset_info, fitted=fitted)
    if analysis.errors:
        raise GraphInvalid(analysis.errors)
    return build_network(analysis), analysis


def _apply_overrides(analysis: Analysis, overrides: dict[str, Any]) -> None:
    structure = analysis.structure
    if structure.train_id is None:
        return
    info = structure.nodes[structure.train_id]
    merged = {**info.node.params, **overrides}
    params, errors = info.kind.parse_params(merged, structure.train_id)
    analysis.errors.extend(errors)
    info.params = params
    info.node = info.node.model_copy(update={"params": merged})


def _operators(analysis: Analysis) -> list[Any]:
    """The pipeline's operator nodes as the runtime objects their input type runs, in order."""
    structure = analysis.structure
    operators = []
    for node_id in structure.pipeline:
        info = structure.nodes[node_id]
        kind = info.kind
        assert isinstance(kind, OperatorNode) and info.params is not None
        in_shape = analysis.shapes[structure.inputs[node_id][0]]
        with _node_errors(node_id):
            operators.append(kind.operator(node_id, info.params, in_shape, info.label))
    return operators


def build_network(analysis: Analysis) -> GraphModule:
    """The layer/model nodes between the pipeline and the train node, as a GraphModule."""
    structure = analysis.structure
    network_input = structure.network_input
    assert network_input is not None and structure.train_id is not None
    layers: dict[str, nn.Module] = {}
    order: list[tuple[str, tuple[str, ...]]] = []
    for node_id in structure.order:
        info = structure.nodes[node_id]
        kind = info.kind
        if not isinstance(kind, LayerNode | ModelNode):
            continue
        assert info.params is not None
        sources = structure.inputs[node_id]
        in_shapes = [analysis.shapes[s] for s in sources]
        shape_ctx = analysis.shape_context(node_id)
        with _node_errors(node_id):
            if isinstance(kind, LayerNode):
                layers[node_id] = kind.build(info.params, in_shapes, shape_ctx)
            else:
                layers[node_id] = kind.build(info.params, in_shapes[0], shape_ctx)
        order.append((node_id, tuple(GraphModule.INPUT if s == network_input else s for s in sources)))
    output = structure.inputs[structure.train_id][0]
    return GraphModule(layers, GraphModule.plan_steps(order, output), output)


@contextmanager
def _node_errors(node_id: str) -> Iterator[None]:
    """A node that refuses to build is reported like a validation error on that node."""
    try:
        yield
    except NodeError as exc:
        raise GraphInvalid([exc.to_graph_error(node_id)]) from exc
    except DatasetError as exc:
        raise GraphInvalid(
            [GraphError(code=exc.code, message=exc.message, node_id=node_id, field=exc.field)]
        ) from exc
