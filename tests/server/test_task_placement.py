"""A task no node can hold, through the API on a real local Ray: queued with its reason while the
server does not know the cluster yet, refused at submission (422 naming the resources) once it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dragdl.server.settings import Settings

from ..runner.support import digits_graph, wait_for
from .test_tasks import SQLITE, get, no_workers_left, ray_cluster, submit

__all__ = ["no_workers_left", "ray_cluster"]  # the fixtures, used here too

TOO_MANY_CPUS = 200.0
"""More than any node of the test machine has, within the raised cap below."""


@pytest.fixture
def settings(tmp_path: Path, db_url: str) -> Settings:
    # Caps raised so that the cluster, not the caps, refuses the large task and the 100 workers.
    return Settings(
        data_dir=tmp_path / "data", database_url=db_url, max_cpus_per_task=256.0, max_workers_per_task=128
    )


@SQLITE
def test_a_task_larger_than_every_node_waits_with_its_reason_then_is_refused_once_the_cluster_is_known(
    user_client: TestClient, app: FastAPI
) -> None:
    resources = {"cpus": TOO_MANY_CPUS, "gpus": 0}
    # The runner joins Ray only once there is work: this first task is queued unchecked.
    first = submit(user_client, digits_graph(epochs=1), resources=resources)
    waiting = wait_for(
        lambda: (task := get(user_client, first["id"]))["queued_reason"] and task,
        60,
        "the queued task's reason",
    )
    assert waiting["status"] == "QUEUED"
    reason = waiting["queued_reason"]
    assert reason["code"] == "no_node_fits" and reason["details"]["cpus"] == TOO_MANY_CPUS
    largest = reason["details"]["node_cpus"]
    assert 0 < largest < TOO_MANY_CPUS and f"has {largest:g} CPUs" in reason["message"]
    listed = user_client.get("/api/tasks").json()["data"]
    assert [t["queued_reason"]["code"] for t in listed if t["id"] == first["id"]] == ["no_node_fits"]

    refused = user_client.post("/api/tasks", json={"graph": digits_graph(epochs=1), "resources": resources})
    assert refused.status_code == 422, refused.text
    [error] = refused.json()["detail"]["errors"]
    assert error["code"] == "resources_exceed_nodes" and error["field"] == "resources.cpus"
    assert error["node_id"] == "train"
    assert error["details"] == {"requested": TOO_MANY_CPUS, "largest": largest}
    assert f"{TOO_MANY_CPUS:g} CPUs" in error["message"]

    # A task one node can hold is still accepted, and runs past the waiting one.
    small = submit(user_client, digits_graph(epochs=1), resources={"cpus": 1, "gpus": 0})
    done = wait_for(
        lambda: (task := get(user_client, small["id"]))["status"] in ("SUCCEEDED", "FAILED") and task,
        120,
        "the small task to end",
    )
    assert done["status"] == "SUCCEEDED", done["error"]
    assert get(user_client, first["id"])["status"] == "QUEUED"
    assert user_client.delete(f"/api/tasks/{first['id']}").status_code == 204

    # A distributed run whose workers each fit a node, but not all of them on the cluster.
    many = digits_graph(epochs=1, batch_size=128, workers=100, cpus_per_worker=1.0)
    refused = user_client.post("/api/tasks", json={"graph": many})
    assert refused.status_code == 422, refused.text
    [error] = refused.json()["detail"]["errors"]
    assert error["code"] == "workers_exceed_cluster" and error["field"] == "workers"
    assert error["node_id"] == "train" and error["details"]["requested"] == 100
    assert 0 < error["details"]["largest"] < 100
