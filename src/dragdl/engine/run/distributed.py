"""A run of several workers training one network together: data-parallel on Ray Train.

`launch.run_graph` hands a graph whose train node asks for `workers` > 1 to `run_distributed`,
which drives the run from the caller's process (a task's worker actor, or `dragdl run`):

- a `TorchTrainer` starts `workers` Ray actors of `cpus_per_worker` CPUs and `gpus_per_worker`
  GPUs, wherever the cluster has room for them, and joins them in a process group (gloo on CPUs,
  NCCL on GPUs);
- each worker compiles the graph and trains it with `single.train_plan` and its `TorchGroup`: the
  same data and trainer as a single process, on its share of every batch (`BatchSource.shard`), its
  gradients averaged by DDP;
- the main worker's events reach the caller's reporter through a Ray queue that a thread here
  drains; the other workers report nothing;
- checkpoints go through Ray Train (`ray.train.report(checkpoint=...)`, kept in
  `out_dir/distributed/`, the newest two); when a worker or its node dies, Ray Train starts the
  workers again, up to `worker_failures` times, and they resume from the newest checkpoint;
- a stop request becomes the file `out_dir/stop-requested`, which the workers agree on at log points;
- an error of the graph or its data is deterministic (a restart would meet it again): the worker
  that meets it first writes it to `distributed-error.json`, workers started after that return at
  once (so Ray Train's restart ends the run), and the driver raises it again (a DatasetError, or a
  TrainError with its code and node);
- the main worker writes `distributed-result.json`, which the driver returns as the run's result.

Ray is imported here only when a distributed run starts: `dragdl run` of a single-process graph
imports none of it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from dragdl.engine.data.base import DatasetError
from dragdl.engine.errors import EngineError
from dragdl.engine.run.local_ray import prepare_environment, start_local_ray
from dragdl.engine.train.callbacks import Callback
from dragdl.engine.train.checkpoint import CheckpointStore, checkpoint_name, load_checkpoint
from dragdl.engine.train.collective import StopSignal
from dragdl.engine.train.device import TrainError
from dragdl.engine.train.evaluate import write_json
from dragdl.engine.train.events import Event, LogEvent, ProgressEvent, StartEvent
from dragdl.engine.train.reporter import NullReporter, Reporter
from dragdl.engine.train.trainer import TrainResult

if TYPE_CHECKING:
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.tasks.settings import TrainSettings

log = logging.getLogger(__name__)

RUN_NAME = "distributed"
"""Ray Train's run folder under the task's folder: its checkpoints and state."""
STOP_FILE = "stop-requested"
ERROR_FILE = "distributed-error.json"
RESULT_FILE = "distributed-result.json"
RELAY_S = 0.2
"""How often the driver passes the main worker's events on and looks for a stop request."""


class WorkersFailed(TrainError):
    """The workers kept failing (died, lost their node, or met an error outside the graph and its
    data) until Ray Train's failure budget ran out: worth another attempt from the checkpoint."""

    def __init__(self, message: str) -> None:
        super().__init__("workers_failed", message)


def run_distributed(
    raw: dict[str, Any],
    ctx: DataContext,
    out_dir: Path,
    reporter: Reporter,
    config: TrainSettings,
    overrides: dict[str, Any] | None,
    resume: bool,
    stop: StopSignal | None,
    feature_cache: bool,
    callbacks: Sequence[Callback] = (),
) -> TrainResult:
    """Train the graph on `config.workers` Ray Train workers; returns the main worker's result.
    `callbacks` go to every worker (pickled with the run's settings).

    Raises the error a worker met in the graph or its data (DatasetError or TrainError), or
    WorkersFailed when the workers kept failing otherwise (Ray Train's failure budget ran out).
    """
    import ray
    import ray.train
    from ray.train.torch import TorchConfig, TorchTrainer
    from ray.util.queue import Queue

    # The workers run in Ray's own working directory (on other machines too): paths must be absolute.
    out_dir = out_dir.resolve()
    ctx = dataclasses.replace(ctx, data_dir=ctx.data_dir.resolve())
    started_ray = _ensure_ray()
    for name in (STOP_FILE, ERROR_FILE, RESULT_FILE):
        (out_dir / name).unlink(missing_ok=True)
    if not resume:
        shutil.rmtree(out_dir / RUN_NAME, ignore_errors=True)
    gpus = config.gpus_per_worker
    events: Any = Queue(actor_options={"num_cpus": 0})
    relay = _Relay(events, reporter, stop, out_dir / STOP_FILE, config.worker_failures)
    reporter.emit(
        LogEvent(
            "info",
            f"starting {config.workers} workers on Ray Train ({_amount(config.cpus_per_worker, 'CPU')} "
            f"and {_amount(gpus, 'GPU')} each; gradients averaged with {'NCCL' if gpus > 0 else 'gloo'})",
        )
    )
    trainer = TorchTrainer(
        _worker,
        train_loop_config={
            "graph": raw,
            "context": ctx,
            "out_dir": str(out_dir),
            "overrides": overrides,
            "resume": resume,
            "feature_cache": feature_cache,
            "callbacks": list(callbacks),
            "events": events,
            "cpus": config.cpus_per_worker,
            "gpus": gpus,
        },
        torch_config=TorchConfig(backend="nccl" if gpus > 0 else "gloo"),
        scaling_config=ray.train.ScalingConfig(
            num_workers=config.workers,
            use_gpu=gpus > 0,
            resources_per_worker={"CPU": config.cpus_per_worker, "GPU": gpus},
        ),
        run_config=ray.train.RunConfig(
            name=RUN_NAME,
            storage_path=str(out_dir.resolve()),
            failure_config=ray.train.FailureConfig(max_failures=config.worker_failures),
            checkpoint_config=ray.train.CheckpointConfig(num_to_keep=2),
        ),
    )
    relay.start()
    failure: BaseException | None = None
    try:
        trainer.fit()
    except Exception as exc:  # Ray Train's error once its failure budget is spent
        failure = exc
    finally:
        relay.finish()
        ray.kill(events.actor, no_restart=True)
        if started_ray:
            ray.shutdown()
    error = _read_json(out_dir / ERROR_FILE)
    if error is not None:
        code, message = str(error["code"]), str(error["message"])
        if error.get("dataset"):  # the caller words it as any dataset error (its node, its file)
            raise DatasetError(message, code=code)
        raise TrainError(code, message, error.get("node_id"))
    result = _read_json(out_dir / RESULT_FILE)
    for name in (STOP_FILE, RESULT_FILE):  # the run's files are its model, report and checkpoints
        (out_dir / name).unlink(missing_ok=True)
    if failure is not None or result is None:
        detail = _first_line(str(failure)) if failure is not None else "the main worker wrote no result"
        raise WorkersFailed(
            f"the workers failed more than the {config.worker_failures} time(s) worker_failures "
            f"allows: {detail}"
        )
    return _result_from_json(result)


def _amount(value: float, unit: str) -> str:
    return f"{value:g} {unit}{'' if value == 1 else 's'}"


def _ensure_ray() -> bool:
    """Join the Ray of this process, or start a local one (`dragdl run`); True when started here.

    A local one gets the settings of the server's embedded Ray (`local_ray.py`): loopback, a token,
    GPUs hidden from workers given none."""
    import ray

    if ray.is_initialized():
        return False
    address = os.environ.get("RAY_ADDRESS")
    prepare_environment(local=not address)
    if address:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    else:
        start_local_ray()
    return True


class _Relay(threading.Thread):
    """Passes the main worker's events to the run's reporter, and a stop request to the workers.

    Every start of the workers begins with a start event: a second one means Ray Train started them
    again after a failure, which the log says before the run goes on."""

    def __init__(
        self, events: Any, reporter: Reporter, stop: StopSignal | None, stop_file: Path, budget: int
    ) -> None:
        super().__init__(name="dragdl-distributed-relay", daemon=True)
        self.events, self.reporter, self.stop, self.stop_file = events, reporter, stop, stop_file
        self.budget = budget
        self.starts = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(RELAY_S):
            if self.stop is not None and self.stop.is_set() and not self.stop_file.exists():
                self.stop_file.touch()
            self._drain()

    def _drain(self) -> None:
        try:
            batch = self.events.get_nowait_batch(self.events.qsize())
        except Exception as exc:  # the queue's actor is gone: nothing more to pass on
            log.debug("event queue unavailable: %s", exc)
            return
        for event in batch:
            if isinstance(event, StartEvent):
                self.starts += 1
                if self.starts > 1:
                    restart = self.starts - 1
                    message = (
                        f"a worker or its node failed: Ray Train started the workers again (restart "
                        f"{restart} of the {self.budget} worker_failures allows), from the newest checkpoint"
                    )
                    self.reporter.emit(LogEvent("warning", message))
            self.reporter.emit(event)

    def finish(self) -> None:
        self._done.set()
        self.join()
        self._drain()


class _QueueReporter:
    """The main worker's reporter: events into the driver's queue, a batch at a time (progress
    events, one per step, go with the next batch instead of a call each)."""

    def __init__(self, events: Any) -> None:
        self.events = events
        self.pending: list[Event] = []

    def emit(self, event: Event) -> None:
        self.pending.append(event)
        if not isinstance(event, ProgressEvent) or len(self.pending) >= 50:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.events.put_nowait_batch(self.pending)
            self.pending = []


class RayTrainCheckpoints(CheckpointStore):
    """A distributed run's checkpoints, through Ray Train: the main worker's state goes with its
    `ray.train.report`, which every worker makes at the same point; Ray Train keeps them in the run
    folder and hands the newest to workers it starts again."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def latest(self) -> tuple[str, dict[str, Any]] | None:
        import ray.train

        # The run folder first: Ray Train registers a checkpoint only when it next hears from the
        # workers, so the newest (written just before a worker died) or an earlier attempt's (a stop,
        # a restarted server) may be there alone. Everything there is this run's: a run from
        # scratch empties it.
        for path in reversed(sorted(self.folder.glob("ckpt-*/ckpt-*.pt"))):
            try:
                return path.name, load_checkpoint(path)
            except Exception as exc:  # cut off while being copied there: the one before it
                log.warning("checkpoint %s cannot be read (%s); trying the one before", path.name, exc)
        checkpoint = ray.train.get_checkpoint()  # storage the workers cannot list (not a shared folder)
        if checkpoint is None:
            return None
        with checkpoint.as_directory() as directory:
            found = sorted(Path(directory).glob("ckpt-*.pt"))
            return (found[-1].name, load_checkpoint(found[-1])) if found else None

    def save(self, state: dict[str, Any] | None, epoch: int, step: int) -> Path | None:
        import ray.train

        name = checkpoint_name(epoch, step)
        folder = name.removesuffix(".pt")
        with tempfile.TemporaryDirectory(prefix="dragdl-ckpt-") as tmp:
            checkpoint = None
            if state is not None:
                torch.save(state, Path(tmp) / name)
                checkpoint = ray.train.Checkpoint.from_directory(tmp)
            ray.train.report(
                {"epoch": epoch, "step": step}, checkpoint=checkpoint, checkpoint_dir_name=folder
            )
        return None if state is None else self.folder / folder / name


def _worker(settings: dict[str, Any]) -> None:
    """One worker of the run (a Ray Train actor): the graph compiled and trained on its share."""
    out_dir = Path(settings["out_dir"])
    if (out_dir / ERROR_FILE).exists():
        return  # a deterministic error ended the run: Ray Train's restart meets it again otherwise
    if settings["gpus"] <= 0:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # a CPU worker on a GPU machine stays on the CPU
    import ray
    import ray.train
    from ray.train.torch import get_device

    from dragdl.engine.compile.plan import compile_graph
    from dragdl.engine.run.single import train_plan
    from dragdl.engine.train.collective import StopFile, TorchGroup

    torch.set_num_threads(max(1, round(settings["cpus"])))
    graph = settings["graph"]
    # Ray Train's device for this worker: its GPU (Ray set CUDA_VISIBLE_DEVICES), else the CPU.
    device = get_device()
    group = TorchGroup(device, _this_node())
    reporter = _QueueReporter(settings["events"]) if group.main else None
    # Workers started again after a failure resume from the newest checkpoint, once there is one.
    written = any((out_dir / RUN_NAME).glob("ckpt-*/ckpt-*.pt"))
    resume = bool(settings["resume"]) or written or ray.train.get_checkpoint() is not None
    try:
        plan = compile_graph(graph, settings["context"], overrides=settings["overrides"])
        result = train_plan(
            plan,
            settings["context"],
            out_dir,
            reporter or NullReporter(),
            resume=resume,
            stop=StopFile(out_dir / STOP_FILE),
            feature_cache=settings["feature_cache"],
            group=group,
            checkpoints=RayTrainCheckpoints(out_dir / RUN_NAME),
            callbacks=settings["callbacks"],
        )
    except EngineError as exc:  # the graph or its data (TrainError included): fails the same again
        error = {
            "code": exc.code,
            "message": exc.message,
            "node_id": exc.node_id,
            "dataset": isinstance(exc, DatasetError),
        }
        _write_json_once(out_dir / ERROR_FILE, error)
        raise
    finally:
        if reporter is not None:
            reporter.flush()
    if group.main:
        write_json(out_dir / RESULT_FILE, _result_to_json(result))


def _this_node() -> dict[str, str]:
    """This worker's node: its id and the address Ray knows it by (127.0.0.1 for a local Ray)."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    nodes = ray.nodes()  # type: ignore[no-untyped-call]
    known = [n.get("NodeManagerAddress") for n in nodes if n.get("NodeID") == node_id]
    address = known[0] if known and known[0] else ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    return {"node_id": node_id, "address": str(address)}


def _result_to_json(result: TrainResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "epochs_completed": result.epochs_completed,
        "history": result.history,
        "test": result.test,
        "best_epoch": result.best_epoch,
        "stopped_early": result.stopped_early,
        "report_path": None if result.report_path is None else str(result.report_path),
        "model_path": None if result.model_path is None else str(result.model_path),
    }


def _result_from_json(data: dict[str, Any]) -> TrainResult:
    return TrainResult(
        status=data["status"],
        epochs_completed=int(data["epochs_completed"]),
        history=list(data["history"]),
        test=data["test"],
        best_epoch=data["best_epoch"],
        stopped_early=bool(data["stopped_early"]),
        report_path=None if data["report_path"] is None else Path(data["report_path"]),
        model_path=None if data["model_path"] is None else Path(data["model_path"]),
    )


def _write_json_once(path: Path, data: dict[str, Any]) -> None:
    """Write `data` unless another worker wrote its error first (the first one is the cause)."""
    try:
        with open(path, "x", encoding="utf-8") as file:
            json.dump(data, file)
    except FileExistsError:
        pass


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _first_line(message: str) -> str:
    lines = [line for line in message.strip().splitlines() if line.strip()]
    return lines[0] if lines else "unknown error"
