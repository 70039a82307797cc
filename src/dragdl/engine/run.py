"""Graph in, trained model out: compile, split, build the data pipeline, train.

A frozen pretrained backbone after deterministic operators trains through the feature cache
(`train/feature_cache.py`): its features are computed once and only the head is trained.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from dragdl.engine.bundle.writer import write_bundle
from dragdl.engine.compile.plan import Plan, compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.pipeline import Pipeline, build_pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import NonFiniteError
from dragdl.engine.data.table_pipeline import build_table_pipeline
from dragdl.engine.data.tables import TableSource
from dragdl.engine.graph.spec import Graph
from dragdl.engine.train.checkpoint import CheckpointStore
from dragdl.engine.train.collective import Group, StopSignal
from dragdl.engine.train.device import TrainError, resolve_device
from dragdl.engine.train.feature_cache import feature_pipeline, frozen_backbone
from dragdl.engine.train.reporter import Reporter
from dragdl.engine.train.trainer import TrainResult, train


def split(plan: Plan) -> Splits:
    """Train/val/test indices for the plan's train config."""
    config = plan.config
    return plan.task.split(
        plan.targets, config.val_split, config.test_split, config.seed, plan.source.test_indices
    )


def prepare(plan: Plan) -> Pipeline:
    """Split the dataset and set up batching for the plan's train config.

    The one place where tables and images part: a table's operators were fitted when the plan was
    compiled, and its rows become one (N, F) tensor; images go through the operator stages.
    """
    config = plan.config
    if isinstance(plan.source, TableSource):
        assert plan.fitted is not None
        return build_table_pipeline(
            plan.source,
            split(plan),
            plan.table_steps,
            plan.fitted,
            plan.targets,
            config.batch_size,
            config.seed,
            resolve_device(config.device),
        )
    return build_pipeline(
        plan.source,
        split(plan),
        plan.stages,
        config.batch_size,
        config.seed,
        resolve_device(config.device),
        targets=plan.targets,
    )


def run_graph(
    raw: dict[str, Any] | Graph,
    ctx: DataContext,
    out_dir: Path,
    reporter: Reporter,
    overrides: dict[str, Any] | None = None,
    resume: bool = False,
    stop: StopSignal | None = None,
    feature_cache: bool = True,
    group: Group | None = None,
    checkpoints: CheckpointStore | None = None,
) -> TrainResult:
    """Train the graph, writing graph.json, checkpoints, report.json and model.safetensors to `out_dir`.

    A run that succeeds also gets model.json, which makes `out_dir` a bundle (engine.bundle).
    `feature_cache=False` trains a frozen backbone's head through the backbone at every step, as
    any other network (same result, much slower; for comparisons).

    A train node with `workers` above 1 trains on Ray Train (`engine/distributed.py`), each worker
    calling this function again with its `group` and Ray Train's `checkpoints`; the main worker
    writes the files.

    Raises GraphInvalid (with every error) before anything is written when the graph is wrong.
    """
    plan = compile_graph(raw, ctx, overrides=overrides)
    out_dir.mkdir(parents=True, exist_ok=True)
    graph = plan.graph.model_copy(deep=True)
    train_node = graph.node(plan.analysis.structure.train_id or "")
    train_node.params = plan.config.model_dump()
    main = group is None or group.main
    if main:
        (out_dir / "graph.json").write_text(graph.model_dump_json(indent=2, by_alias=True), encoding="utf-8")
    if group is None and plan.config.workers > 1:
        from dragdl.engine.distributed import run_distributed

        source = raw if isinstance(raw, dict) else raw.model_dump(by_alias=True)
        return run_distributed(
            source, ctx, out_dir, reporter, plan.config, overrides, resume, stop, feature_cache
        )
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
                resume=resume,
                stop=stop,
                network=plan.model,
                task=plan.task,
                group=group,
                checkpoints=checkpoints,
            )
    finally:
        pipeline.close()
    if result.status == "succeeded" and main:
        write_bundle(out_dir, graph, plan, pipeline.fitted, read_report(result))
    return result


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
