"""One process trains a compiled plan: split, data pipeline (or the feature cache), trainer, bundle.

A frozen pretrained backbone after deterministic operators trains through the feature cache
(`run/feature_cache.py`): its features are computed once and only the head is trained. A worker of
a distributed run (`run/distributed.py`) trains its share here too, with its `group`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from dragdl.engine.bundle.writer import write_bundle
from dragdl.engine.compile.plan import Plan
from dragdl.engine.data.base import DataContext, DatasetInfo
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import NonFiniteError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.inputs.base import BatchSettings
from dragdl.engine.run.feature_cache import feature_pipeline, frozen_backbone
from dragdl.engine.train.callbacks import Callback, NoticeCallback
from dragdl.engine.train.checkpoint import CheckpointStore
from dragdl.engine.train.collective import Group, StopSignal
from dragdl.engine.train.device import TrainError, resolve_device
from dragdl.engine.train.reporter import Reporter
from dragdl.engine.train.trainer import TrainResult, train


def split(plan: Plan) -> Splits:
    """Train/val/test indices for the plan's train config."""
    config = plan.config
    return plan.task.split(
        plan.targets, config.val_split, config.test_split, config.seed, plan.source.test_indices
    )


def prepare(plan: Plan) -> Pipeline:
    """Split the dataset and set up batching for the plan's train config, as its input type does."""
    config = plan.config
    settings = BatchSettings(
        batch_size=config.batch_size,
        seed=config.seed,
        device=resolve_device(config.device),
        targets=plan.targets,
    )
    return plan.input_type.pipeline(plan.source, split(plan), plan.prepared, settings)


def trained_graph(plan: Plan) -> Graph:
    """The plan's graph with its train node's params as the run resolved them (graph.json, bundle)."""
    graph = plan.graph.model_copy(deep=True)
    graph.node(plan.analysis.structure.train_id or "").params = plan.config.model_dump()
    return graph


def train_plan(
    plan: Plan,
    ctx: DataContext,
    out_dir: Path,
    reporter: Reporter,
    *,
    resume: bool = False,
    stop: StopSignal | None = None,
    feature_cache: bool = True,
    group: Group | None = None,
    checkpoints: CheckpointStore | None = None,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train `plan` in this process (alone, or as one worker of `group`), writing checkpoints,
    report.json, model.safetensors and, when it succeeds on the main worker, model.json."""
    frozen = frozen_backbone(plan) if feature_cache else None
    try:
        if frozen is None:
            model, pipeline = plan.model, prepare(plan)
        else:
            model, pipeline = (
                frozen.head_network(),
                feature_pipeline(plan, frozen, split(plan), ctx, reporter),
            )
    except NonFiniteError as exc:  # found while preparing the data: fails the run like one in training
        raise TrainError(exc.code, exc.message, exc.node_id) from exc
    try:
        with _cpu_threads(pipeline.cpu_threads):
            result = train(
                model,
                pipeline,
                plan.config,
                plan.classes,
                out_dir,
                reporter,
                task=plan.task,
                resume=resume,
                stop=stop,
                network=plan.model,
                group=group,
                checkpoints=checkpoints,
                callbacks=[NoticeCallback(dataset_notices(plan.source.info)), *callbacks],
            )
    finally:
        pipeline.close()
    if result.status == "succeeded" and (group is None or group.main):
        write_bundle(out_dir, trained_graph(plan), plan, pipeline.fitted, read_report(result))
    return result


def dataset_notices(info: DatasetInfo) -> list[str]:
    """What the training log says first about the data: the rows left out for want of a target."""
    if not info.missing_targets:
        return []
    rows = ", ".join(str(row) for row in info.missing_target_rows)
    more = ", ..." if info.missing_targets > len(info.missing_target_rows) else ""
    plural = "s" if info.missing_targets > 1 else ""
    return [
        f"{info.missing_targets} row{plural} without a target in the column {info.target!r} left out "
        f"(row{plural} {rows}{more}); training on the other {info.count}"
    ]


@contextmanager
def _cpu_threads(count: int | None) -> Iterator[None]:
    """PyTorch's intra-op threads set to `count` for the training, then put back."""
    if count is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def read_report(result: TrainResult) -> dict[str, Any]:
    if result.report_path is None or not result.report_path.exists():
        return {"status": result.status, "history": result.history}
    report: dict[str, Any] = json.loads(result.report_path.read_text(encoding="utf-8"))
    return report
