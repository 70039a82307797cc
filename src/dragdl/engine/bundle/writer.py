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

import torch
import torchvision

import dragdl
from dragdl.engine.bundle.spec import MANIFEST_NAME, WEIGHTS_NAME, Manifest, Versions
from dragdl.engine.compile.plan import Plan
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.base import BundleFacts
from dragdl.engine.inputs.sections import DatasetDescription
from dragdl.engine.network.module import GraphModule

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
    facts = BundleFacts(
        source=plan.source,
        info=info,
        network_input=plan.input_shape,
        operators=plan.prepared.operators,
        fitted={**(plan.prepared.fitted or {}), **fitted},
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
            size=list(info.size) if info.size is not None else None,
            shape=list(info.shape) if info.shape is not None else None,
        ),
        # What a raw sample must become before the network (input, eval_transforms, preprocessing,
        # and any section of the input type's own): the dataset's input type writes it.
        **plan.input_type.bundle_fields(facts),
        metrics={key: report[key] for key in _METRIC_KEYS if key in report},
        weights=weights_entry(weights),
        versions=current_versions(),
        task=plan.task.name,
        output_scale=plan.model.output_scale if isinstance(plan.model, GraphModule) else None,
        trained_with=_trained_with(report),
    )


def _trained_with(report: Mapping[str, Any]) -> dict[str, str] | None:
    fast_path = report.get("fast_path")
    if not isinstance(fast_path, Mapping):
        return None
    return {"precision": str(fast_path["precision"]), "memory_format": str(fast_path["memory_format"])}


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
