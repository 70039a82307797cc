"""Every route of the app, checked for who may call it.

The routes come from the app itself, so a new route without a row in `MATRIX` fails here with
"add <METHOD path> to the authorization matrix". Each row says who may call the route and how to
prepare one call (the resource it acts on, the body it sends):

- PUBLIC: anyone; the GET ones must answer 2xx without credentials.
- SIGNED_IN: any signed-in user; anonymous -> 401.
- OWNED: a resource of one user: anonymous -> 401, another user -> 404 (never 403: the resource does
  not exist for them), the owner and an administrator -> 2xx.
- ADMIN: administrators only: anonymous -> 401, an ordinary user -> 403, an administrator -> 2xx.

Each call gets a freshly prepared resource, so a DELETE by one actor does not hide the next check.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy.orm import Session

from dragdl.db.models import Model, Sweep, SweepStatus, SweepTrial, Task
from dragdl.runner.worker import model_fields
from dragdl.server.app import create_app
from dragdl.server.settings import Settings

from ..graphs import chain
from ..servers import IdleRunner
from .conftest import BOOTSTRAP_ADMIN, MakeClient
from .hostile.corpus import bitmaps, png

Access = Literal["public", "signed_in", "owned", "admin"]
PUBLIC: Access = "public"
SIGNED_IN: Access = "signed_in"
OWNED: Access = "owned"
ADMIN: Access = "admin"

OWNER, OTHER = "alice", "bob"


@dataclass
class Call:
    path: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    files: list[tuple[str, tuple[str, bytes, str]]] | None = None
    data: dict[str, str] | None = None
    params: dict[str, str] | None = None


@dataclass
class World:
    """The users of a check and what the factories need to make their resources."""

    make_client: MakeClient
    db: Session
    settings: Settings
    bundle: Callable[[], Path]
    table_bundle: Callable[[], Path]
    clients: dict[str, TestClient] = field(default_factory=dict)

    def client(self, username: str) -> TestClient:
        if username not in self.clients:
            self.clients[username] = self.make_client(username)
        return self.clients[username]

    @property
    def owner(self) -> TestClient:
        return self.client(OWNER)

    def user_id(self, username: str) -> int:
        user_id: int = self.client(username).user["id"]  # type: ignore[attr-defined]
        return user_id


Prepare = Callable[[World], Call]


@dataclass(frozen=True)
class Rule:
    access: Access
    prepare: Prepare = lambda world: Call()
    fresh_session: bool = False
    """Call with a new login of the actor (for calls that end the session)."""


# --- resource factories -------------------------------------------------------------------------

GRAPH = chain(
    "Matrix",
    [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flat", "layer.Flatten", {}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu", "seed": 0}),
    ],
)

TABLE_GRAPH = chain(
    "Matrix table",
    [
        ("data", "dataset.table", {"source": "iris"}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu", "seed": 0}),
    ],
)


def graph(world: World) -> str:
    response = world.owner.post("/api/graphs", json={"graph": GRAPH})
    assert response.status_code == 201, response.text
    graph_id: str = response.json()["id"]
    return graph_id


def on_graph(**extra: Any) -> Prepare:
    return lambda world: Call(path={"graph_id": graph(world), **extra})


def token(world: World) -> Call:
    response = world.owner.post("/api/auth/tokens", json={"name": "matrix"})
    assert response.status_code == 201, response.text
    return Call(path={"token_id": response.json()["id"]})


def dataset(world: World) -> str:
    files = [("files", ("cat.npy", bitmaps(), "application/octet-stream"))]
    files.append(("files", ("dog.npy", bitmaps(value=200), "application/octet-stream")))
    response = world.owner.post("/api/datasets", files=files)
    assert response.status_code == 201, response.text
    dataset_id: str = response.json()["id"]
    return dataset_id


def model(world: World, table: bool = False) -> str:
    row = Model(owner_id=world.user_id(OWNER), name="Matrix", path="", classes=[], metrics={}, input_spec={})
    world.db.add(row)
    world.db.flush()
    row.path = f"artifacts/matrix-{row.id}"
    shutil.copytree(world.table_bundle() if table else world.bundle(), world.settings.data_dir / row.path)
    for key, value in model_fields(world.settings.data_dir / row.path).items():
        setattr(row, key, value)
    world.db.commit()
    return row.id


def table_rows(world: World) -> Call:
    """A table model of the owner's and one iris row for it."""
    row = {
        "sepal length (cm)": 5.1,
        "sepal width (cm)": 3.5,
        "petal length (cm)": 1.4,
        "petal width (cm)": 0.2,
    }
    return Call(path={"model_id": model(world, table=True)}, json={"rows": [row]})


def task(world: World, *, stopped: bool = True) -> Call:
    """A task of the owner's, queued (the stub runner never starts it) or stopped before it started."""
    response = world.owner.post("/api/tasks", json={"graph": GRAPH, "name": "matrix"})
    assert response.status_code == 201, response.text
    task_id: str = response.json()["id"]
    if stopped:
        stop = world.owner.post(f"/api/tasks/{task_id}/stop")
        assert stop.status_code == 200 and stop.json()["status"] == "STOPPED", stop.text
    return Call(path={"task_id": task_id})


def reported_task(world: World) -> Call:
    """A stopped task with a report.json in its artifacts folder, as a finished run leaves it."""
    call = task(world)
    folder = world.settings.artifacts_dir / call.path["task_id"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text('{"classes": ["a", "b"]}', encoding="utf-8")
    return call


SWEEP_GRAPH = {**GRAPH, "search": {"train": {"lr": {"type": "float", "low": 0.01, "high": 0.3, "log": True}}}}


def sweep(world: World, *, state: SweepStatus = SweepStatus.RUNNING) -> Call:
    """A sweep of the owner's with one complete trial whose task left a model, written as the sweep
    driver writes it (the idle runner would never finish a trial)."""
    task_id = task(world).path["task_id"]
    model_id = model(world)
    row = world.db.get(Model, model_id)
    assert row is not None
    row.task_id = task_id
    finished = state != SweepStatus.RUNNING
    record = Sweep(
        owner_id=world.user_id(OWNER),
        name="Matrix sweep",
        base_graph=SWEEP_GRAPH,
        status=state,
        trials=2,
        parallel=1,
        objective="val_accuracy",
        direction="maximize",
        sampler="tpe",
        pruner="none",
        resources={"cpus": 1.0, "gpus": 0.0},
    )
    world.db.add(record)
    world.db.flush()
    world.db.add(
        SweepTrial(
            sweep_id=record.id,
            number=0,
            task_id=task_id,
            params={"train.lr": 0.05},
            state="COMPLETE",
            value=0.5,
            intermediate={"1": 0.5},
        )
    )
    if finished:
        record.finished_at = world.db.get(Task, task_id).finished_at  # type: ignore[union-attr]
    world.db.commit()
    return Call(path={"sweep_id": record.id})


def upload_image() -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("images", ("digit.png", png(8, 8), "image/png"))]


MATRIX: dict[tuple[str, str], Rule] = {
    # Public: the docs, the home page, health, the node catalog and graph schema, and the way in.
    ("GET", "/"): Rule(PUBLIC),
    ("GET", "/openapi.json"): Rule(PUBLIC),
    ("GET", "/docs"): Rule(PUBLIC),
    ("GET", "/docs/oauth2-redirect"): Rule(PUBLIC),
    ("GET", "/redoc"): Rule(PUBLIC),
    ("GET", "/api/health"): Rule(PUBLIC),
    ("GET", "/api/catalog"): Rule(PUBLIC),
    ("GET", "/api/schema/graph"): Rule(PUBLIC),
    ("POST", "/api/auth/signup"): Rule(PUBLIC),
    ("POST", "/api/auth/login"): Rule(PUBLIC),
    # Accounts
    ("POST", "/api/auth/logout"): Rule(SIGNED_IN, fresh_session=True),
    ("GET", "/api/auth/me"): Rule(SIGNED_IN),
    ("GET", "/api/auth/session"): Rule(PUBLIC),
    ("POST", "/api/auth/tokens"): Rule(SIGNED_IN, lambda world: Call(json={"name": "cli"})),
    ("GET", "/api/auth/tokens"): Rule(SIGNED_IN),
    ("DELETE", "/api/auth/tokens/{token_id}"): Rule(OWNED, token),
    ("GET", "/api/users/me"): Rule(SIGNED_IN),
    ("GET", "/api/users"): Rule(ADMIN),
    ("PATCH", "/api/users/{user_id}"): Rule(
        ADMIN, lambda world: Call(path={"user_id": world.user_id(OTHER)}, json={"max_running_tasks": 3})
    ),
    # Graphs
    ("POST", "/api/graphs/validate"): Rule(SIGNED_IN, lambda world: Call(json=GRAPH)),
    ("POST", "/api/graphs/code"): Rule(SIGNED_IN, lambda world: Call(json=GRAPH)),
    ("GET", "/api/graphs/templates"): Rule(SIGNED_IN),
    ("POST", "/api/graphs/templates/{template_id}/clone"): Rule(
        SIGNED_IN, lambda world: Call(path={"template_id": "sketcher_cnn"})
    ),
    ("GET", "/api/graphs"): Rule(SIGNED_IN),
    ("POST", "/api/graphs"): Rule(SIGNED_IN, lambda world: Call(json={"graph": GRAPH})),
    ("GET", "/api/graphs/{graph_id}"): Rule(OWNED, on_graph()),
    ("PATCH", "/api/graphs/{graph_id}"): Rule(
        OWNED, lambda world: Call(path={"graph_id": graph(world)}, json={"graph": GRAPH})
    ),
    ("DELETE", "/api/graphs/{graph_id}"): Rule(OWNED, on_graph()),
    ("GET", "/api/graphs/{graph_id}/versions"): Rule(OWNED, on_graph()),
    ("GET", "/api/graphs/{graph_id}/versions/{version}"): Rule(OWNED, on_graph(version=1)),
    ("POST", "/api/graphs/{graph_id}/versions/{version}/restore"): Rule(OWNED, on_graph(version=1)),
    ("GET", "/api/graphs/{graph_id}/code"): Rule(OWNED, on_graph()),
    # Datasets
    ("POST", "/api/datasets"): Rule(
        SIGNED_IN,
        lambda world: Call(
            files=[("files", ("a.npy", bitmaps(), "x")), ("files", ("b.npy", bitmaps(2), "x"))]
        ),
    ),
    ("GET", "/api/datasets"): Rule(SIGNED_IN),
    ("GET", "/api/datasets/{dataset_id}"): Rule(
        OWNED, lambda world: Call(path={"dataset_id": dataset(world)})
    ),
    ("GET", "/api/datasets/{dataset_id}/thumbnails/{class_index}/{sample}"): Rule(
        OWNED, lambda world: Call(path={"dataset_id": dataset(world), "class_index": 0, "sample": 0})
    ),
    ("DELETE", "/api/datasets/{dataset_id}"): Rule(
        OWNED, lambda world: Call(path={"dataset_id": dataset(world)})
    ),
    # Models
    ("GET", "/api/models"): Rule(SIGNED_IN),
    ("GET", "/api/models/{model_id}"): Rule(OWNED, lambda world: Call(path={"model_id": model(world)})),
    ("DELETE", "/api/models/{model_id}"): Rule(OWNED, lambda world: Call(path={"model_id": model(world)})),
    ("POST", "/api/models/{model_id}/predict"): Rule(
        OWNED, lambda world: Call(path={"model_id": model(world)}, files=upload_image())
    ),
    ("POST", "/api/models/{model_id}/predict/rows"): Rule(OWNED, table_rows),
    ("GET", "/api/models/{model_id}/download"): Rule(
        OWNED, lambda world: Call(path={"model_id": model(world)})
    ),
    ("GET", "/api/models/{model_id}/manifest"): Rule(
        OWNED, lambda world: Call(path={"model_id": model(world)})
    ),
    # Tasks
    ("POST", "/api/tasks"): Rule(SIGNED_IN, lambda world: Call(json={"graph": GRAPH})),
    ("GET", "/api/tasks"): Rule(SIGNED_IN),
    ("GET", "/api/tasks/{task_id}"): Rule(OWNED, task),
    ("POST", "/api/tasks/{task_id}/stop"): Rule(OWNED, lambda world: task(world, stopped=False)),
    ("POST", "/api/tasks/{task_id}/retry"): Rule(OWNED, task),
    ("POST", "/api/tasks/{task_id}/clone"): Rule(OWNED, task),
    ("DELETE", "/api/tasks/{task_id}"): Rule(OWNED, task),
    ("GET", "/api/tasks/{task_id}/metrics"): Rule(OWNED, task),
    ("GET", "/api/tasks/{task_id}/logs"): Rule(OWNED, task),
    ("GET", "/api/tasks/{task_id}/report"): Rule(OWNED, reported_task),
    ("GET", "/api/tasks/{task_id}/events"): Rule(OWNED, task),  # a finished task: the stream ends
    # Sweeps
    ("POST", "/api/sweeps"): Rule(SIGNED_IN, lambda world: Call(json={"graph": SWEEP_GRAPH, "trials": 2})),
    ("GET", "/api/sweeps"): Rule(SIGNED_IN),
    ("GET", "/api/sweeps/{sweep_id}"): Rule(OWNED, sweep),
    ("GET", "/api/sweeps/{sweep_id}/best-graph"): Rule(OWNED, sweep),
    ("POST", "/api/sweeps/{sweep_id}/register-best"): Rule(OWNED, sweep),
    ("POST", "/api/sweeps/{sweep_id}/stop"): Rule(OWNED, sweep),
    ("POST", "/api/sweeps/{sweep_id}/resume"): Rule(
        OWNED, lambda world: sweep(world, state=SweepStatus.STOPPED)
    ),
}


# --- the routes of the app ----------------------------------------------------------------------


def app_routes() -> list[tuple[str, str]]:
    app = create_app(Settings(data_dir=Path("/nonexistent"), database_url="sqlite://"))
    found = set()
    for context in iter_route_contexts(app.routes):
        methods = context.methods or {"*"}  # a mount (static files) has no methods
        found |= {(method, context.path) for method in methods if method != "HEAD"}
    return sorted(found, key=lambda item: (item[1], item[0]))


ROUTES = app_routes()


def test_every_matrix_row_is_a_route() -> None:
    stale = sorted(set(MATRIX) - set(ROUTES))
    assert not stale, f"remove {', '.join(f'{m} {p}' for m, p in stale)} from the authorization matrix"


# --- the checks ---------------------------------------------------------------------------------


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """SQLite only: who may call what does not depend on the database engine."""
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def _trained_on_first_use(
    tmp_path_factory: pytest.TempPathFactory, graph: dict[str, Any]
) -> Callable[[], Path]:
    trained: list[Path] = []

    def get() -> Path:
        if not trained:
            from dragdl.engine.data.base import DataContext
            from dragdl.engine.run import run_graph
            from dragdl.engine.train.reporter import ListReporter

            root = tmp_path_factory.mktemp("bundle")
            ctx = DataContext(data_dir=root, allow_download=False)
            result = run_graph(graph, ctx, root / "run", ListReporter())
            assert result.status == "succeeded"
            trained.append(root / "run")
        return trained[0]

    return get


@pytest.fixture(scope="module")
def trained_bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    """A tiny digits classifier, trained on first use only (most routes need no model)."""
    yield _trained_on_first_use(tmp_path_factory, GRAPH)


@pytest.fixture(scope="module")
def trained_table_bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[], Path]]:
    """A tiny iris classifier (a table model), trained on first use only."""
    yield _trained_on_first_use(tmp_path_factory, TABLE_GRAPH)


@pytest.fixture
def world(
    app: FastAPI,
    make_client: MakeClient,
    db_session: Session,
    settings: Settings,
    trained_bundle: Callable[[], Path],
    trained_table_bundle: Callable[[], Path],
) -> World:
    app.state.runner.shutdown()
    app.state.runner = IdleRunner()
    return World(make_client, db_session, settings, trained_bundle, trained_table_bundle)


def send(client: TestClient, method: str, path: str, call: Call) -> Response:
    url = path.format(**call.path)
    return client.request(method, url, json=call.json, files=call.files, data=call.data, params=call.params)


def expect(response: Response, status: int | Literal["2xx"], who: str, method: str, path: str) -> None:
    ok = 200 <= response.status_code < 300 if status == "2xx" else response.status_code == status
    assert ok, (
        f"{method} {path} as {who}: expected {status}, got {response.status_code} {response.text[:300]}"
    )


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_route_authorization(
    method: str, path: str, world: World, anon_client: TestClient, app: FastAPI
) -> None:
    rule = MATRIX.get((method, path))
    assert rule is not None, f"add {method} {path} to the authorization matrix"
    if rule.access == PUBLIC:
        if method == "GET" and "{" not in path:
            expect(anon_client.get(path), "2xx", "anonymous", method, path)
        return

    expect(send(anon_client, method, path, rule.prepare(world)), 401, "anonymous", method, path)
    bearer_anon = TestClient(app, headers={"Authorization": "Bearer dgl_not-a-token"})
    expect(send(bearer_anon, method, path, rule.prepare(world)), 401, "a revoked token", method, path)

    def actor(username: str) -> TestClient:
        return world.make_client(username) if rule.fresh_session else world.client(username)

    if rule.access == OWNED:
        expect(send(actor(OTHER), method, path, rule.prepare(world)), 404, "another user", method, path)
    if rule.access == ADMIN:
        expect(send(actor(OWNER), method, path, rule.prepare(world)), 403, "a non-admin", method, path)
    else:
        expect(send(actor(OWNER), method, path, rule.prepare(world)), "2xx", "the owner", method, path)
    expect(send(actor(BOOTSTRAP_ADMIN), method, path, rule.prepare(world)), "2xx", "an admin", method, path)
