"""Sweeps that cannot take the service down (issue 23, findings 2, 3, 10 and 11), on both databases:
a grid too large is refused by its count, one sweep's error fails that sweep and no other, the
importance is computed once per settled trial off the request path, and a stopped sweep starts
nothing. The driver runs for real on the database, without Ray (nothing here trains)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import event, select
from sqlalchemy.orm import Session, sessionmaker

from dragdl.db.migrate import upgrade_database
from dragdl.db.models import Sweep, SweepStatus, SweepTrial, Task, TaskStatus, User
from dragdl.db.session import make_engine, make_session_factory
from dragdl.runner.sweep_driver import SweepDriver
from dragdl.server.services import sweeps as sweep_service

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "dragdl" / "examples"
LR = {"lr": {"type": "float", "low": 0.01, "high": 0.3, "log": True}}


def iris(search: dict[str, Any]) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads((EXAMPLES / "logistic_regression_iris.json").read_text())
    next(n for n in graph["nodes"] if n["id"] == "train")["params"].update(epochs=2, device="cpu")
    graph["search"] = search
    return graph


@pytest.fixture
def sessions(db_url: str) -> Iterator[sessionmaker[Session]]:
    upgrade_database(db_url)
    engine = make_engine(db_url)
    yield make_session_factory(engine)
    engine.dispose()


def add_user(sessions: sessionmaker[Session], name: str) -> int:
    with sessions() as db:
        user = User(username=name, password_hash="!")
        db.add(user)
        db.commit()
        return user.id


def add_sweep(sessions: sessionmaker[Session], owner: int, graph: dict[str, Any], **values: Any) -> str:
    columns: dict[str, Any] = {
        "name": "s",
        "status": SweepStatus.RUNNING,
        "trials": 8,
        "parallel": 2,
        "objective": "val_accuracy",
        "direction": "maximize",
        "sampler": "random",
        "pruner": "none",
        "resources": {"cpus": 1.0, "gpus": 0.0},
        **values,
    }
    with sessions() as db:
        sweep = Sweep(owner_id=owner, base_graph=graph, **columns)
        db.add(sweep)
        db.commit()
        return sweep.id


def trial_tasks(sessions: sessionmaker[Session], sweep_id: str) -> list[Task]:
    with sessions() as db:
        ids = db.scalars(select(SweepTrial.task_id).where(SweepTrial.sweep_id == sweep_id))
        return list(db.scalars(select(Task).where(Task.id.in_(list(ids)))))


def sweep_row(sessions: sessionmaker[Session], sweep_id: str) -> Sweep:
    with sessions() as db:
        sweep = db.get(Sweep, sweep_id)
        assert sweep is not None
        return sweep


# -- finding 2 --------------------------------------------------------------------------------------


def test_a_grid_above_the_limit_is_refused_naming_it(user_client: TestClient) -> None:
    steps = {"type": "float", "low": 0.0, "high": 0.999, "step": 0.001}  # 1000 values each
    graph = iris({"train": {"momentum": steps, "weight_decay": steps}})
    warm = user_client.post("/api/sweeps", json={"graph": iris({}), "sampler": "grid"})  # imports the engine
    assert warm.status_code == 422, warm.text
    started = time.perf_counter()
    response = user_client.post("/api/sweeps", json={"graph": graph, "sampler": "grid"})
    assert response.status_code == 422, response.text
    [error] = response.json()["detail"]["errors"]
    assert (error["code"], error["field"]) == ("sweep_invalid", "sampler")
    assert "100000 points" in error["message"] and "momentum: 1000" in error["message"]
    assert time.perf_counter() - started < 5


# -- finding 3 --------------------------------------------------------------------------------------


def test_one_sweeps_error_fails_that_sweep_and_the_others_go_on(sessions: sessionmaker[Session]) -> None:
    owner = add_user(sessions, "alice")
    # Rows no submission passes today (a node the graph lacks; a value the param refuses), written
    # before a check existed: each must fail its own sweep, whichever the driver meets first.
    ghost = add_sweep(sessions, owner, iris({"ghost": LR}), id="0" * 32)
    zero = iris({"train": {"lr": {"type": "choice", "values": [0.0]}}})
    refused = add_sweep(sessions, owner, zero, id="z" * 32)
    good = add_sweep(sessions, owner, iris({"train": LR}), id="m" * 32)
    driver = SweepDriver(sessions, lambda: None)
    driver.tick()
    assert len(trial_tasks(sessions, good)) == 2  # its parallelism
    for sweep_id, words in ((ghost, "'ghost'"), (refused, "lr = 0.0")):
        failed = sweep_row(sessions, sweep_id)
        assert failed.status == SweepStatus.FAILED
        assert failed.error is not None and words in failed.error
        assert trial_tasks(sessions, sweep_id) == []
    driver.tick()  # a failed sweep is left alone; the good one goes on
    assert sweep_row(sessions, good).status == SweepStatus.RUNNING


# -- finding 11 -------------------------------------------------------------------------------------


def test_stopping_a_sweep_stops_its_queued_trials_in_the_same_commit(sessions: sessionmaker[Session]) -> None:
    owner = add_user(sessions, "alice")
    sweep_id = add_sweep(sessions, owner, iris({"train": LR}), parallel=8)
    SweepDriver(sessions, lambda: None).tick()
    assert [t.status for t in trial_tasks(sessions, sweep_id)] == [TaskStatus.QUEUED] * 8
    seen: list[tuple[SweepStatus, list[TaskStatus]]] = []

    def after_commit(session: Session) -> None:
        # What the scheduler could read right after each commit of the stop.
        seen.append(
            (sweep_row(sessions, sweep_id).status, [t.status for t in trial_tasks(sessions, sweep_id)])
        )

    with sessions() as db:
        event.listen(db, "after_commit", after_commit)
        sweep = db.get(Sweep, sweep_id)
        assert sweep is not None
        sweep_service.stop(db, sweep, None, None)
    assert seen, "the stop committed nothing"
    for status, tasks in seen:
        assert status == SweepStatus.STOPPED
        assert tasks == [TaskStatus.STOPPED] * 8, "a queued trial could start after its sweep stopped"


def test_a_driver_pass_that_read_the_sweep_before_the_stop_queues_nothing(
    sessions: sessionmaker[Session],
) -> None:
    owner = add_user(sessions, "alice")
    sweep_id = add_sweep(sessions, owner, iris({"train": LR}), parallel=4)
    driver = SweepDriver(sessions, lambda: None)
    with sessions() as pass_db:
        stale = pass_db.get(Sweep, sweep_id)  # the driver's pass read it RUNNING ...
        assert stale is not None and stale.status == SweepStatus.RUNNING
        with sessions() as user_db:  # ... then its owner stopped it
            sweep = user_db.get(Sweep, sweep_id)
            assert sweep is not None
            sweep_service.stop(user_db, sweep, None, None)
        driver.step(pass_db, stale)
    assert trial_tasks(sessions, sweep_id) == []
    assert sweep_row(sessions, sweep_id).status == SweepStatus.STOPPED


# -- finding 10 -------------------------------------------------------------------------------------


def settled_sweep(db: Session, owner: int, search: dict[str, Any], trials: int, params: Any) -> str:
    sweep = Sweep(
        owner_id=owner,
        name="done",
        base_graph=iris(search),
        status=SweepStatus.SUCCEEDED,
        trials=trials + 1,
        parallel=1,
        objective="val_accuracy",
        direction="maximize",
        sampler="random",
        pruner="none",
        resources={},
    )
    db.add(sweep)
    db.flush()
    db.add_all(
        SweepTrial(
            sweep_id=sweep.id,
            number=n,
            params=params(n),
            state="COMPLETE",
            value=0.5 + 0.4 * ((n * 7919) % 101) / 101,
            intermediate={},
            system_attrs={},
            last_event_id=0,
        )
        for n in range(trials)
    )
    db.commit()
    return sweep.id


def test_the_detail_never_computes_importance_itself(
    user_client: TestClient, db_session: Session, app: FastAPI
) -> None:
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    search = {"train": {**LR, "momentum": {"type": "float", "low": 0.0, "high": 0.9}}}
    sweep_id = settled_sweep(
        db_session,
        owner,
        search,
        1000,
        lambda n: {"train.lr": 0.01 + (n % 29) / 100, "train.momentum": (n % 7) / 10},
    )
    for _ in range(5):  # the sweep page polls
        started = time.perf_counter()
        response = user_client.get(f"/api/sweeps/{sweep_id}")
        assert response.status_code == 200, response.text
        assert time.perf_counter() - started < 3, "the detail computed the importance in the request"
    cache = app.state.importance
    assert cache.wait_idle(120)
    assert cache.computed == 1
    assert set(user_client.get(f"/api/sweeps/{sweep_id}").json()["importance"]) == {
        "train.lr",
        "train.momentum",
    }
    # One more settled trial: computed once more, however often it is read.
    db_session.add(
        SweepTrial(
            sweep_id=sweep_id,
            number=1000,
            params={"train.lr": 0.2, "train.momentum": 0.5},
            state="COMPLETE",
            value=0.7,
            intermediate={},
            system_attrs={},
            last_event_id=0,
        )
    )
    db_session.commit()
    for _ in range(3):
        assert user_client.get(f"/api/sweeps/{sweep_id}").status_code == 200
    assert cache.wait_idle(120)
    user_client.get(f"/api/sweeps/{sweep_id}")
    assert cache.computed == 2


def test_a_sweep_of_1500_params_answers_its_detail(
    user_client: TestClient, db_session: Session, app: FastAPI
) -> None:
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    names = [f"p{i}" for i in range(1500)]
    search = {"train": LR, **{name: {"x": {"type": "float", "low": 0.0, "high": 1.0}} for name in names}}
    sweep_id = settled_sweep(
        db_session,
        owner,
        search,
        4,
        lambda n: {
            "train.lr": 0.01 * (n + 1),
            **{f"{name}.x": ((n + i) % 5) / 5 for i, name in enumerate(names)},
        },
    )
    for _ in range(2):
        response = user_client.get(f"/api/sweeps/{sweep_id}")
        assert response.status_code == 200, response.text[:500]
        assert app.state.importance.wait_idle(300)
    assert isinstance(response.json()["importance"], dict)
