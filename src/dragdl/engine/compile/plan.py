"""compile(graph) -> Plan: the dataset, the operator stages, the network and the train config.

Same graph + same seed -> same Plan (the network is initialised from the seed).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dragdl.engine.analysis.validate import Analysis, analyze
from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo, ImageSource
from dragdl.engine.data.stages import OpStage
from dragdl.engine.data.table_pipeline import TableStep, fit_table_steps
from dragdl.engine.data.tables import TableSource
from dragdl.engine.graph.errors import GraphError, GraphInvalid, NodeError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.network.module import GraphModule
from dragdl.engine.nodes.base import DatasetNode, LayerNode, ModelNode, OpNode, Shape
from dragdl.engine.nodes.tables import TableOpNode
from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.settings import TrainSettings


@dataclass
class Plan:
    graph: Graph
    analysis: Analysis
    source: ImageSource
    stages: list[OpStage]
    model: nn.Module
    config: TrainSettings
    classes: list[str]
    input_shape: Shape
    """Per-sample shape entering the network, e.g. (1, 28, 28)."""
    task: TaskKind
    targets: np.ndarray
    """The task kind's training target per sample (int64 class index or float32 value)."""
    table_steps: tuple[TableStep, ...] = ()
    """A table graph's operators, in order (its `stages` are empty)."""
    fitted: dict[str, dict[str, Any]] | None = None
    """What the table operators learned on the training rows (None for image graphs)."""


def compile_graph(
    raw: dict[str, Any] | Graph,
    ctx: DataContext,
    overrides: dict[str, Any] | None = None,
) -> Plan:
    """Validate, then build every torch object. Raises GraphInvalid with all errors.

    `overrides` replaces train params (for example `{"epochs": 1}` from the CLI).
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

    fitted: dict[str, dict[str, Any]] | None = None
    steps: tuple[TableStep, ...] = ()
    train = task.split(targets, config.val_split, config.test_split, config.seed, source.test_indices).train
    if isinstance(source, TableSource):
        # Table operators learn from the training rows before the network is built: a One-hot's
        # width is the number of categories it saw there.
        steps = table_steps(analysis)
        with _node_errors(structure.dataset_id):
            fitted = fit_table_steps(source.features, steps, train)
        analysis = _checked(raw, ctx, overrides, source.info, fitted)
        structure = analysis.structure
    stages = [] if isinstance(source, TableSource) else _build_stages(analysis)
    torch.manual_seed(config.seed)
    model = build_network(analysis)
    # A regressor's output is mapped back from the standardized target it learns (training rows only).
    model.set_output_scale(task.output_scale(config, targets[train]))
    network_input = structure.network_input
    assert network_input is not None and analysis.dataset_info is not None
    return Plan(
        graph=analysis.graph,
        analysis=analysis,
        source=source,
        stages=stages,
        model=model,
        config=config,
        classes=list(analysis.dataset_info.classes),
        input_shape=analysis.shapes[network_input],
        task=task,
        targets=targets,
        table_steps=steps,
        fitted=fitted,
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


def table_steps(analysis: Analysis) -> tuple[TableStep, ...]:
    """The table operators of the pipeline, bound to their params."""
    steps = []
    for node_id in analysis.structure.pipeline:
        info = analysis.structure.nodes[node_id]
        kind, params = info.kind, info.params
        assert isinstance(kind, TableOpNode) and params is not None
        steps.append(
            TableStep(node_id=node_id, fit=partial(kind.fit, params), apply=partial(kind.apply, params))
        )
    return tuple(steps)


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


def _build_stages(analysis: Analysis) -> list[OpStage]:
    structure = analysis.structure
    stages = []
    for node_id in structure.pipeline:
        info = structure.nodes[node_id]
        kind = info.kind
        assert isinstance(kind, OpNode) and info.params is not None
        in_shape = analysis.shapes[structure.inputs[node_id][0]]
        with _node_errors(node_id):
            transform = kind.build(info.params, in_shape)
        stages.append(
            OpStage(
                node_id=node_id,
                transform=transform,
                random=kind.random,
                needs_float=kind.needs_float,
                label=info.label,
            )
        )
    return stages


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
