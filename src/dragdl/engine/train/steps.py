"""What the trainer runs besides its loop, on the run's own batches and task kind: the fast path's
probe (`choose_fast_path`) and the diagnosis of a non-finite loss (`loss_not_finite`)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from dragdl.engine.data.batch import Batch, network_inputs
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.network.module import watch_non_finite
from dragdl.engine.tasks.settings import TrainSettings
from dragdl.engine.train.device import TrainError
from dragdl.engine.train.evaluate import Evaluator
from dragdl.engine.train.fastpath import FastPath, Probe, StepTiming, choose, first_batches, fixed
from dragdl.engine.train.optim import build_optimizer


def choose_fast_path(
    model: nn.Module,
    pipeline: Pipeline,
    config: TrainSettings,
    evaluator: Evaluator,
    total_steps: int,
    checkpoint: dict[str, Any] | None,
    timing: StepTiming | None,
) -> FastPath:
    """The checkpoint's fast path when resuming (an earlier version's: what it trained in), else the
    one `fastpath.choose` measures; neither changes the weights or the random state."""
    device, images = evaluator.device, len(pipeline.sample_shape) == 3
    if checkpoint is not None:
        saved = checkpoint.get("fast_path")
        if saved is not None:
            kept = FastPath.from_dict(saved)
            return FastPath(
                kept.precision,
                kept.memory_format,
                f"kept from the checkpoint; {kept.reason}",
                kept.native_bf16,
                kept.probe_s,
                kept.measurements,
            )
        # Before the fast path: CUDA ran its AMP and channels_last rule, the CPU fp32 contiguous.
        earlier = "checkpoint of an earlier version"
        if device.type == "cpu":
            return fixed(device, "fp32", "contiguous", images, earlier)
        return fixed(device, config.precision, "auto", images, earlier)

    def load_batches() -> list[Batch]:
        # Batches depend only on (seed, epoch): reading epoch 0's first ones changes no order.
        batches = first_batches(pipeline.train.batches(0), 3)
        return [evaluator.to_device(batch) for batch in batches]

    task, criterion = evaluator.task, evaluator.criterion
    convolutions = any(p.ndim == 4 for p in model.parameters())
    probe = Probe(
        model=model,
        make_optimizer=lambda m: build_optimizer(m, config, device),
        step=lambda m, batch: task.step(m, batch, criterion),
        load_batches=load_batches,
        device=device,
        total_steps=total_steps,
        input_shape=pipeline.sample_shape,
        run_samples=pipeline.train.num_samples * config.epochs,
        timing=timing,
    )
    return choose(device, config.precision, config.memory_format, images and convolutions, probe)


def loss_not_finite(
    model: nn.Module, batch: Batch, evaluator: Evaluator, loss: float, epoch: int, step: int, lr: float
) -> TrainError:
    """The node whose output stopped being finite on this batch, found by running the batch again
    with a check after every node; the learning rate is blamed only when every output was finite.
    `epoch` and `step` are 1-based, `lr` is the train node's learning rate."""
    where = f"at epoch {epoch}, step {step} (the training loss became {loss})"
    if not all(bool(torch.isfinite(t).all()) for t in network_inputs(batch) if t.is_floating_point()):
        return TrainError(
            "non_finite", f"the batch reaching the network holds NaN or infinite values {where}"
        )
    with torch.no_grad(), watch_non_finite(model) as found:
        evaluator.step(model, batch)
    if found:
        return TrainError(
            "non_finite",
            f"layer {found[0]} produced NaN or infinite values from finite inputs {where}; its "
            "input values or weights are too large for it: scale the data down (for example "
            f"with a Normalize before the network) or lower the learning rate (lr={lr})",
            found[0],
        )
    return TrainError(
        "loss_not_finite",
        f"the training loss became {loss} at epoch {epoch} while no layer's output was "
        f"found to be NaN or infinite; lower the learning rate (lr={lr})",
    )
