"""Writing model.json at the end of a successful run."""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torchvision
from pydantic import BaseModel

import dragdl
from dragdl.engine.bundle.image import POLARITY_SAMPLE, Background, dataset_background
from dragdl.engine.bundle.spec import (
    MANIFEST_NAME,
    WEIGHTS_NAME,
    DatasetDescription,
    EvalTransform,
    InputSpec,
    Manifest,
    Preprocessing,
    PreprocessStep,
    TableOp,
    TableSpec,
    Versions,
)
from dragdl.engine.compile.plan import Plan
from dragdl.engine.data.base import ImageSource
from dragdl.engine.graph.spec import Graph
from dragdl.engine.network.module import GraphModule
from dragdl.engine.nodes.base import OpNode
from dragdl.engine.nodes.tables import TableOpNode, required_columns

_METRIC_KEYS = (
    "test",
    "averages",
    "best_epoch",
    "best_score",
    "monitor",
    "epochs_completed",
    "stopped_early",
)


def write_bundle(
    out_dir: Path,
    graph: Graph,
    plan: Plan,
    fitted: Mapping[str, Mapping[str, Any]],
    report: Mapping[str, Any],
) -> Path:
    """Write out_dir/model.json next to the trainer's model.safetensors; returns its path.

    `graph` is the graph as trained (train params with overrides applied), `fitted` what the
    pipeline's fittable stages learned, `report` the content of report.json.
    """
    manifest = build_manifest(out_dir / WEIGHTS_NAME, graph, plan, fitted, report)
    path = out_dir / MANIFEST_NAME
    write_manifest(path, manifest)
    return path


def write_manifest(path: Path, manifest: Manifest) -> None:
    # Written to a temporary file and renamed, so a reader never sees half a manifest.
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(manifest.model_dump_json(indent=2, by_alias=True), encoding="utf-8")
    os.replace(tmp, path)


def build_manifest(
    weights: Path,
    graph: Graph,
    plan: Plan,
    fitted: Mapping[str, Mapping[str, Any]],
    report: Mapping[str, Any],
) -> Manifest:
    analysis = plan.analysis
    structure = analysis.structure
    info = analysis.dataset_info
    assert info is not None and structure.dataset_id is not None
    dataset_node = structure.nodes[structure.dataset_id]
    size = list(info.size) if info.size is not None else None
    table = table_spec(plan)
    input_spec = InputSpec(
        channels=3 if info.channels == 3 else 1,
        size=size,
        network_input=list(plan.input_shape),
        background=None if table is not None else training_background(plan.source),
    )
    transforms: list[EvalTransform] = []
    steps: list[dict[str, Any] | None] = []
    for stage in plan.stages:
        if stage.random:
            continue
        node = structure.nodes[stage.node_id]
        assert node.params is not None
        stats = fitted.get(stage.node_id)
        transforms.append(
            EvalTransform(
                node_id=stage.node_id,
                type=node.kind.type,
                params=node.params.model_dump(mode="json"),
                in_shape=list(analysis.shapes[structure.inputs[stage.node_id][0]]),
                needs_float=stage.needs_float,
                fitted=dict(stats) if stats is not None else None,
            )
        )
        kind = node.kind
        assert isinstance(kind, OpNode)
        steps.append(
            kind.portable_step(node.params, analysis.shapes[structure.inputs[stage.node_id][0]], stats)
        )
    return Manifest(
        name=graph.name,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        graph=graph,
        classes=list(plan.classes),
        dataset=DatasetDescription(
            node_id=structure.dataset_id,
            type=dataset_node.kind.type,
            classes=list(info.classes),
            count=info.count,
            channels=info.channels,
            size=size,
        ),
        input=input_spec,
        eval_transforms=transforms,
        preprocessing=describe_preprocessing(input_spec, transforms, steps)
        if table is None
        else table_preprocessing(table),
        metrics={key: report[key] for key in _METRIC_KEYS if key in report},
        weights=weights_entry(weights),
        versions=current_versions(),
        task=plan.task.name,
        output_scale=plan.model.output_scale if isinstance(plan.model, GraphModule) else None,
        trained_with=_trained_with(report),
        table=table,
    )


def _trained_with(report: Mapping[str, Any]) -> dict[str, str] | None:
    fast_path = report.get("fast_path")
    if not isinstance(fast_path, Mapping):
        return None
    return {"precision": str(fast_path["precision"]), "memory_format": str(fast_path["memory_format"])}


def table_spec(plan: Plan) -> TableSpec | None:
    """The table section of a table model (None for images): input columns and fitted operators."""
    if plan.fitted is None:
        return None
    analysis = plan.analysis
    info = analysis.dataset_info
    assert info is not None and info.target is not None
    ops = []
    chain: list[tuple[TableOpNode[Any], BaseModel, dict[str, Any]]] = []
    for step in plan.table_steps:
        node = analysis.structure.nodes[step.node_id]
        assert node.params is not None and isinstance(node.kind, TableOpNode)
        chain.append((node.kind, node.params, plan.fitted[step.node_id]))
        ops.append(
            TableOp(
                node_id=step.node_id,
                type=node.kind.type,
                params=node.params.model_dump(mode="json"),
                fitted=plan.fitted[step.node_id],
            )
        )
    features = plan.input_shape[0]
    assert features is not None
    return TableSpec(
        columns=list(info.columns),
        inputs=required_columns(info.columns, chain),
        target=info.target,
        ops=ops,
        features=features,
    )


def table_preprocessing(table: TableSpec) -> Preprocessing:
    """A table model's preprocessing: its operators by type (clients run them with DragDL)."""
    return Preprocessing(
        channels=1,
        size=None,
        steps=[PreprocessStep(op=op.type, params=op.params, fitted=op.fitted) for op in table.ops],
        portable=False,
        input_shape=[table.features],
    )


def training_background(source: ImageSource) -> Background:
    """The paper of the dataset's images, from up to POLARITY_SAMPLE of them spread over it."""
    count = len(source)
    indices = np.unique(np.linspace(0, count - 1, min(count, POLARITY_SAMPLE)).astype(np.int64))
    return dataset_background(source.image(int(i)) for i in indices)


def weights_entry(path: Path) -> dict[str, Any]:
    return {"file": path.name, "sha256": file_sha256(path), "bytes": path.stat().st_size}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def current_versions() -> Versions:
    try:
        version = metadata.version("dragdl")
    except metadata.PackageNotFoundError:
        version = dragdl.__version__
    return Versions(
        dragdl=version,
        torch=torch.__version__,
        torchvision=torchvision.__version__,
        python=platform.python_version(),
    )


def describe_preprocessing(
    spec: InputSpec, transforms: list[EvalTransform], portable_steps: list[dict[str, Any] | None]
) -> Preprocessing:
    """The evaluation path as numbers, for clients that cannot run the catalog (a browser, ONNX users).

    `portable_steps` are what each transform's node declares (`OpNode.portable_step`); a transform
    without one is named by its type and makes the path not portable. The top-level mean and std
    are the last step's that has them (a Normalize's).
    """
    steps: list[PreprocessStep] = []
    portable = True
    floated = False
    mean: list[float] | None = None
    std: list[float] | None = None
    for entry, declared in zip(transforms, portable_steps, strict=True):
        if entry.needs_float and not floated:
            steps.append(PreprocessStep(op="to_float", scale=1 / 255))
            floated = True
        if declared is None:
            steps.append(PreprocessStep(op=entry.type, params=entry.params))
            portable = False
            continue
        steps.append(PreprocessStep(**declared))
        if "mean" in declared and "std" in declared:
            mean, std = list(declared["mean"]), list(declared["std"])
    if not floated:
        steps.append(PreprocessStep(op="to_float", scale=1 / 255))
    return Preprocessing(
        channels=spec.channels,
        size=spec.size,
        background=spec.background,
        steps=steps,
        portable=portable,
        input_shape=spec.network_input,
        mean=mean,
        std=std,
    )
