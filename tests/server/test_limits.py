"""Per-user limits: storage quotas for datasets and artifacts, caps on a task's CPUs, GPUs and workers.

Defaults come from the settings, administrators set them per user, the account shows them with the
storage in use, and what goes over them is refused with a message naming the quota, the usage and
the size, leaving everything else of the user as it was.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.db.models import Dataset
from dragdl.server.settings import Settings

from ..graphs import chain
from ..servers import IdleRunner
from .hostile.corpus import bitmaps

GRAPH = chain(
    "Limits",
    [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flat", "layer.Flatten", {}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu", "seed": 0}),
    ],
)
NPY = [("files", ("cats.npy", bitmaps(4))), ("files", ("dogs.npy", bitmaps(4, value=255)))]


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=db_url,
        dataset_quota_bytes=20_000,
        artifact_quota_bytes=5_000,
        max_cpus_per_task=2.0,
        max_gpus_per_task=0.0,
    )


@pytest.fixture
def idle(app: FastAPI, client: TestClient) -> None:
    """Tasks stay queued: these tests are about what is accepted, not about training."""
    app.state.runner.shutdown()
    app.state.runner = IdleRunner()


def set_limits(admin: TestClient, user: TestClient, **limits: Any) -> dict[str, Any]:
    user_id = user.user["id"]  # type: ignore[attr-defined]
    response = admin.patch(f"/api/users/{user_id}", json=limits)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def account(client: TestClient) -> dict[str, Any]:
    response = client.get("/api/users/me")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_account_shows_the_limits_in_force_and_the_storage_used(
    admin_client: TestClient, user_client: TestClient, settings: Settings, idle: None
) -> None:
    first = account(user_client)
    assert first["user"]["username"] == "alice"
    assert first["limits"] == {
        "max_running_tasks": 2,
        "dataset_quota_bytes": 20_000,
        "artifact_quota_bytes": 5_000,
        "max_cpus_per_task": 2.0,
        "max_gpus_per_task": 0.0,
        "max_workers_per_task": 4,
    }
    assert first["usage"] == {"datasets_bytes": 0, "artifacts_bytes": 0}

    dataset = user_client.post("/api/datasets", files=NPY)
    assert dataset.status_code == 201, dataset.text
    task = user_client.post("/api/tasks", json={"graph": GRAPH})
    assert task.status_code == 201, task.text
    (settings.artifacts_dir / task.json()["id"]).mkdir(parents=True)
    (settings.artifacts_dir / task.json()["id"] / "log.txt").write_bytes(b"x" * 1234)

    changed = set_limits(admin_client, user_client, dataset_quota_bytes=50_000, max_cpus_per_task=3)
    assert changed["dataset_quota_bytes"] == 50_000 and changed["artifact_quota_bytes"] is None
    after = account(user_client)
    assert after["usage"] == {"datasets_bytes": dataset.json()["size_bytes"], "artifacts_bytes": 1234}
    assert after["limits"]["dataset_quota_bytes"] == 50_000
    assert after["limits"]["max_cpus_per_task"] == 3.0
    assert after["limits"]["artifact_quota_bytes"] == 5_000  # not set: the server default
    assert after["user"]["dataset_quota_bytes"] == 50_000
    assert (
        admin_client.patch(f"/api/users/{after['user']['id']}", json={"dataset_quota_bytes": -1}).status_code
        == 422
    )


def test_an_upload_over_the_dataset_quota_is_refused_and_nothing_is_kept(
    admin_client: TestClient,
    user_client: TestClient,
    other_client: TestClient,
    settings: Settings,
    db_session: Session,
) -> None:
    kept = user_client.post("/api/datasets", files=NPY)
    assert kept.status_code == 201, kept.text
    used = kept.json()["size_bytes"]
    theirs = other_client.post("/api/datasets", files=NPY)
    assert theirs.status_code == 201, theirs.text
    set_limits(admin_client, user_client, dataset_quota_bytes=used + 100)

    refused = user_client.post("/api/datasets", files=NPY)
    assert refused.status_code == 413, refused.text
    message = refused.json()["detail"]
    assert f"{used} bytes" in message or f"use {used} of" in message, message
    assert f"quota of {used + 100} bytes" in message and f"takes {used} bytes" in message, message

    ids = {kept.json()["id"], theirs.json()["id"]}
    assert {row.id for row in db_session.scalars(select(Dataset))} == ids
    assert {entry.name for entry in settings.datasets_dir.iterdir()} == ids
    assert user_client.get(f"/api/datasets/{kept.json()['id']}").status_code == 200

    set_limits(admin_client, user_client, dataset_quota_bytes=used)  # full: refused before receiving
    full = user_client.post("/api/datasets", files=NPY)
    assert full.status_code == 413 and f"use {used} bytes of your dataset quota" in full.json()["detail"]
    assert {entry.name for entry in settings.datasets_dir.iterdir()} == ids
    assert other_client.post("/api/datasets", files=NPY).status_code == 201  # bob's quota is his own


def test_a_submission_is_refused_while_the_artifacts_fill_the_quota(
    admin_client: TestClient,
    user_client: TestClient,
    other_client: TestClient,
    settings: Settings,
    idle: None,
) -> None:
    task = user_client.post("/api/tasks", json={"graph": GRAPH})
    assert task.status_code == 201, task.text
    task_id = task.json()["id"]
    folder = settings.artifacts_dir / task_id / "checkpoints"
    folder.mkdir(parents=True)
    (folder / "last.pt").write_bytes(b"x" * 6_000)

    refused = user_client.post("/api/tasks", json={"graph": GRAPH})
    assert refused.status_code == 409, refused.text
    assert "use 6000 bytes of your artifact quota of 5000 bytes" in refused.json()["detail"]
    clone = user_client.post(f"/api/tasks/{task_id}/clone")
    assert clone.status_code == 409 and "artifact quota" in clone.json()["detail"]
    assert user_client.get("/api/tasks").json()["count"] == 1
    assert other_client.post("/api/tasks", json={"graph": GRAPH}).status_code == 201

    set_limits(admin_client, user_client, artifact_quota_bytes=10_000)
    assert user_client.post("/api/tasks", json={"graph": GRAPH}).status_code == 201


def test_resources_above_the_users_caps_are_refused_on_the_train_node(
    admin_client: TestClient, user_client: TestClient, idle: None
) -> None:
    too_many = user_client.post("/api/tasks", json={"graph": GRAPH, "resources": {"cpus": 8}})
    assert too_many.status_code == 422, too_many.text
    (problem,) = too_many.json()["detail"]["errors"]
    assert problem["code"] == "resources_over_cap"
    assert problem["node_id"] == "train" and problem["field"] == "resources.cpus"
    assert "8 CPUs" in problem["message"] and "2" in problem["message"]
    gpu = user_client.post("/api/tasks", json={"graph": GRAPH, "resources": {"gpus": 1}})
    assert gpu.status_code == 422 and gpu.json()["detail"]["errors"][0]["field"] == "resources.gpus"
    assert user_client.get("/api/tasks").json()["count"] == 0

    # A distributed run's workers count in all: 3 workers of 1 CPU are 3 CPUs.
    workers = copy.deepcopy(GRAPH)
    workers["nodes"][-1]["params"].update(workers=3, cpus_per_worker=1.0)
    wide = user_client.post("/api/tasks", json={"graph": workers})
    assert wide.status_code == 422, wide.text
    (problem,) = wide.json()["detail"]["errors"]
    assert problem["code"] == "resources_over_cap" and problem["field"] == "workers"
    assert "3 workers ask for 3 CPUs in all" in problem["message"]

    auto = user_client.post("/api/tasks", json={"graph": GRAPH, "resources": {"cpus": 2}})
    assert auto.status_code == 201 and auto.json()["resources"] == {"cpus": 2.0, "gpus": 0.0}
    set_limits(admin_client, user_client, max_cpus_per_task=8, max_gpus_per_task=1)
    allowed = user_client.post("/api/tasks", json={"graph": GRAPH, "resources": {"cpus": 8}})
    assert allowed.status_code == 201, allowed.text
    set_limits(admin_client, user_client, max_cpus_per_task=4)
    clone = user_client.post(f"/api/tasks/{allowed.json()['id']}/clone")
    assert clone.status_code == 422 and clone.json()["detail"]["errors"][0]["node_id"] == "train"


def distributed(**train: Any) -> dict[str, Any]:
    graph = copy.deepcopy(GRAPH)
    graph["nodes"][-1]["params"].update(batch_size=512, **train)
    return graph


def test_a_distributed_run_is_capped_in_workers_each_with_a_real_share_of_a_cpu(
    admin_client: TestClient, user_client: TestClient, idle: None
) -> None:
    # 200 processes of about 0.5 GB each, within a 2-CPU cap at 0.01 CPU apiece: refused on both fields.
    swarm = user_client.post("/api/tasks", json={"graph": distributed(workers=200, cpus_per_worker=0.01)})
    assert swarm.status_code == 422, swarm.text
    problems = {p["field"]: p for p in swarm.json()["detail"]["errors"]}
    assert problems["workers"]["code"] == "workers_over_cap" and problems["workers"]["node_id"] == "train"
    assert "200 workers" in problems["workers"]["message"] and "at most 4" in problems["workers"]["message"]
    assert problems["cpus_per_worker"]["code"] == "worker_share_too_small"
    assert "0.01 CPUs" in problems["cpus_per_worker"]["message"]

    fair = user_client.post("/api/tasks", json={"graph": distributed(workers=4, cpus_per_worker=0.5)})
    assert fair.status_code == 201, fair.text
    changed = set_limits(admin_client, user_client, max_workers_per_task=2)
    assert changed["max_workers_per_task"] == 2
    assert account(user_client)["limits"]["max_workers_per_task"] == 2
    again = user_client.post("/api/tasks", json={"graph": distributed(workers=4, cpus_per_worker=0.5)})
    assert again.status_code == 422 and again.json()["detail"]["errors"][0]["field"] == "workers"
    clone = user_client.post(f"/api/tasks/{fair.json()['id']}/clone")  # a clone is admitted again
    assert clone.status_code == 422 and clone.json()["detail"]["errors"][0]["code"] == "workers_over_cap"
    assert user_client.get("/api/tasks").json()["count"] == 1


SEARCHED_LR = {"lr": {"type": "float", "low": 0.001, "high": 0.1, "log": True}}


def test_a_sweep_passes_the_admission_of_a_task_for_every_value_it_searches(
    user_client: TestClient, settings: Settings, idle: None
) -> None:
    def sweep(graph: dict[str, Any], **body: Any) -> Any:
        return user_client.post("/api/sweeps", json={"graph": graph, "trials": 2, **body})

    # Workers times CPUs against the cap (3 x 1 CPU > 2): as a task would be.
    wide = distributed(workers=3, cpus_per_worker=1.0)
    wide["search"] = {"train": SEARCHED_LR}
    refused = sweep(wide)
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"]["errors"][0]["code"] == "resources_over_cap"

    # A searched worker count above the cap, a share below the least: named with the searched value.
    searched = distributed(workers=2, cpus_per_worker=0.5)
    searched["search"] = {"train": {"workers": {"type": "int", "low": 2, "high": 200}}}
    over = sweep(searched)
    assert over.status_code == 422, over.text
    (problem,) = over.json()["detail"]["errors"]
    assert problem["field"] == "workers" and "train.workers=200" in problem["message"]
    share = distributed(workers=2, cpus_per_worker=0.5)
    share["search"] = {"train": {"cpus_per_worker": {"type": "choice", "values": [0.5, 0.01]}}}
    small = sweep(share)
    assert small.status_code == 422 and small.json()["detail"]["errors"][0]["field"] == "cpus_per_worker"
    cuda = copy.deepcopy(GRAPH)
    cuda["search"] = {"train": {"device": {"type": "choice", "values": ["cpu", "cuda"]}}}
    gpu = sweep(cuda)  # this user may have no GPU: a trial on cuda could never start
    assert gpu.status_code == 422, gpu.text
    assert user_client.get("/api/sweeps").json()["count"] == 0
    assert user_client.get("/api/tasks").json()["count"] == 0


def test_each_new_trial_is_admitted_and_a_sweep_over_quota_starts_none(
    app: FastAPI, user_client: TestClient, settings: Settings, db_session: Session, idle: None
) -> None:
    from dragdl.db.models import User
    from dragdl.server.services.admission import trial_admission

    check = trial_admission(settings, app.state.runner)
    user = db_session.scalar(select(User).where(User.username == "alice"))
    assert user is not None
    resources = {"cpus": 1.0, "gpus": 0.0}
    assert check(db_session, user.id, copy.deepcopy(GRAPH), resources) is None
    too_wide = check(db_session, user.id, distributed(workers=3, cpus_per_worker=1.0), resources)
    assert too_wide is not None and "3 workers ask for 3 CPUs" in too_wide
    task = user_client.post("/api/tasks", json={"graph": GRAPH})
    assert task.status_code == 201, task.text
    (settings.artifacts_dir / task.json()["id"]).mkdir(parents=True)
    (settings.artifacts_dir / task.json()["id"] / "last.pt").write_bytes(b"x" * 6_000)
    over = check(db_session, user.id, copy.deepcopy(GRAPH), resources)
    assert over is not None and "artifact quota of 5000 bytes" in over


def test_a_single_process_task_reserves_at_least_a_real_share_of_a_cpu(
    user_client: TestClient, idle: None
) -> None:
    """A sliver of a CPU per task would let a few accounts start more processes than there are cores."""
    sliver = user_client.post("/api/tasks", json={"graph": GRAPH, "resources": {"cpus": 0.0001}})
    assert sliver.status_code == 422, sliver.text
    (problem,) = sliver.json()["detail"]["errors"]
    assert (problem["code"], problem["field"], problem["node_id"]) == (
        "worker_share_too_small",
        "resources.cpus",
        "train",
    )
    assert "0.0001 CPUs" in problem["message"] and "at least 0.5" in problem["message"]
    half = user_client.post("/api/tasks", json={"graph": GRAPH, "resources": {"cpus": 0.5}})
    assert half.status_code == 201, half.text
