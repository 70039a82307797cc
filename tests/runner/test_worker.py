"""One attempt in this process (the Ray actor calls the same function): ends, errors, stops, fencing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.models import Model, Task, TaskEvent, TaskStatus
from dragdl.engine.data.base import DataContext, DatasetError
from dragdl.engine.graph.errors import GraphError, GraphInvalid
from dragdl.engine.network.module import LayerRuntimeError
from dragdl.runner.base import LaunchSpec, Resources, WorkerConfig
from dragdl.runner.transitions import start_attempt
from dragdl.runner.worker import SUPERSEDED, describe_error, execute_attempt

from ..graphs import chain
from .conftest import MakeTask
from .support import corrupt_folder_graph, digits_graph


def launch(sessions: sessionmaker[Session], config: WorkerConfig, task: Task) -> LaunchSpec:
    """What the scheduler does before launching: QUEUED -> RUNNING with a fresh worker_ref."""
    with sessions() as db:
        ref = start_attempt(db, task, "test")
    assert ref is not None
    return LaunchSpec(
        task.id, ref, Resources(1, 0), config, DataContext(config.data_dir, allow_download=False)
    )


def run(spec: LaunchSpec) -> str:
    return execute_attempt(spec, exit_on_lost_lease=False, heartbeat_s=0.05)


def load(sessions: sessionmaker[Session], task_id: str) -> Task:
    with sessions() as db:
        row = db.get(Task, task_id)
        assert row is not None
        return row


def kinds(sessions: sessionmaker[Session], task_id: str) -> list[str]:
    with sessions() as db:
        rows = db.scalars(select(TaskEvent).where(TaskEvent.task_id == task_id).order_by(TaskEvent.id))
        return [f"{r.kind}:{r.data.get('status', r.data.get('scope', ''))}" for r in rows]


def test_a_successful_attempt_records_its_metrics_and_registers_the_model(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = make_task(make_user("alice"), "digits", digits_graph(epochs=2))
    assert run(launch(sessions, config, task)) == "SUCCEEDED"
    row = load(sessions, task.id)
    assert row.status == TaskStatus.SUCCEEDED and row.progress == 1.0 and row.epoch == 2
    assert row.worker_pid == os.getpid() and row.finished_at is not None
    assert row.best_metrics["test_accuracy"] > 0.5
    history = kinds(sessions, task.id)
    assert history[0] == "status:RUNNING" and history[-1] == "status:SUCCEEDED"
    assert [k for k in history if k.startswith("metric:") and k != "metric:step"] == [
        "metric:epoch",
        "metric:epoch",
        "metric:test",
    ]
    with sessions() as db:
        model = db.scalar(select(Model).where(Model.task_id == task.id))
    assert model is not None and model.path == f"artifacts/{task.id}" and model.owner_id == task.owner_id
    assert model.classes == [str(i) for i in range(10)]
    assert model.input_spec["network_input"] == [1, 8, 8] and model.metrics["epochs_completed"] == 2
    out = config.artifacts_dir / task.id
    assert (out / "model.json").is_file() and "attempt 1 in process" in (out / "log.txt").read_text()


def test_an_error_on_real_data_fails_at_once_naming_the_node(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = make_task(make_user("alice"), "corrupt", corrupt_folder_graph(config.data_dir / "images"))
    assert run(launch(sessions, config, task)) == "FAILED"
    row = load(sessions, task.id)
    assert row.error is not None and row.error["node_id"] == "data"
    # Alice is no administrator: she sees the file inside the data dir, not the server's layout.
    assert row.error["message"].startswith("node data: cannot decode image images/a/5.png")
    assert "Traceback" not in row.error["message"]
    assert kinds(sessions, task.id)[-2:] == ["error:", "status:FAILED"]
    log = (config.artifacts_dir / task.id / "log.txt").read_text()
    assert "ERROR" in log and "images/a/5.png" in log
    with sessions() as db:
        shown = [e.data for e in db.scalars(select(TaskEvent).where(TaskEvent.task_id == task.id))]
    assert str(config.data_dir) not in json.dumps(shown) + row.error["message"] + log


def test_a_lambda_giving_nan_on_real_pixels_fails_the_task_naming_the_lambda(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    graph = chain(
        "Log",
        [
            ("data", "dataset.builtin", {"name": "mnist-5k"}),
            ("lg", "op.Lambda", {"expression": "log(x)"}),
            ("flatten", "layer.Flatten", {}),
            ("dense", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1, "device": "cpu"}),
        ],
    )
    task = make_task(make_user("alice"), "log", graph)
    assert run(launch(sessions, config, task)) == "FAILED"
    error = load(sessions, task.id).error
    assert error is not None and (error["code"], error["node_id"]) == ("non_finite", "lg")
    assert error["message"].startswith("node lg: the operator lg (Lambda) produced ")
    assert "learning rate" not in error["message"]


def test_a_stop_request_ends_the_attempt_stopped_after_a_checkpoint(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = make_task(make_user("alice"), "long", digits_graph(epochs=200, batch_size=8))
    spec = launch(sessions, config, task)
    with sessions() as db:
        db.execute(update(Task).where(Task.id == task.id).values(stop_requested=True))
        db.commit()
    assert run(spec) == "STOPPED"
    row = load(sessions, task.id)
    assert row.status == TaskStatus.STOPPED and not row.stop_requested and row.error is None
    assert list((config.artifacts_dir / task.id / "checkpoints").glob("ckpt-*.pt"))


def test_an_attempt_that_no_longer_owns_the_task_does_nothing(
    sessions: sessionmaker[Session], config: WorkerConfig, make_task: MakeTask, make_user: Any
) -> None:
    task = make_task(make_user("alice"), "taken")
    spec = launch(sessions, config, task)
    with sessions() as db:
        db.execute(update(Task).where(Task.id == task.id).values(worker_ref="dragdl-other-2"))
        db.commit()
    assert run(spec) == SUPERSEDED
    assert load(sessions, task.id).status == TaskStatus.RUNNING
    assert not (config.artifacts_dir / task.id).exists()


def test_errors_are_described_with_their_node() -> None:
    graph = digits_graph()
    invalid = GraphInvalid([GraphError(code="shape", message="too small", node_id="dense")])
    assert describe_error(invalid, graph) == {
        "code": "graph_invalid",
        "message": "[node dense] too small (shape)",
        "node_id": "dense",
    }
    layer = describe_error(LayerRuntimeError("dense", "mat1 and mat2 shapes cannot be multiplied"), graph)
    assert layer == {
        "code": "layer_failed",
        "message": "node dense: mat1 and mat2 shapes cannot be multiplied",
        "node_id": "dense",
    }
    loader = DatasetError(
        "Caught DatasetError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
        '  File "x.py", line 1\n'
        "dragdl.engine.data.base.DatasetError: cannot decode image a/5.png: truncated\n"
    )
    assert describe_error(loader, graph)["message"] == "node data: cannot decode image a/5.png: truncated"
    other = describe_error(ZeroDivisionError("division by zero"), graph)
    assert other == {
        "code": "train_failed",
        "message": "ZeroDivisionError: division by zero",
        "node_id": None,
    }


def error_lines(config: WorkerConfig, task: Task) -> list[str]:
    log = (config.artifacts_dir / task.id / "log.txt").read_text().splitlines()
    return [line.split(" ERROR   ", 1)[1] for line in log if " ERROR   " in line]


def test_the_log_tells_an_error_once_whether_training_or_the_worker_caught_it(
    sessions: sessionmaker[Session],
    config: WorkerConfig,
    make_task: MakeTask,
    make_user: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice = make_user("alice")
    corrupt = make_task(alice, "corrupt", corrupt_folder_graph(tmp_path / "images"))
    assert run(launch(sessions, config, corrupt)) == "FAILED"  # the dataset fails before training
    (before,) = error_lines(config, corrupt)
    assert before.startswith("training failed (dataset_invalid): node data: cannot decode image")

    def full_disk(self: object) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr("dragdl.engine.train.trainer._Run._end_epoch", full_disk)
    task = make_task(alice, "full", digits_graph(epochs=1))
    assert run(launch(sessions, config, task)) == "FAILED"
    assert error_lines(config, task) == ["training failed (train_failed): OSError: no space left on device"]
    assert load(sessions, task.id).error == {
        "code": "train_failed",
        "message": "OSError: no space left on device",
        "node_id": None,
    }
