"""Property-based robustness of the whole API: schemathesis fuzzes every operation of the OpenAPI schema.

Each operation gets `MAX_EXAMPLES` generated requests (valid and invalid ones; derandomized, no example
database, so a CI run repeats exactly), sent over loopback HTTP to a real uvicorn server running the
app in a thread, by its first account (an administrator) with an API token. Every response must pass:

- `not_a_server_error`: never a 5xx;
- `status_code_conformance`: the status is one the operation declares (errors included);
- `content_type_conformance`: the content type is one declared for that status;
- `response_schema_conformance`: the body matches the schema declared for that status.

Path parameters are real resources half of the time (a graph, a task, a dataset, a model, a spare
API token, the caller's own user id), chosen from the generated value so that runs repeat, so fuzzed
bodies and queries reach the code behind the 404. A resource a fuzzed DELETE removed is made again
on next use.

Not fuzzed, or not fully, and why:

- The task runner is a stub (`IdleRunner`): fuzzed submissions are validated and stored like real
  ones, but no Ray cluster starts and nothing trains; they stay QUEUED.
- `GET /api/tasks/{task_id}/events` (server-sent events): the stream of a queued task never ends, so
  a fuzzed call would hang. It stays in the schema; `test_event_stream_is_declared_and_conforms`
  checks the stream of a finished task against its declaration.

`DRAGDL_FUZZ_EXAMPLES=300` makes a deeper run (about 5 minutes instead of one).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from pydantic import BaseModel
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from dragdl.db.models import Model, User
from dragdl.runner.worker import model_fields
from dragdl.server import app as app_module
from dragdl.server.app import create_app
from dragdl.server.errors import ErrorMessage, RequestProblems
from dragdl.server.openapi import openapi_schema
from dragdl.server.schemas.graphs import GraphRejection
from dragdl.server.settings import Settings

from ..graphs import chain
from ..servers import IdleRunner, serving
from .conftest import CSRF_HEADERS, PASSWORD
from .hostile.corpus import bitmaps

MAX_EXAMPLES = int(os.environ.get("DRAGDL_FUZZ_EXAMPLES", "25"))
"""Per operation; raise it for a deeper local run (the CI value keeps the file at about a minute)."""
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXCLUDED = {"streamTaskEvents": "server-sent events of a queued task never end"}

SCHEMA = schemathesis.openapi.from_dict(openapi_schema()).exclude(operation_id=list(EXCLUDED))
SCHEMA.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
    max_examples=MAX_EXAMPLES,
    deterministic=True,
    database="none",
)

GRAPH = chain(
    "Fuzz",
    [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flat", "layer.Flatten", {}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu", "seed": 0}),
    ],
)

TABLE_GRAPH = chain(
    "Fuzz table",
    [
        ("data", "dataset.table", {"source": "iris"}),
        ("std", "op.Standardize", {}),
        ("fc", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu", "seed": 0}),
    ],
)


@dataclass
class World:
    """The server, the fuzzing session and the caller's resources (made on first use and again after a
    DELETE removed them)."""

    app: FastAPI
    base_url: str
    settings: Settings
    bundle: Path
    table_bundle: Path
    session: requests.Session
    setup: httpx.Client
    ids: dict[str, str] = field(default_factory=dict)

    def _expect(self, response: httpx.Response, status: int) -> dict[str, Any]:
        assert response.status_code == status, response.text
        body: dict[str, Any] = response.json()
        return body

    def new_graph(self) -> str:
        return str(self._expect(self.setup.post("/api/graphs", json={"graph": GRAPH}), 201)["id"])

    def default_limits(self) -> None:
        """Fuzzed `PATCH /api/users/{id}` calls may have capped the caller (a CPU cap of 5e-324, a
        quota of 0): the resources below are made with the server's defaults."""
        limits = dict.fromkeys(
            ["dataset_quota_bytes", "artifact_quota_bytes", "max_cpus_per_task", "max_gpus_per_task"]
        )
        self._expect(self.setup.patch(f"/api/users/{self.new_user()}", json=limits), 200)

    def new_task(self) -> str:
        self.default_limits()
        return str(self._expect(self.setup.post("/api/tasks", json={"graph": GRAPH}), 201)["id"])

    def new_dataset(self) -> str:
        self.default_limits()
        files = [
            ("files", ("cat.npy", bitmaps(), "application/octet-stream")),
            ("files", ("dog.npy", bitmaps(value=200), "application/octet-stream")),
        ]
        return str(self._expect(self.setup.post("/api/datasets", files=files), 201)["id"])

    def new_token(self) -> str:
        return str(self._expect(self.setup.post("/api/auth/tokens", json={"name": "fuzz"}), 201)["id"])

    def new_model(self, bundle: Path | None = None) -> str:
        me = self._expect(self.setup.get("/api/auth/me"), 200)
        with self.app.state.sessions() as db:
            row = Model(owner_id=me["id"], name="Fuzz", path="", classes=[], metrics={}, input_spec={})
            db.add(row)
            db.flush()
            row.path = f"artifacts/fuzz-{row.id}"
            shutil.copytree(bundle or self.bundle, self.settings.data_dir / row.path)
            for key, value in model_fields(self.settings.data_dir / row.path).items():
                setattr(row, key, value)
            db.commit()
            return str(row.id)

    def new_table_model(self) -> str:
        return self.new_model(self.table_bundle)

    def new_user(self) -> str:
        return str(self._expect(self.setup.get("/api/auth/me"), 200)["id"])

    def real(self, name: str) -> str | None:
        factories: dict[str, Callable[[], str]] = {
            "graph_id": self.new_graph,
            "task_id": self.new_task,
            "dataset_id": self.new_dataset,
            "model_id": self.new_model,
            "table_model_id": self.new_table_model,
            "token_id": self.new_token,
            "user_id": self.new_user,
        }
        if name not in factories:
            return None
        if name not in self.ids:
            self.ids[name] = factories[name]()
        return self.ids[name]

    def forget(self, name: str) -> None:
        self.ids.pop(name, None)


def _train_bundle(root: Path, graph: dict[str, Any] = GRAPH, name: str = "run") -> Path:
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    ctx = DataContext(data_dir=root / "engine", allow_download=False)
    result = run_graph(graph, ctx, root / name, ListReporter())
    assert result.status == "succeeded"
    return root / name


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("fuzz")
    settings_ = Settings(data_dir=root / "data", database_url=f"sqlite:///{root / 'dragdl.db'}")
    bundle = _train_bundle(root)
    table_bundle = _train_bundle(root, TABLE_GRAPH, "table")
    app = create_app(settings_)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(app_module, "create_runner", lambda settings, sessions: IdleRunner())
        with (
            serving(app) as base_url,
            httpx.Client(base_url=base_url, timeout=60) as setup,
            requests.Session() as session,
        ):
            yield _signed_in(World(app, base_url, settings_, bundle, table_bundle, session, setup))


def _signed_in(world: World) -> World:
    """Sign up the server's first account (an administrator) and authenticate both clients with a token."""
    setup, session = world.setup, world.session
    signup = setup.post("/api/auth/signup", json={"username": "root", "password": PASSWORD})
    assert signup.status_code == 201, signup.text
    token = setup.post("/api/auth/tokens", json={"name": "fuzz"}, headers=CSRF_HEADERS)
    assert token.status_code == 201, token.text
    setup.cookies.clear()
    bearer = {"Authorization": f"Bearer {token.json()['token']}"}
    setup.headers.update(bearer)
    session.headers.update(bearer)
    return world


def _use_real_resources(case: Any, world: World) -> None:
    """Half of the path parameters (chosen from the generated value, so runs repeat) become real ids."""
    for name, value in list(case.path_parameters.items()):
        if zlib.crc32(repr(value).encode()) % 2:
            continue
        if name == "version":
            case.path_parameters[name] = 1
            continue
        # Rows go to a table model, so that fuzzed rows reach the table code behind the checks.
        table = name == "model_id" and case.operation.path.endswith("/predict/rows")
        real = world.real("table_model_id" if table else name)
        if real is not None:
            case.path_parameters[name] = real


@SCHEMA.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_schema(case: Any, world: World) -> None:
    _use_real_resources(case, world)
    response = case.call(base_url=world.base_url, session=world.session, timeout=60)
    world.session.cookies.clear()  # a fuzzed signup or login must not sign the session in as someone else
    if case.method.upper() == "DELETE" and response.status_code == 204:
        for name in case.path_parameters:
            world.forget(name)
    case.validate_response(response, checks=CHECKS)


def test_list_tasks_refuses_offsets_the_database_cannot_hold(world: World) -> None:
    response = world.setup.get("/api/tasks", params={"offset": 2**63})
    assert response.status_code == 422, response.text


# --- what the fuzzing found, pinned down --------------------------------------------------------


def test_event_stream_is_declared_and_conforms(world: World) -> None:
    """The excluded SSE operation: declared as text/event-stream, and a finished task's stream ends
    with well-formed events whose times carry their UTC offset."""
    operation = openapi_schema()["paths"]["/api/tasks/{task_id}/events"]["get"]
    assert "text/event-stream" in operation["responses"]["200"]["content"]
    task_id = world.new_task()  # a task of its own: the fuzzed one has been stopped and retried
    assert world.setup.post(f"/api/tasks/{task_id}/stop").json()["status"] == "STOPPED"
    response = world.setup.get(f"/api/tasks/{task_id}/events", timeout=30)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [
        (block.split("event: ", 1)[1].split("\n", 1)[0], json.loads(block.split("data: ", 1)[1]))
        for block in response.text.split("\n\n")
        if block.startswith("id:")
    ]
    assert [data["status"] for kind, data in events if kind == "status"] == ["QUEUED", "STOPPED"]
    for _, data in events:
        assert datetime.fromisoformat(data["time"]).utcoffset() == timedelta(0), data


def test_times_are_utc_with_their_offset(user_client: Any, app: FastAPI) -> None:
    """SQLite hands back naive datetimes; the API wrote them without an offset, which a browser reads
    as local time (and which is not an OpenAPI date-time)."""
    me = user_client.get("/api/auth/me").json()
    graph = user_client.post("/api/graphs", json={"graph": GRAPH}).json()
    for value in (me["created_at"], graph["created_at"], graph["updated_at"]):
        assert datetime.fromisoformat(value).utcoffset() == timedelta(0), value
    # A moment written with another offset is stored, and read back, as the same instant in UTC.
    later = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    with app.state.sessions() as db:
        row = db.get(User, me["id"])
        assert row is not None
        row.created_at = later
        db.commit()
    with app.state.sessions() as db:
        row = db.get(User, me["id"])
        assert row is not None and row.created_at == later and row.created_at.tzinfo == UTC


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("path", ["/api/graphs", "/api/users"])
def test_page_offsets_stay_within_the_database_integer(admin_client: Any, path: str) -> None:
    assert admin_client.get(path, params={"offset": 2**31 - 1}).status_code == 200
    response = admin_client.get(path, params={"offset": 2**63})  # was a 500 (OverflowError)
    assert response.status_code == 422, response.text


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_graph_rejections_match_their_declaration(user_client: Any) -> None:
    response = user_client.post("/api/graphs", json={"graph": {"nodes": "none"}})
    assert response.status_code == 422
    GraphRejection.model_validate(response.json())  # {"detail": {"message", "errors"}}
    declared = openapi_schema()["paths"]["/api/graphs"]["post"]["responses"]["422"]
    assert "#/components/schemas/GraphRejection" in json.dumps(declared)


def _cuda(graph: dict[str, Any]) -> dict[str, Any]:
    nodes = [
        {**node, "params": {**node["params"], "device": "cuda"}} if node["id"] == "train" else node
        for node in graph["nodes"]
    ]
    return {**graph, "nodes": nodes}


SUBMIT_REFUSALS = [
    pytest.param({"content": b'{"graph": "\xff"}'}, 400, ErrorMessage, None, id="not-utf8"),
    pytest.param(
        {"json": {"graph": {"nodes": "none"}}},
        422,
        GraphRejection,
        [("schema_invalid", None, "nodes")],
        id="malformed-graph",
    ),
    pytest.param({"json": {"graph": GRAPH, "graph_id": "x"}}, 422, RequestProblems, None, id="two-graphs"),
    pytest.param(
        {"json": {"graph": _cuda(GRAPH), "resources": {"gpus": 0}}},
        422,
        GraphRejection,
        [("param_invalid", "train", "device")],
        id="cuda-no-gpu",
    ),
    pytest.param({"json": {"graph_id": "nope"}}, 404, ErrorMessage, None, id="no-such-graph"),
]
DECLARED_422 = {"GraphRejection", "RequestProblems"}
"""submitTask's 422 is `GRAPH_REJECTED` alone: a refused graph or resources, or a request problem."""


@pytest.mark.parametrize(("request_", "status", "model", "problems"), SUBMIT_REFUSALS)
def test_task_submission_refusals_match_their_declarations(
    world: World,
    request_: dict[str, Any],
    status: int,
    model: type[BaseModel],
    problems: list[tuple[str, str | None, str | None]] | None,
) -> None:
    """Refusals the fuzzer reaches rarely or never: raw bytes, a graph that validates but needs a GPU.

    A graph problem names its code, node and field: a cuda train node given no GPU is a problem of
    that node's `device`, like any other refused graph."""
    headers = {"Content-Type": "application/json"} if "content" in request_ else {}
    response = world.setup.post("/api/tasks", headers=headers, **request_)
    assert response.status_code == status, response.text
    model.model_validate(response.json())
    if problems is not None:
        errors = response.json()["detail"]["errors"]
        assert [(e["code"], e["node_id"], e["field"]) for e in errors] == problems
    declared = json.dumps(openapi_schema()["paths"]["/api/tasks"]["post"]["responses"][str(status)])
    assert f"#/components/schemas/{model.__name__}" in declared
    refs = set(re.findall(r"#/components/schemas/(\w+)", declared))
    assert refs == (DECLARED_422 if status == 422 else {"ErrorMessage"})


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize("body", [{"max_running_tasks": False}, {"is_admin": "true"}, {"is_admin": 1}])
def test_user_updates_are_not_coerced(admin_client: Any, user_client: Any, body: dict[str, Any]) -> None:
    response = admin_client.patch(f"/api/users/{user_client.user['id']}", json=body)
    assert response.status_code == 422, response.text


def test_signed_in_operations_declare_401_and_403() -> None:
    public = {"getHealth", "getCatalog", "getGraphSchema", "signup", "login", "getSession"}
    for path, item in openapi_schema()["paths"].items():
        for method, operation in item.items():
            if operation["operationId"] not in public:
                missing = {"401", "403"} - set(operation["responses"])
                assert not missing, f"{method.upper()} {path} does not declare {', '.join(sorted(missing))}"
