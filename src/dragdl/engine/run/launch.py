"""Graph in, trained model out: compile, then train in this process or on Ray Train's workers.

The one module of `run` that knows both ways: `single` trains a compiled plan in one process,
`distributed` drives workers that each train with `single`; neither calls back into this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext
from dragdl.engine.graph.spec import Graph
from dragdl.engine.run.distributed import run_distributed
from dragdl.engine.run.single import train_plan, trained_graph
from dragdl.engine.train.callbacks import Callback
from dragdl.engine.train.collective import StopSignal
from dragdl.engine.train.reporter import Reporter
from dragdl.engine.train.trainer import TrainResult


def run_graph(
    raw: dict[str, Any] | Graph,
    ctx: DataContext,
    out_dir: Path,
    reporter: Reporter,
    overrides: dict[str, Any] | None = None,
    resume: bool = False,
    stop: StopSignal | None = None,
    feature_cache: bool = True,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train the graph, writing graph.json, checkpoints, report.json and model.safetensors to `out_dir`.

    A run that succeeds also gets model.json, which makes `out_dir` a bundle (engine.bundle).
    `feature_cache=False` trains a frozen backbone's head through the backbone at every step, as
    any other network (same result, much slower; for comparisons). `callbacks` watch the training
    beside the reporter's (`train/callbacks.py`); in a distributed run they go to every worker
    process, and `RunContext.main` says which one writes the files.

    A train node with `workers` above 1 trains on Ray Train (`run/distributed.py`).

    Raises GraphInvalid (with every error) before anything is written when the graph is wrong.
    """
    plan = compile_graph(raw, ctx, overrides=overrides)
    out_dir.mkdir(parents=True, exist_ok=True)
    graph = trained_graph(plan)
    (out_dir / "graph.json").write_text(graph.model_dump_json(indent=2, by_alias=True), encoding="utf-8")
    if plan.config.workers > 1:
        source = raw if isinstance(raw, dict) else raw.model_dump(by_alias=True)
        return run_distributed(
            source, ctx, out_dir, reporter, plan.config, overrides, resume, stop, feature_cache, callbacks
        )
    return train_plan(
        plan,
        ctx,
        out_dir,
        reporter,
        resume=resume,
        stop=stop,
        feature_cache=feature_cache,
        callbacks=callbacks,
    )
