"""Sweeps through the server on a real local Ray and both databases: the trials are tasks of the
user, a poor trial is pruned and its task stopped, the best trial's graph and model are served, and
the sweep is refused with a 422 naming the field when it cannot run."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from dragdl.engine.graph.search import SearchSection
from dragdl.engine.sweep.study import StoredTrial, SweepPlan, ask

from ..runner.support import kill_task_workers, start_shared_ray, wait_for

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "dragdl" / "examples"
FINAL_SWEEP = ("SUCCEEDED", "STOPPED", "FAILED")


@pytest.fixture
def ray_cluster(request: pytest.FixtureRequest) -> Iterator[None]:
    if start_shared_ray():
        import ray

        request.config.add_cleanup(ray.shutdown)
    yield
    kill_task_workers()


def iris(search: dict[str, Any], **train: Any) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads((EXAMPLES / "logistic_regression_iris.json").read_text())
    node = next(n for n in graph["nodes"] if n["id"] == "train")
    node["params"].update({"epochs": 3, "device": "cpu", "early_stopping": False, **train})
    graph["search"] = search
    return graph


def create(client: TestClient, graph: dict[str, Any], **body: Any) -> dict[str, Any]:
    response = client.post("/api/sweeps", json={"graph": graph, **body})
    assert response.status_code == 201, response.text
    sweep: dict[str, Any] = response.json()
    return sweep


def wait_sweep(client: TestClient, sweep_id: str, timeout_s: float = 240) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        sweep: dict[str, Any] = client.get(f"/api/sweeps/{sweep_id}").json()
        return sweep if sweep["status"] in FINAL_SWEEP else None

    return wait_for(ended, timeout_s, f"sweep {sweep_id} to end")


LR = {"lr": {"type": "float", "low": 0.01, "high": 0.3, "log": True}}


def test_a_sweep_without_search_or_with_a_foreign_objective_is_refused(user_client: TestClient) -> None:
    no_search = user_client.post("/api/sweeps", json={"graph": iris({})})
    assert no_search.status_code == 422, no_search.text
    assert [(e["code"], e["field"]) for e in no_search.json()["detail"]["errors"]] == [
        ("sweep_invalid", "search")
    ]
    wrong = user_client.post("/api/sweeps", json={"graph": iris({"train": LR}), "objective": "val_r2"})
    assert wrong.status_code == 422
    assert [(e["code"], e["node_id"], e["field"]) for e in wrong.json()["detail"]["errors"]] == [
        ("sweep_invalid", "train", "objective")
    ]
    bad_range = user_client.post(
        "/api/sweeps", json={"graph": iris({"train": {"lr": {"type": "float", "low": -1, "high": 1}}})}
    )
    assert bad_range.status_code == 422
    assert [(e["code"], e["node_id"], e["field"]) for e in bad_range.json()["detail"]["errors"]] == [
        ("search_value_invalid", "train", "lr")
    ]
    no_grid = user_client.post("/api/sweeps", json={"graph": iris({"train": LR}), "sampler": "grid"})
    assert no_grid.status_code == 422
    assert [(e["code"], e["field"]) for e in no_grid.json()["detail"]["errors"]] == [("sweep_invalid", "lr")]


@pytest.mark.usefixtures("ray_cluster")
def test_the_trials_are_tasks_of_the_user_and_the_best_is_served(
    user_client: TestClient, other_client: TestClient
) -> None:
    graph = iris({"train": {**LR, "batch_size": {"type": "choice", "values": [8, 16]}}})
    sweep = create(user_client, graph, trials=4, parallel=2, sampler="random", pruner="none", seed=5)
    assert sweep["objective"] == "val_accuracy" and sweep["direction"] == "maximize"
    assert other_client.get(f"/api/sweeps/{sweep['id']}").status_code == 404
    assert other_client.post(f"/api/sweeps/{sweep['id']}/stop").status_code == 404
    done = wait_sweep(user_client, sweep["id"])
    assert done["status"] == "SUCCEEDED"
    trials = done["trial_list"]
    assert [t["state"] for t in trials] == ["COMPLETE"] * 4
    assert len({t["params"]["train.lr"] for t in trials}) == 4
    tasks = {t["id"]: t for t in user_client.get("/api/tasks").json()["data"]}
    for trial in trials:
        task = tasks[trial["task_id"]]  # listed in the user's own task center
        assert task["status"] == "SUCCEEDED"
        detail = user_client.get(f"/api/tasks/{trial['task_id']}").json()
        train = next(n for n in detail["graph"]["nodes"] if n["id"] == "train")
        assert train["params"]["lr"] == trial["params"]["train.lr"]
        assert train["params"]["batch_size"] == trial["params"]["train.batch_size"]
        assert "search" not in detail["graph"]
        assert trial["value"] == detail["best_metrics"]["val_accuracy"]
        assert sorted(trial["intermediate"]) == ["1", "2", "3"]
    best = max(trials, key=lambda t: (t["value"], -t["number"]))
    assert done["best_trial"] == best["number"] and done["best_value"] == best["value"]
    best_graph = user_client.get(f"/api/sweeps/{sweep['id']}/best-graph").json()
    assert (
        next(n for n in best_graph["nodes"] if n["id"] == "train")["params"]["lr"]
        == best["params"]["train.lr"]
    )
    # Each trial left a model, but the model list keeps them out until one is registered.
    models = user_client.get("/api/models").json()
    assert (models["count"], models["hidden_trials"]) == (0, 4)
    everything = user_client.get("/api/models", params={"trials": "true"}).json()
    assert sorted(m["task_id"] for m in everything["data"]) == sorted(t["task_id"] for t in trials)
    asked = user_client.get("/api/models", params={"task_id": trials[0]["task_id"]}).json()
    assert [m["task_id"] for m in asked["data"]] == [trials[0]["task_id"]]
    registered = user_client.post(f"/api/sweeps/{sweep['id']}/register-best")
    assert registered.status_code == 200, registered.text
    model = user_client.get(f"/api/models/{registered.json()['model_id']}").json()
    assert model["task_id"] == best["task_id"] and model["name"].endswith("(best of sweep)")
    models = user_client.get("/api/models").json()
    assert ([m["id"] for m in models["data"]], models["hidden_trials"]) == ([model["id"]], 3)
    # The sweep says which model it registered, and its graph (the UI names the params by title).
    again = user_client.get(f"/api/sweeps/{sweep['id']}").json()
    assert again["best_model_id"] == model["id"] and again["base_graph"]["search"] == graph["search"]
    # The web UI names the model in its reader's language.
    zh_name = "鸢尾花 · 扫描最佳"
    named = user_client.post(f"/api/sweeps/{sweep['id']}/register-best", json={"name": zh_name})
    assert named.json()["name"] == zh_name
    assert user_client.get(f"/api/models/{model['id']}").json()["name"] == zh_name
    listed = user_client.get("/api/sweeps").json()
    assert listed["count"] == 1 and listed["data"][0]["counts"]["COMPLETE"] == 4
    assert other_client.get("/api/sweeps").json()["count"] == 0


def seed_putting_last(section: dict[str, Any], value: float, trials: int) -> int:
    """A grid seed whose order visits `value` last (found with the sweep's own Optuna grid)."""
    space = TypeAdapter(SearchSection).validate_python(section)
    for seed in range(100):
        plan = SweepPlan(space, "maximize", sampler="grid", seed=seed, trials=trials)
        stored: list[StoredTrial] = []
        for number in range(trials):
            params, attrs = ask(plan, stored)
            stored.append(StoredTrial(number, params, "RUNNING", system_attrs=attrs))
        if stored[-1].params["train.lr"] == value:
            return seed
    raise AssertionError("no seed puts the value last")


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_poor_trial_is_pruned_and_its_task_stopped(user_client: TestClient) -> None:
    tiny = 1e-9  # the network stays at its initial guess: far below the others at every epoch
    section = {"train": {"lr": {"type": "choice", "values": [0.05, 0.1, tiny]}}}
    graph = iris(section, epochs=60, batch_size=1)
    seed = seed_putting_last(copy.deepcopy(section), tiny, 3)
    sweep = create(user_client, graph, trials=3, parallel=1, sampler="grid", pruner="median", seed=seed)
    done = wait_sweep(user_client, sweep["id"], timeout_s=400)
    trials = done["trial_list"]
    assert [t["state"] for t in trials] == ["COMPLETE", "COMPLETE", "PRUNED"]
    pruned = trials[2]
    assert pruned["params"]["train.lr"] == tiny
    task = wait_for(
        lambda: (t := user_client.get(f"/api/tasks/{pruned['task_id']}").json())["status"] != "RUNNING" and t,
        60,
        "the pruned trial's task to end",
    )
    assert task["status"] == "STOPPED"
    assert task["epoch"] < 60  # stopped before it trained to the end
    assert len(pruned["intermediate"]) < 60


def test_a_sweep_continues_to_its_budget_after_a_server_restart(tmp_path: Path) -> None:
    """`dragdl serve` stopped (SIGTERM) while a trial trains, then started again on the same data:
    the sweep goes on to its budget; then `dragdl sweep` runs a sweep on it to its end."""
    import os
    import subprocess
    import sys

    import httpx

    from ..servers import dragdl_serve

    env = {**os.environ, "DRAGDL_MAX_RUNNING_PER_USER": "1"}
    graph = iris({"train": LR}, epochs=30, batch_size=1)
    headers = {"X-Requested-With": "dragdl-test"}
    with (
        dragdl_serve(tmp_path / "data", tmp_path / "first.log", "--no-auth", env=env) as url,
        httpx.Client(base_url=url, timeout=30, headers=headers) as api,
    ):
        created = api.post("/api/sweeps", json={"graph": graph, "trials": 3, "parallel": 1, "pruner": "none"})
        assert created.status_code == 201, created.text
        sweep_id = created.json()["id"]

        def training() -> bool:
            sweep = api.get(f"/api/sweeps/{sweep_id}").json()
            return any(t["task_status"] == "RUNNING" for t in sweep["trial_list"])

        wait_for(training, 120, "a trial to train")
    with dragdl_serve(tmp_path / "data", tmp_path / "second.log", "--no-auth", env=env) as url:
        with httpx.Client(base_url=url, timeout=30, headers=headers) as api:

            def ended() -> dict[str, Any] | None:
                sweep: dict[str, Any] = api.get(f"/api/sweeps/{sweep_id}").json()
                return sweep if sweep["status"] in FINAL_SWEEP else None

            done = wait_for(ended, 300, "the sweep to end after the restart")
            assert done["status"] == "SUCCEEDED"
            assert [t["state"] for t in done["trial_list"]] == ["COMPLETE"] * 3
        graph_file = tmp_path / "graph.json"
        graph_file.write_text(json.dumps(iris({"train": LR})))
        command = [sys.executable, "-c", "from dragdl.cli import app; app()", "sweep", str(graph_file)]
        options = ["--trials", "2", "--parallel", "2", "--pruner", "none", "--server", url]
        cli = subprocess.run([*command, *options], capture_output=True, text=True, env=env, check=False)
        assert cli.returncode == 0, cli.stdout + cli.stderr
        assert "trial 2: COMPLETE" in cli.stdout and "best: trial" in cli.stdout
        # The SDK registers the best model of the restarted sweep under a name of its own.
        from dragdl.client import DragDLClient

        with DragDLClient(url) as sdk:
            registered = sdk.register_best(sweep_id, name="iris, best")
            assert registered["name"] == "iris, best"
            assert sdk.get_sweep(sweep_id).best_model_id == registered["model_id"]
