"""The training loop: epochs of optimizer steps, validation, early stopping, checkpoints, test report.

Reproducibility contract: torch's global RNG is reseeded from (seed, epoch) at every epoch start,
batch order and augmentation depend only on (seed, epoch), and a checkpoint holds everything else
that changes during a run. A run resumed from any checkpoint therefore ends with the same weights
and the same report as an uninterrupted one (on CPU; cuDNN autotuning may pick other kernels).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import safetensors.torch
import torch
from torch import nn

from dragdl.engine.data.pipeline import Pipeline, derive_seed
from dragdl.engine.data.stages import NonFiniteError
from dragdl.engine.errors import EngineError
from dragdl.engine.network.module import GraphModule
from dragdl.engine.tasks.base import TaskKind
from dragdl.engine.tasks.settings import TrainSettings
from dragdl.engine.train.callbacks import Callback, CallbackList, ReporterCallback, RunContext
from dragdl.engine.train.checkpoint import CheckpointStore, FolderCheckpoints
from dragdl.engine.train.collective import Group, StopSignal
from dragdl.engine.train.device import (
    Precision,
    TrainError,
    configure_backends,
    peak_memory_mb,
    reset_peak_memory,
    resolve_device,
    synchronize,
)
from dragdl.engine.train.evaluate import Evaluator, build_report, report_timings, write_json
from dragdl.engine.train.events import StartEvent
from dragdl.engine.train.fastpath import FastPath, StepTiming
from dragdl.engine.train.optim import (
    build_optimizer,
    build_scheduler,
    current_lr,
    fast_forward,
    steps_per_epoch_schedule,
)
from dragdl.engine.train.reporter import Reporter
from dragdl.engine.train.state import TrainState
from dragdl.engine.train.steps import choose_fast_path, loss_not_finite

log = logging.getLogger(__name__)

CHECKPOINT_FORMAT = 1
TIMING_KEYS = frozenset({"samples_per_s", "epoch_time_s", "peak_memory_mb"})
"""Epoch metrics that measure the machine, not the model: they differ between identical runs."""


@dataclass(frozen=True)
class TrainResult:
    status: Literal["succeeded", "stopped"]
    epochs_completed: int
    history: list[dict[str, float]]
    test: dict[str, float] | None
    best_epoch: int | None
    stopped_early: bool
    report_path: Path | None = None
    model_path: Path | None = None


def train(
    model: nn.Module,
    pipeline: Pipeline,
    config: TrainSettings,
    classes: list[str],
    out_dir: Path,
    reporter: Reporter,
    *,
    task: TaskKind,
    resume: bool = False,
    stop: StopSignal | None = None,
    network: nn.Module | None = None,
    probe_timing: StepTiming | None = None,
    group: Group | None = None,
    checkpoints: CheckpointStore | None = None,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train `model` on `pipeline`, writing checkpoints, report.json and model.safetensors to `out_dir`.

    `task` is the train node's task kind: its `step` turns each batch into a loss. `network` is the
    whole network when `model` is only its trainable end, fed precomputed inputs (a frozen
    backbone's cached features): model.safetensors and the parameter counts describe it, while
    checkpoints hold `model`. Returns with status "stopped" after a checkpoint once `stop` is set.
    `probe_timing` replaces the fast-path probe's clock (tests make a candidate look slow with it).
    `group` is the run's workers when it is one of several processes training together
    (`collective.TorchGroup`): each trains on its share of every batch, and only the main one
    evaluates the test split and writes the model and report. `checkpoints` is where checkpoints go
    (default: `out_dir/checkpoints`). The events go to `reporter` (`ReporterCallback`), then to each
    of `callbacks` in order.
    Errors are reported as an ErrorEvent and a "failed" status, then raised (TrainError for
    expected failures).
    """
    group = group or Group()
    hooks = CallbackList([ReporterCallback(reporter), *callbacks])
    ctx = RunContext(out_dir, model if network is None else network, task, config, group.main, hooks)
    hooks.on_begin(ctx)
    try:
        store = checkpoints or FolderCheckpoints(out_dir)
        run = _Run(model, pipeline, config, classes, ctx, hooks, stop, task, group, store)
        run.probe_timing = probe_timing
        result = run.execute(resume)
    except TrainError as e:
        _fail(hooks, ctx, e.code, e.message, e.node_id)
        raise
    except NonFiniteError as e:  # a data operator, on a batch prepared during training
        _fail(hooks, ctx, e.code, e.message, e.node_id)
        raise TrainError(e.code, e.message, e.node_id) from e
    except EngineError as e:  # a layer or the data failed on real samples: its code and node
        _fail(hooks, ctx, e.code, e.message, e.node_id)
        raise
    except torch.OutOfMemoryError as e:
        message = f"out of memory ({e}); lower batch_size ({config.batch_size}) or the image size"
        _fail(hooks, ctx, "out_of_memory", message, None)
        raise TrainError("out_of_memory", message) from e
    except Exception as e:
        _fail(hooks, ctx, "train_failed", f"{type(e).__name__}: {e}", None)
        raise
    final = "training stopped; resume to continue" if result.status == "stopped" else "training finished"
    hooks.on_train_end(ctx, result.status, final)
    return result


def _fail(hooks: Callback, ctx: RunContext, code: str, message: str, node_id: str | None) -> None:
    hooks.on_error(ctx, code, message, node_id)
    hooks.on_train_end(ctx, "failed", message)


class _Run:
    def __init__(
        self,
        model: nn.Module,
        pipeline: Pipeline,
        config: TrainSettings,
        classes: list[str],
        ctx: RunContext,
        hooks: Callback,
        stop: StopSignal | None,
        task: TaskKind,
        group: Group,
        store: CheckpointStore,
    ) -> None:
        self.model, self.pipeline, self.config, self.classes = model, pipeline, config, classes
        self.task, self.group, self.store = task, group, store
        if group.distributed:
            pipeline.train.shard(group.rank, group.world)
        self.network = ctx.model
        self.ctx, self.hooks, self.stop = ctx, hooks, stop
        self.device = resolve_device(config.device)
        configure_backends(self.device)
        # fp32 contiguous until `_use` applies the fast path (chosen, or read from the checkpoint).
        self.precision = Precision(None, scaler=False)
        self.channels_last = False
        self.fast_path: FastPath | None = None
        self.probe_timing: StepTiming | None = None
        torch.manual_seed(config.seed)
        model.to(self.device)
        self.train_model = model
        """What the steps run: `model`, or its gradient-averaging wrapper in a distributed run."""
        self.steps_per_epoch = len(pipeline.train)
        self.total_steps = config.epochs * self.steps_per_epoch
        self.optimizer = build_optimizer(model, config, self.device)
        self.scheduler = build_scheduler(self.optimizer, config, self.total_steps)
        self.per_step_schedule = steps_per_epoch_schedule(config)
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=False)
        # A regressor's network maps its output back from the standardized target; the loss is
        # taken on the standardized values (the feature cache is off for such networks).
        self.criterion = task.criterion(
            config, model.output_scale if isinstance(model, GraphModule) else None
        )
        self.evaluator = Evaluator(
            self.criterion, self.device, self.precision, self.channels_last, task, classes
        )
        self.running = self.evaluator.new_running()
        if group.distributed:
            self.running.reduce = group.sum
        self.log_every = max(1, self.steps_per_epoch // 10)
        self.has_val = pipeline.val is not None
        self.monitor = config.monitor if self.has_val else config.monitor.removeprefix("val_")
        self.state = ctx.state
        self.started = time.perf_counter()
        self._last_lr = current_lr(self.optimizer)

    # -- events -------------------------------------------------------------------------------

    def info(self, message: str, level: Literal["info", "warning"] = "info") -> None:
        self.hooks.on_message(self.ctx, level, message)

    # -- checkpoints ----------------------------------------------------------------------------

    def _checkpoint(self) -> None:
        s = self.state
        data = self._checkpoint_data() if self.group.main else None
        path = self.store.save(data, s.epoch + 1, s.step)
        if path is not None:
            self.hooks.on_checkpoint(self.ctx, path)

    def _checkpoint_data(self) -> dict[str, Any]:
        s = self.state
        cuda = self.device.type == "cuda"
        return {
            "format": CHECKPOINT_FORMAT,
            "config": self.config.model_dump_json(),
            "total_steps": self.total_steps,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler else None,
            "scaler": self.scaler.state_dict(),
            "rng_cpu": torch.get_rng_state(),
            "rng_cuda": torch.cuda.get_rng_state_all() if cuda else [],
            "state": s.to_dict(),
            "running": self.running.state(),
            "fast_path": self.fast_path.to_dict() if self.fast_path else None,
        }

    def _latest(self) -> tuple[str, dict[str, Any]] | None:
        """The newest checkpoint's name and contents; None (with a warning) when there is none."""
        found = self.store.latest()
        if found is None:
            self.info("no checkpoint to resume from; starting from the beginning", "warning")
            return None
        name, data = found
        if data.get("format") != CHECKPOINT_FORMAT:
            raise TrainError("checkpoint_invalid", f"{name} has format {data.get('format')!r}")
        return name, data

    def _restore(self, name: str, data: dict[str, Any]) -> None:
        # Read through the params model, so a checkpoint of an earlier version (`amp`) compares equal.
        saved = type(self.config).model_validate_json(data["config"]).model_dump_json()
        if saved != self.config.model_dump_json():
            self.info("the settings changed since the checkpoint; continuing with the new ones", "warning")
        self.model.load_state_dict(data["model"])
        self.optimizer.load_state_dict(data["optimizer"])
        if self.scheduler is not None and data["scheduler"] is not None:
            if self.per_step_schedule and data["total_steps"] != self.total_steps:
                # The run got longer or shorter: the schedule is stretched to the new length,
                # replayed from the initial rate (the loaded groups hold the rate at the checkpoint).
                for group in self.optimizer.param_groups:
                    group["lr"] = group.get("initial_lr", self.config.lr * group.get("lr_scale", 1.0))
                self.scheduler = build_scheduler(self.optimizer, self.config, self.total_steps)
                assert self.scheduler is not None
                fast_forward(self.scheduler, int(data["global_step"]))
            else:
                self.scheduler.load_state_dict(data["scheduler"])
        self.scaler.load_state_dict(data["scaler"])
        self.state = self.ctx.state = s = TrainState.from_dict(data["state"])
        self.running.load(data["running"])
        if not s.epoch_done:
            torch.set_rng_state(data["rng_cpu"])
            if self.device.type == "cuda" and data["rng_cuda"]:
                torch.cuda.set_rng_state_all(data["rng_cuda"])
        self.info(f"resumed from checkpoint {name}")

    # -- the fast path --------------------------------------------------------------------------

    def _agreed_fast_path(self, checkpoint: dict[str, Any] | None) -> FastPath:
        """The fast path every worker trains in: the main worker chooses (probing alone, while the
        others wait) and tells the others, whose own probes would time each other's load."""
        if not self.group.distributed:
            return self._choose_fast_path(checkpoint)
        chosen = self._choose_fast_path(checkpoint).to_dict() if self.group.main else None
        return FastPath.from_dict(self.group.broadcast(chosen))

    def _choose_fast_path(self, checkpoint: dict[str, Any] | None) -> FastPath:
        return choose_fast_path(
            self.model,
            self.pipeline,
            self.config,
            self.evaluator,
            self.total_steps,
            checkpoint,
            self.probe_timing,
        )

    def _use(self, fast_path: FastPath) -> None:
        self.fast_path = fast_path
        self.precision = fast_path.autocast()
        self.channels_last = fast_path.channels_last
        if self.channels_last:
            # Parameters keep their identity (their data is replaced), so the optimizer still holds them.
            self.model.to(memory_format=torch.channels_last)
        self.evaluator.precision, self.evaluator.channels_last = self.precision, self.channels_last
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.precision.scaler)
        self.train_model = self.group.wrap(self.model)

    # -- the run --------------------------------------------------------------------------------

    def execute(self, resume: bool) -> TrainResult:
        latest = self._latest() if resume else None
        self._use(self._agreed_fast_path(latest[1] if latest else None))
        if latest is not None:
            self._restore(*latest)
        resumed = latest is not None
        if not resume:
            self.store.clear()
        s = self.state
        mid_epoch = resumed and not s.epoch_done
        if s.epoch_done:
            s.epoch, s.step, s.epoch_done = s.epoch + 1, 0, False
        p = self.pipeline
        trainable = sum(t.numel() for t in self.network.parameters() if t.requires_grad)
        self.ctx.start = StartEvent(
            epochs=self.config.epochs,
            steps_per_epoch=self.steps_per_epoch,
            train_samples=p.train.num_samples,
            val_samples=p.val.num_samples if p.val else 0,
            test_samples=p.test.num_samples if p.test else 0,
            device=str(self.device),
            trainable_parameters=trainable,
            total_parameters=sum(t.numel() for t in self.network.parameters()),
            resumed_from_epoch=s.epoch + 1 if resumed else None,
            resumed_from_step=s.step if resumed else None,
            batch_size=self.config.batch_size,
            fast_path=self.fast_path.to_dict() if self.fast_path else None,
            workers=self.group.describe(),
        )
        self.hooks.on_train_start(self.ctx)
        if self.fast_path is not None:
            self.info(self.fast_path.summary())
        scale = self.model.output_scale if isinstance(self.model, GraphModule) else None
        if scale is not None and not resumed:
            self.info(
                f"the target is learned standardized (mean {scale[0]:.6g}, standard deviation "
                f"{scale[1]:.6g}, from the training rows); predictions are in its own units"
            )
        while s.epoch < self.config.epochs and not s.stopped_early:
            if not mid_epoch:
                torch.manual_seed(self._epoch_seed())
                s.step, s.train_time = 0, 0.0
                self.running.reset()
                s.logged, s.logged_count = {}, 0
            mid_epoch = False
            if not self._train_epoch():
                return self._result("stopped")
            self._end_epoch()
            if self._stop_requested() and s.epoch + 1 < self.config.epochs:
                return self._result("stopped")
            s.epoch += 1
        return self._finish()

    def _epoch_seed(self) -> int:
        # Dropout and other random layers: the main worker draws what a single process would, the
        # others streams of their own (equal masks on every worker would be no less random per
        # sample, but correlated across the batch).
        if self.group.main:
            return derive_seed(self.config.seed, self.state.epoch)
        return derive_seed(self.config.seed, self.state.epoch, self.group.rank)

    def _stop_requested(self) -> bool:
        """Whether to stop; every worker of a distributed run gets the same answer."""
        return self.group.any(self.stop is not None and self.stop.is_set())

    def _train_epoch(self) -> bool:
        """Steps of one epoch from `state.step`; False when stopped (after a checkpoint)."""
        s, cfg, model = self.state, self.config, self.train_model
        model.train()
        distributed = self.group.distributed
        reset_peak_memory(self.device)
        interval = cfg.checkpoint_minutes * 60
        last_checkpoint = time.monotonic()
        segment = time.perf_counter()
        lr = current_lr(self.optimizer)
        ctx, hooks, step, running = self.ctx, self.hooks, self.evaluator.step, self.running
        for cpu_batch in self.pipeline.train.batches(s.epoch, s.step):
            batch = self.evaluator.to_device(cpu_batch)
            loss, outputs = step(model, batch)
            # Checked before the step, while the weights still are those that produced the loss:
            # a diagnosis after an optimizer step with NaN gradients would blame every layer.
            # One read of the value (a GPU sync either way): cheaper than an isfinite kernel first.
            value = loss.item()
            if not math.isfinite(value):
                raise loss_not_finite(
                    self.model, batch, self.evaluator, value, s.epoch + 1, s.step + 1, cfg.lr
                )
            self.optimizer.zero_grad(set_to_none=True)
            lr = current_lr(self.optimizer)
            if self.precision.scaler:
                torch.autograd.backward(self.scaler.scale(loss))
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                torch.autograd.backward(loss)
                self.optimizer.step()
            if self.per_step_schedule and self.scheduler is not None:
                self.scheduler.step()
            running.add(loss, outputs.detach(), batch)
            s.step += 1
            s.global_step += 1
            hooks.on_step_end(ctx)
            if s.step % self.log_every == 0 or s.step == self.steps_per_epoch:
                self._log_step(lr)
            if distributed and s.step % self.log_every:
                continue  # the workers agree on stopping and checkpoints at log points only
            stopping = self.stop is not None and self.stop.is_set()
            due = interval > 0 and time.monotonic() - last_checkpoint >= interval
            if distributed:
                stopping, due = self.group.any(stopping), self.group.any(due)
            if (stopping or due) and s.step < self.steps_per_epoch:
                synchronize(self.device)
                s.train_time += time.perf_counter() - segment
                self._checkpoint()
                if stopping:
                    return False
                last_checkpoint, segment = time.monotonic(), time.perf_counter()
        synchronize(self.device)
        s.train_time += time.perf_counter() - segment
        self._last_lr = lr
        return True

    def _log_step(self, lr: float) -> None:
        # The window's metrics are differences of the epoch's running sums: no second accumulator
        # per step, and no GPU sync besides these two .item() calls and the per-step loss check.
        s = self.state
        sums = self.running.sums()
        before = s.logged
        if before and "count" not in before:  # a checkpoint of an earlier version kept it apart
            before = {**before, "count": float(s.logged_count)}
        values = self.running.window(sums, before)
        loss = values["loss"]
        if not _finite(loss):
            raise TrainError(
                "loss_not_finite",
                f"the training loss became {loss} at epoch {s.epoch + 1}; "
                f"lower the learning rate (lr={self.config.lr})",
            )
        values["lr"] = lr
        s.logged, s.logged_count = sums, int(sums["count"])
        self.hooks.on_log(self.ctx, values)

    def _end_epoch(self) -> None:
        s, cfg = self.state, self.config
        val_start = time.perf_counter()
        values = self.running.values()
        if self.pipeline.val is not None:
            values.update(self.evaluator.run(self.model, self.pipeline.val, "val_")[0])
        val_time = time.perf_counter() - val_start
        if cfg.schedule == "step" and self.scheduler is not None:
            self.scheduler.step()
        values["lr"] = self._last_lr
        values["samples_per_s"] = self.pipeline.train.num_samples / max(s.train_time, 1e-9)
        values["epoch_time_s"] = s.train_time + val_time
        values["peak_memory_mb"] = peak_memory_mb(self.device)
        s.history.append(values)
        self._early_stopping(values)
        s.step, s.epoch_done = self.steps_per_epoch, True
        self.hooks.on_epoch_end(self.ctx, values)
        self._checkpoint()
        s.epoch_done = False

    def _early_stopping(self, values: dict[str, float]) -> None:
        s, cfg = self.state, self.config
        score = values[self.monitor]
        improved = s.best_score is None or self.task.better(self.monitor, score, s.best_score)
        if improved:
            s.best_score, s.best_epoch, s.bad_epochs = score, s.epoch + 1, 0
            if cfg.early_stopping:
                s.best_state = {
                    k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()
                }
            return
        s.bad_epochs += 1
        if cfg.early_stopping and s.bad_epochs >= cfg.patience:
            s.stopped_early = True
            self.info(
                f"early stopping after epoch {s.epoch + 1}: {self.monitor} has not improved for "
                f"{s.bad_epochs} epochs (best {s.best_score:.4g} at epoch {s.best_epoch})"
            )

    def _result(self, status: Literal["succeeded", "stopped"], **extra: Any) -> TrainResult:
        s = self.state
        return TrainResult(
            status=status,
            epochs_completed=len(s.history),
            history=[dict(h) for h in s.history],
            test=extra.get("test"),
            best_epoch=s.best_epoch,
            stopped_early=s.stopped_early,
            report_path=extra.get("report_path"),
            model_path=extra.get("model_path"),
        )

    def _finish(self) -> TrainResult:
        s, cfg = self.state, self.config
        if cfg.early_stopping and s.best_state is not None:
            self.model.load_state_dict(s.best_state)
            self.info(f"restored the best weights (epoch {s.best_epoch}, {self.monitor} {s.best_score:.4g})")
        if not self.group.main:  # the main worker tests the model and writes it (the weights are equal)
            return self._result("succeeded")
        test: dict[str, float] | None = None
        details: dict[str, Any] = {}
        if self.pipeline.test is not None:
            test, preds, targets = self.evaluator.run(self.model, self.pipeline.test, "test_", collect=True)
            details = self.task.test_details(preds, targets, self.classes)
            self.hooks.on_test_end(self.ctx, test, details)
        if self.channels_last:
            # safetensors stores contiguous tensors; bring 4-D weights back to the default layout.
            self.network.to(memory_format=torch.contiguous_format)
        network = self.network
        model_path = self.ctx.write_artifact(
            "model", "model.safetensors", lambda tmp: safetensors.torch.save_model(network, str(tmp))
        )
        device = str(self.device)
        report = build_report(s, cfg, self.task, self.classes, self.pipeline, network, device, self.monitor)
        report["fast_path"] = self.fast_path.to_dict() if self.fast_path else None
        timings = report_timings(s, self.pipeline) | {"wall_s": time.perf_counter() - self.started}
        timings["probe_s"] = self.fast_path.probe_s if self.fast_path else 0.0
        report = report | {"test": test} | details | {"timings": timings}
        report_path = self.ctx.write_artifact("report", "report.json", lambda tmp: write_json(tmp, report))
        return self._result("succeeded", test=test, report_path=report_path, model_path=model_path)


def _finite(value: float) -> bool:
    return value == value and abs(value) != float("inf")
