"""The graphs API: owner-scoped, versioned saves, templates, code, and validation with the user's data."""

from __future__ import annotations

import copy
import json
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.db.models import Dataset, Task, TaskStatus, User
from dragdl.server.services.data_context import check_graph_policy, data_context_for
from dragdl.server.settings import Settings

SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def example(name: str = "sketcher_cnn") -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files("dragdl.examples").joinpath(f"{name}.json").read_text())
    return data


def tiny_graph(kind: str = "dataset.builtin", **params: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "name": "Tiny",
        "nodes": [
            {"id": "data", "type": kind, "params": params or {"name": "mnist-5k"}},
            {"id": "flat", "type": "layer.Flatten"},
            {"id": "fc", "type": "layer.Linear", "params": {"out_features": "auto"}},
            {"id": "train", "type": "train.Classifier", "params": {"epochs": 1}},
        ],
        "edges": [
            {"source": "data", "target": "flat"},
            {"source": "flat", "target": "fc"},
            {"source": "fc", "target": "train"},
        ],
    }


def create(client: TestClient, graph: dict[str, Any] | None = None, **body: Any) -> dict[str, Any]:
    response = client.post("/api/graphs", json={"graph": graph or tiny_graph(), **body})
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_save_version_restore_and_delete(user_client: TestClient) -> None:
    graph = example()
    created = create(user_client, graph, name="My CNN")
    graph_id = created["id"]
    assert created["name"] == "My CNN" and created["current_version"] == 1
    assert created["graph"]["nodes"] == graph["nodes"]

    changed = copy.deepcopy(graph)
    changed["nodes"][2]["params"]["out_channels"] = 32
    saved = user_client.patch(f"/api/graphs/{graph_id}", json={"graph": changed})
    assert saved.status_code == 200 and saved.json()["current_version"] == 2
    assert (
        user_client.get(f"/api/graphs/{graph_id}").json()["graph"]["nodes"][2]["params"]["out_channels"] == 32
    )

    renamed = user_client.patch(f"/api/graphs/{graph_id}", json={"name": "Wider CNN"}).json()
    assert renamed["name"] == "Wider CNN" and renamed["current_version"] == 2  # a rename is not a save

    versions = user_client.get(f"/api/graphs/{graph_id}/versions").json()
    assert [v["version"] for v in versions] == [2, 1]
    first = user_client.get(f"/api/graphs/{graph_id}/versions/1").json()
    assert first["graph"]["nodes"][2]["params"]["out_channels"] == 16

    restored = user_client.post(f"/api/graphs/{graph_id}/versions/1/restore").json()
    assert restored["current_version"] == 3 and restored["graph"] == first["graph"]
    assert [v["version"] for v in user_client.get(f"/api/graphs/{graph_id}/versions").json()] == [3, 2, 1]

    assert user_client.delete(f"/api/graphs/{graph_id}").status_code == 204
    assert user_client.get(f"/api/graphs/{graph_id}").status_code == 404
    assert user_client.get(f"/api/graphs/{graph_id}/versions").status_code == 404


def test_a_graph_that_does_not_validate_can_still_be_saved(user_client: TestClient) -> None:
    graph = example()
    graph["nodes"][2]["params"]["kernel_size"] = 99
    del graph["edges"][0]
    created = create(user_client, graph)
    assert created["graph"]["nodes"][2]["params"]["kernel_size"] == 99


def test_a_graph_that_does_not_match_the_schema_is_refused_with_its_errors(user_client: TestClient) -> None:
    graph = tiny_graph()
    graph["nodes"][1]["id"] = "bad id!"
    graph["nodes"][2]["colour"] = "red"
    response = user_client.post("/api/graphs", json={"graph": graph})
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail["message"] == "the graph does not match the graph schema"
    fields = {(e["code"], e["field"], e["node_id"]) for e in detail["errors"]}
    assert ("schema_invalid", "nodes.1.id", "bad id!") in fields
    assert ("schema_invalid", "nodes.2.colour", "fc") in fields

    created = create(user_client)
    update = user_client.patch(f"/api/graphs/{created['id']}", json={"graph": {"version": 7}})
    assert update.status_code == 422 and update.json()["detail"]["errors"][0]["field"] == "version"
    assert user_client.get(f"/api/graphs/{created['id']}").json()["current_version"] == 1


@SQLITE_ONLY
@pytest.mark.parametrize(
    "body",
    [{}, {"graph": [1, 2]}, {"graph": "x"}, {"graph": {}, "name": ""}, {"graph": {}, "name": "x" * 201}],
)
def test_bad_bodies_are_422(user_client: TestClient, body: dict[str, Any]) -> None:
    assert user_client.post("/api/graphs", json=body).status_code == 422


@SQLITE_ONLY
def test_bad_paths_are_4xx(user_client: TestClient) -> None:
    graph_id = create(user_client)["id"]
    assert user_client.get(f"/api/graphs/{graph_id}/versions/0").status_code == 422
    assert user_client.get(f"/api/graphs/{graph_id}/versions/{2**40}").status_code == 422
    assert user_client.get(f"/api/graphs/{graph_id}/versions/9").status_code == 404
    assert user_client.post(f"/api/graphs/{graph_id}/versions/9/restore").status_code == 404
    assert user_client.get(f"/api/graphs/{'x' * 65}").status_code == 422
    assert user_client.get("/api/graphs/%00").status_code == 404
    assert user_client.get("/api/graphs?limit=0").status_code == 422
    assert user_client.get("/api/graphs?offset=-1").status_code == 422


def test_list_is_paginated_most_recent_first_and_owner_scoped(
    user_client: TestClient, other_client: TestClient
) -> None:
    ids = [create(user_client, name=f"g{i}")["id"] for i in range(5)]
    create(other_client, name="bob's")
    user_client.patch(f"/api/graphs/{ids[1]}", json={"graph": tiny_graph()})  # saved last

    page = user_client.get("/api/graphs?limit=2").json()
    assert page["count"] == 5 and [g["name"] for g in page["data"]] == ["g1", "g4"]
    rest = user_client.get("/api/graphs?offset=2&limit=10").json()
    assert [g["name"] for g in rest["data"]] == ["g3", "g2", "g0"]
    assert [g["name"] for g in other_client.get("/api/graphs").json()["data"]] == ["bob's"]


def test_other_users_graphs_do_not_exist_for_them(user_client: TestClient, other_client: TestClient) -> None:
    graph_id = create(user_client)["id"]
    assert other_client.get(f"/api/graphs/{graph_id}").status_code == 404
    assert other_client.patch(f"/api/graphs/{graph_id}", json={"name": "mine"}).status_code == 404
    assert other_client.delete(f"/api/graphs/{graph_id}").status_code == 404
    assert user_client.get(f"/api/graphs/{graph_id}").json()["name"] == "Tiny"


@SQLITE_ONLY
def test_templates_are_the_shipped_examples_and_clone_into_new_graphs(user_client: TestClient) -> None:
    templates = user_client.get("/api/graphs/templates").json()
    by_id = {t["id"]: t for t in templates}
    assert {"sketcher_cnn", "residual_cnn", "augmented_cnn"} <= set(by_id)
    assert by_id["sketcher_cnn"]["name"] == "Sketcher CNN" and by_id["sketcher_cnn"]["graph"] == example()

    clone = user_client.post("/api/graphs/templates/residual_cnn/clone", json={"name": "My ResNet"})
    assert clone.status_code == 201
    assert (
        clone.json()["name"] == "My ResNet"
        and clone.json()["graph"]["nodes"] == example("residual_cnn")["nodes"]
    )
    default_name = user_client.post("/api/graphs/templates/sketcher_cnn/clone").json()
    assert default_name["name"] == "Sketcher CNN"
    assert user_client.post("/api/graphs/templates/nope/clone").status_code == 404
    assert user_client.get("/api/graphs").json()["count"] == 2


@SQLITE_ONLY
def test_code_is_a_standalone_script_or_422_with_the_errors(user_client: TestClient) -> None:
    graph_id = create(user_client, example(), name="Sketcher CNN")["id"]
    code = user_client.get(f"/api/graphs/{graph_id}/code")
    assert code.status_code == 200, code.text
    assert code.json()["filename"] == "sketcher_cnn.py"
    compile(code.json()["code"], "sketcher_cnn.py", "exec")
    assert "import torch" in code.json()["code"]

    broken = example()
    broken["nodes"][2]["params"]["kernel_size"] = 99
    user_client.patch(f"/api/graphs/{graph_id}", json={"graph": broken})
    refused = user_client.get(f"/api/graphs/{graph_id}/code")
    assert refused.status_code == 422
    assert refused.json()["detail"]["errors"][0]["node_id"] == "conv1"
    assert user_client.get(f"/api/graphs/{graph_id}/code?version=1").status_code == 200
    assert user_client.get(f"/api/graphs/{graph_id}/code?version=5").status_code == 404


@SQLITE_ONLY
def test_code_of_a_posted_graph_saves_nothing_and_names_the_failing_node(user_client: TestClient) -> None:
    graph = example()
    graph["nodes"][2]["params"]["out_channels"] = 24
    code = user_client.post("/api/graphs/code", json=graph)
    assert code.status_code == 200, code.text
    assert code.json()["filename"] == "sketcher_cnn.py"
    compile(code.json()["code"], "sketcher_cnn.py", "exec")
    assert "24" in code.json()["code"]
    assert user_client.get("/api/graphs").json()["count"] == 0

    graph["nodes"][2]["params"]["kernel_size"] = 99
    refused = user_client.post("/api/graphs/code", json=graph)
    assert refused.status_code == 422
    assert refused.json()["detail"]["errors"][0]["node_id"] == "conv1"
    assert user_client.post("/api/graphs/code", json={"nodes": "none"}).status_code == 422


@SQLITE_ONLY
def test_a_network_of_billions_of_parameters_is_refused_not_built(user_client: TestClient) -> None:
    # Issue 23 review: /code built this one (17 GB of weights) and the server was killed.
    graph = example("mlp_breast_cancer")
    next(n for n in graph["nodes"] if n["id"] == "hidden")["params"]["out_features"] = 65536
    graph["nodes"].append({"id": "hidden2", "type": "layer.Linear", "params": {"out_features": 65536}})
    graph["edges"] = [e for e in graph["edges"] if e["source"] != "dropout"] + [
        {"source": "dropout", "target": "hidden2"},
        {"source": "hidden2", "target": "out"},
    ]
    code = user_client.post("/api/graphs/code", json=graph)
    assert code.status_code == 422, code.text
    (error,) = code.json()["detail"]["errors"]
    assert (error["code"], error["node_id"]) == ("model_too_large", "hidden2")
    assert "4,297,195,522 parameters" in error["message"]
    validated = user_client.post("/api/graphs/validate", json=graph).json()
    assert [e["code"] for e in validated["errors"]] == ["model_too_large"]


@SQLITE_ONLY
def test_validate_refuses_server_paths_to_non_admins_without_reading_them(
    user_client: TestClient, admin_client: TestClient, tmp_path: Path
) -> None:
    secret = tmp_path / "secret"
    (secret / "private_class").mkdir(parents=True)
    graph = tiny_graph("dataset.folder", path=str(secret))
    refused = user_client.post("/api/graphs/validate", json=graph).json()
    assert refused["ok"] is False
    assert [(e["code"], e["node_id"], e["field"]) for e in refused["errors"]] == [
        ("dataset_path_forbidden", "data", "path")
    ]
    assert "upload" in refused["errors"][0]["message"]
    assert "private_class" not in json.dumps(refused)

    admin = admin_client.post("/api/graphs/validate", json=graph).json()
    assert all(e["code"] != "dataset_path_forbidden" for e in admin["errors"])

    graph_id = create(user_client, graph)["id"]  # saving is allowed: it reads nothing
    code = user_client.get(f"/api/graphs/{graph_id}/code")
    assert code.status_code == 422 and code.json()["detail"]["errors"][0]["code"] == "dataset_path_forbidden"


def lite0_graph(**params: Any) -> dict[str, Any]:
    graph = tiny_graph()
    graph["nodes"][1:3] = [{"id": "model", "type": "model.efficientnet_lite0", "params": params}]
    graph["edges"] = [{"source": "data", "target": "model"}, {"source": "model", "target": "train"}]
    return graph


@SQLITE_ONLY
def test_server_paths_get_one_refusal_whatever_they_name_and_are_not_touched(
    user_client: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import os

    import safetensors.torch
    import torch

    # Another user's trained model, a text file and a missing file: a probe must not tell them apart.
    other_model = settings.data_dir / "artifacts" / "t-other" / "model.safetensors"
    other_model.parent.mkdir(parents=True)
    safetensors.torch.save_file({"layers.secret_conv.weight": torch.zeros(2)}, str(other_model))
    text = settings.data_dir / "notes.txt"
    text.write_text("Z private")
    probes = [
        str(other_model),
        "artifacts/t-other/model.safetensors",
        str(text),
        str(settings.data_dir / "missing.safetensors"),
        "/etc/passwd",
    ]
    touched: list[str] = []

    def watch(real: Any) -> Any:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            if any(str(path).endswith(probe.lstrip("/")) for probe in probes):
                touched.append(str(path))
            return real(path, *args, **kwargs)

        return call

    for module, name in ((os, "stat"), (os, "scandir"), (os, "listdir"), (io, "open")):
        monkeypatch.setattr(module, name, watch(getattr(module, name)))
    answers = []
    for probe in probes:
        graph = lite0_graph(weights_path=probe)
        validated = user_client.post("/api/graphs/validate", json=graph)
        submitted = user_client.post("/api/tasks", json={"graph": graph})
        assert validated.status_code == 200 and submitted.status_code == 422, submitted.text
        answers.append((validated.json(), submitted.json()["detail"]["errors"]))
    assert touched == []
    validated, submitted = answers[0]
    assert all(answer == answers[0] for answer in answers)
    assert validated["ok"] is False and submitted == validated["errors"]
    [error] = validated["errors"]
    assert (error["code"], error["node_id"], error["field"]) == (
        "dataset_path_forbidden",
        "model",
        "weights_path",
    )
    assert "secret_conv" not in json.dumps(answers)


@SQLITE_ONLY
def test_a_stored_graph_is_checked_again_before_a_retry_reads_it(
    user_client: TestClient, db_session: Session
) -> None:
    # A task stored under an older policy (or by an administrator since demoted) holds a server path.
    alice = db_session.scalars(select(User).where(User.username == "alice")).one()
    old = Task(
        owner_id=alice.id,
        name="old",
        graph_snapshot=lite0_graph(weights_path="artifacts/t-other/model.safetensors"),
        status=TaskStatus.FAILED,
    )
    db_session.add(old)
    db_session.commit()
    refused = user_client.post(f"/api/tasks/{old.id}/retry")
    assert refused.status_code == 422, refused.text
    [error] = refused.json()["detail"]["errors"]
    assert (error["code"], error["node_id"], error["field"]) == (
        "dataset_path_forbidden",
        "model",
        "weights_path",
    )
    db_session.expire_all()
    assert db_session.get(Task, old.id).status == TaskStatus.FAILED  # type: ignore[union-attr]
    clone = user_client.post(f"/api/tasks/{old.id}/clone")
    assert clone.status_code == 422 and clone.json()["detail"]["errors"] == [error]


@SQLITE_ONLY
def test_errors_show_users_paths_inside_their_data_and_no_other_server_path(
    user_client: TestClient,
    admin_client: TestClient,
    db_session: Session,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch_home = tmp_path / "torch-home"  # nothing cached there: the weights are unavailable
    monkeypatch.setenv("TORCH_HOME", str(torch_home))
    weights = lite0_graph()
    weights["nodes"][1] = {"id": "model", "type": "model.torchvision", "params": {"backbone": "resnet18"}}
    [error] = user_client.post("/api/graphs/validate", json=weights).json()["errors"]
    assert error["code"] == "weights_unavailable" and "Looked in: a server file." in error["message"]
    assert error["details"]["looked"] == ["a server file"]
    assert str(tmp_path) not in json.dumps(error)
    [task_error] = user_client.post("/api/tasks", json={"graph": weights}).json()["detail"]["errors"]
    assert task_error == error
    [admin_error] = admin_client.post("/api/graphs/validate", json=weights).json()["errors"]
    assert (
        str(torch_home) in admin_error["message"] and str(torch_home) in admin_error["details"]["looked"][0]
    )

    # A broken file in the user's own upload is named inside the data dir.
    alice = db_session.scalars(select(User).where(User.username == "alice")).one()
    for name in ("cat", "dog"):
        (settings.data_dir / "datasets/d1/data" / name).mkdir(parents=True)
        (settings.data_dir / "datasets/d1/data" / name / "1.png").write_bytes(b"not a picture")
    db_session.add(Dataset(id="d1", owner_id=alice.id, name="pets", kind="folder", path="datasets/d1/data"))
    db_session.commit()
    [error] = user_client.post(
        "/api/graphs/validate", json=tiny_graph("dataset.uploaded", dataset_id="d1")
    ).json()["errors"]
    assert error["code"] == "dataset_invalid"
    assert "cannot read image datasets/d1/data/cat/1.png" in error["message"]
    assert str(settings.data_dir) not in error["message"]


@SQLITE_ONLY
def test_validate_sees_the_callers_uploaded_datasets_only(
    user_client: TestClient, other_client: TestClient, db_session: Session, settings: Settings
) -> None:
    alice = db_session.scalars(select(User).where(User.username == "alice")).one()
    db_session.add(Dataset(id="d1", owner_id=alice.id, name="mine", kind="folder", path="datasets/d1/data"))
    db_session.commit()
    graph = tiny_graph("dataset.uploaded", dataset_id="d1")
    for client in (user_client, other_client):
        result = client.post("/api/graphs/validate", json=graph).json()
        messages = [e["message"] for e in result["errors"]]
        # Alice's dataset exists (its files do not, here); for Bob it does not exist at all.
        assert ("dataset d1 not found" in messages) is (client is other_client)

    ctx = data_context_for(db_session, settings, alice)
    assert {key: (value.kind, value.path) for key, value in ctx.uploaded.items()} == {
        "d1": ("folder", settings.data_dir / "datasets/d1/data")
    }
    assert ctx.allow_download is False


def test_validate_keeps_todays_answers(user_client: TestClient) -> None:
    result = user_client.post("/api/graphs/validate", json=example()).json()
    assert result["ok"] is True and result["shapes"]["conv1"] == "16x28x28"
    assert user_client.post("/api/graphs/validate", json=[1, 2]).status_code == 422
    schema = user_client.post("/api/graphs/validate", json={"nodes": 5}).json()
    assert schema["ok"] is False and schema["errors"][0]["code"] == "schema_invalid"


@pytest.mark.parametrize(
    ("node_type", "params", "fields"),
    [
        ("dataset.folder", {"path": "x"}, ["path"]),
        ("dataset.bitmaps", {"path": "x"}, ["path"]),
        ("dataset.csv", {"path": "a.csv"}, ["path"]),
        ("dataset.csv", {"path": "a.csv", "image_root": "/srv"}, ["path", "image_root"]),
        ("dataset.torchvision", {"name": "CIFAR10", "root": "/srv/data"}, ["root"]),
        ("dataset.torchvision", {"name": "CIFAR10"}, []),
        ("dataset.builtin", {"name": "mnist-5k"}, []),
        ("dataset.uploaded", {"dataset_id": "d1"}, []),
        ("model.efficientnet_lite0", {"weights_path": "artifacts/t1/model.safetensors"}, ["weights_path"]),
        ("model.torchvision", {"weights_path": "/srv/w.pt"}, ["weights_path"]),
        ("model.timm", {"model_name": "resnet18", "weights_path": "w.safetensors"}, ["weights_path"]),
        ("model.timm", {"model_name": "resnet18", "weights_path": " "}, []),
        ("model.efficientnet_lite0", {}, []),
    ],
)
def test_graph_policy(node_type: str, params: dict[str, Any], fields: list[str]) -> None:
    graph = tiny_graph(node_type, **params)
    node_id = "data"
    if node_type.startswith("model."):
        graph, node_id = lite0_graph(**params), "model"
        graph["nodes"][1]["type"] = node_type
    user = User(username="u", password_hash="!", is_admin=False)
    errors = check_graph_policy(graph, user)
    assert [(e.code, e.node_id, e.field) for e in errors] == [
        ("dataset_path_forbidden", node_id, f) for f in fields
    ]
    assert check_graph_policy(graph, User(username="a", password_hash="!", is_admin=True)) == []
    assert check_graph_policy({"nodes": "not a list"}, user) == []


def test_concurrent_saves_get_distinct_versions(user_client: TestClient) -> None:
    graph_id = create(user_client)["id"]

    def save(i: int) -> int:
        graph = tiny_graph()
        graph["name"] = f"save {i}"
        response = user_client.patch(f"/api/graphs/{graph_id}", json={"graph": graph})
        assert response.status_code == 200, response.text
        version: int = response.json()["current_version"]
        return version

    with ThreadPoolExecutor(max_workers=6) as pool:
        versions = list(pool.map(save, range(6)))
    assert len(set(versions)) == 6
    listed = [v["version"] for v in user_client.get(f"/api/graphs/{graph_id}/versions").json()]
    assert listed == [7, 6, 5, 4, 3, 2, 1]
    assert user_client.get(f"/api/graphs/{graph_id}").json()["current_version"] == 7


def test_a_rename_never_takes_the_name_of_another_graph(
    user_client: TestClient, other_client: TestClient
) -> None:
    species = create(user_client, example(), name="penguins species")
    mass = create(user_client, name="penguins mass")

    # Renaming (with or without a save) onto another graph's name is a 409 naming that graph.
    for body in ({"name": "penguins species"}, {"name": " penguins species ", "graph": tiny_graph()}):
        taken = user_client.patch(f"/api/graphs/{mass['id']}", json=body)
        assert taken.status_code == 409, taken.text
        assert "'penguins species'" in taken.json()["detail"] and species["id"] in taken.json()["detail"]
    # Nothing was saved or renamed by the refused requests, and both graphs are still listed.
    assert user_client.get(f"/api/graphs/{mass['id']}").json()["current_version"] == 1
    listed = {g["name"]: g["id"] for g in user_client.get("/api/graphs").json()["data"]}
    assert listed == {"penguins species": species["id"], "penguins mass": mass["id"]}
    assert user_client.get(f"/api/graphs/{species['id']}").json()["graph"]["nodes"] == example()["nodes"]

    # Saving a graph under its own name, or renaming it to a free one, still works.
    assert user_client.patch(f"/api/graphs/{mass['id']}", json={"name": "penguins mass"}).status_code == 200
    assert (
        user_client.patch(f"/api/graphs/{mass['id']}", json={"name": "body mass"}).json()["name"]
        == "body mass"
    )
    # Another user's graph of the same name is not in the way (nor named to this caller).
    create(other_client, name="shared name")
    assert user_client.patch(f"/api/graphs/{mass['id']}", json={"name": "shared name"}).status_code == 200


def test_save_as_keeps_both_graphs(user_client: TestClient) -> None:
    first = create(user_client, example(), name="penguins")
    second = create(user_client, tiny_graph(), name="penguins")  # "Save as" under a name in use
    assert first["id"] != second["id"]
    assert user_client.get(f"/api/graphs/{first['id']}").json()["graph"]["nodes"] == example()["nodes"]
    assert user_client.get("/api/graphs").json()["count"] == 2
