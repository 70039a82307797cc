"""`DragDLClient`: the REST API of a DragDL server from Python (sync, over httpx).

    with DragDLClient("http://127.0.0.1:8000") as client:
        task = client.submit(graph)
        for event in client.events(task.id):
            print(event.kind, event.data)
        print(client.get_task(task.id).status)

The token is the `token` argument, else `$DRAGDL_TOKEN`, else the one `dragdl login` saved for this
server. Every failure is an `ApiError`: the server's message (graph problems kept as a list), or a
sentence saying the server could not be reached.
"""

from __future__ import annotations

import contextlib
import mimetypes
import os
import re
import socket
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from dragdl import __version__
from dragdl.client.credentials import DEFAULT_SERVER, load_token, normalize_url
from dragdl.client.errors import ApiError
from dragdl.client.events import Event, SSEParser
from dragdl.client.models import (
    Dataset,
    Graph,
    GraphSummary,
    MetricPoint,
    Model,
    Predictions,
    RowPredictions,
    SamplePredictions,
    Sweep,
    Task,
    TaskLog,
    User,
    ValidationResult,
)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

DEFAULT_TIMEOUT_S = 60.0
STREAM_READ_TIMEOUT_S = 60.0
"""The event stream sends a keep-alive every 15 s; a minute of silence means the connection is gone."""
UPLOAD_READ_TIMEOUT_S = 1800.0
"""The server unpacks and checks an uploaded dataset before it answers."""
MAX_RECONNECTS = 5
"""Reconnections in a row that bring no new event before `events()` gives up."""
MAX_RECONNECT_DELAY_S = 10.0
_FILENAME = re.compile(r'filename="?([^";]+)"?')


def _seconds(retry_after: str | None) -> float:
    """A `Retry-After` in seconds (the HTTP-date form counts as none)."""
    try:
        return max(0.0, float(retry_after or 0))
    except ValueError:
        return 0.0


def _path(*parts: str) -> str:
    return "/" + "/".join(quote(part, safe="") for part in parts)


class DragDLClient:
    """A session with one DragDL server. Use it as a context manager, or call `close()`."""

    def __init__(
        self,
        server_url: str | None = None,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        *,
        transport: httpx.BaseTransport | None = None,
        reconnect_delay_s: float | None = None,
        max_reconnects: int = MAX_RECONNECTS,
    ) -> None:
        self.server_url = normalize_url(server_url or os.environ.get("DRAGDL_SERVER") or DEFAULT_SERVER)
        self.token = token or os.environ.get("DRAGDL_TOKEN") or load_token(self.server_url)
        self.timeout = timeout
        self.reconnect_delay_s = reconnect_delay_s
        """Seconds between reconnections of `events()`; None: what the server's `retry:` asks."""
        self.max_reconnects = max_reconnects
        self._transport = transport
        try:
            self._http = self._new_http()
        except (httpx.InvalidURL, ValueError) as exc:
            message = f"not a server URL: {self.server_url!r} ({exc})"
            raise ApiError(None, message, url=self.server_url) from None

    def _new_http(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.server_url,
            timeout=self.timeout,
            transport=self._transport,
            # Single-user servers refuse changes without it (CSRF rule); harmless everywhere else.
            headers={"X-Requested-With": "dragdl-sdk", "User-Agent": f"dragdl-sdk/{__version__}"},
        )

    def __enter__(self) -> DragDLClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- transport -----------------------------------------------------------------------------------

    def _auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _unreachable(self, exc: httpx.TransportError) -> ApiError:
        reason = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            message = (
                f"the DragDL server at {self.server_url} is unreachable ({reason}); "
                "is `dragdl serve` running there?"
            )
        elif isinstance(exc, httpx.TimeoutException):
            message = f"the DragDL server at {self.server_url} did not answer in time ({reason})"
        else:
            message = f"lost the connection to the DragDL server at {self.server_url} ({reason})"
        return ApiError(None, message, url=self.server_url)

    def _error(self, response: httpx.Response) -> ApiError:
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        return ApiError.from_response(response.status_code, body, response.text, self.server_url)

    def _send(self, http: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        if response.status_code >= 400:
            raise self._error(response)
        return response

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer (None for 204)."""
        response = self._send(self._http, method, path, headers=self._auth(), **kwargs)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            message = f"{self.server_url}{path} answered something that is not JSON"
            raise ApiError(response.status_code, message, url=self.server_url) from None

    def _parse(self, kind: type[M], data: Any) -> M:
        try:
            return kind.model_validate(data)
        except ValidationError as exc:
            raise ApiError(
                None, f"unexpected answer from {self.server_url}: {exc}", url=self.server_url
            ) from None

    def _parse_list(self, kind: type[T], data: Any) -> list[T]:
        items = data.get("data") if isinstance(data, dict) else data
        try:
            return TypeAdapter(list[kind]).validate_python(items)  # type: ignore[valid-type]
        except ValidationError as exc:
            raise ApiError(
                None, f"unexpected answer from {self.server_url}: {exc}", url=self.server_url
            ) from None

    # --- accounts ------------------------------------------------------------------------------------

    def login(self, username: str, password: str, token_name: str | None = None) -> str:
        """Log in, create a personal API token (named `cli@<hostname>` by default) and use it from now on.

        The session cookie of the login is used for nothing else and ended at once.
        """
        name = (token_name or f"cli@{socket.gethostname()}")[:100]
        with self._new_http() as session:
            body = {"username": username, "password": password}
            self._send(session, "POST", "/api/auth/login", json=body)
            created = self._send(session, "POST", "/api/auth/tokens", json={"name": name}).json()
            with contextlib.suppress(ApiError):  # the token is made; an open session expires anyway
                self._send(session, "POST", "/api/auth/logout")
        token = created.get("token") if isinstance(created, dict) else None
        if not isinstance(token, str) or not token:
            raise ApiError(None, f"the server at {self.server_url} answered no token")
        self.token = token
        return token

    def me(self) -> User:
        return self._parse(User, self._request("GET", "/api/auth/me"))

    # --- graphs --------------------------------------------------------------------------------------

    def create_graph(self, graph: Mapping[str, Any], name: str | None = None) -> Graph:
        body: dict[str, Any] = {"graph": dict(graph)}
        if name is not None:
            body["name"] = name
        return self._parse(Graph, self._request("POST", "/api/graphs", json=body))

    def list_graphs(self, limit: int = 50, offset: int = 0) -> list[GraphSummary]:
        params = {"limit": limit, "offset": offset}
        return self._parse_list(GraphSummary, self._request("GET", "/api/graphs", params=params))

    def get_graph(self, graph_id: str) -> Graph:
        return self._parse(Graph, self._request("GET", _path("api", "graphs", graph_id)))

    def validate(self, graph: Mapping[str, Any]) -> ValidationResult:
        """The server's validation (with your uploaded datasets); problems are in `.errors`, not raised."""
        data = self._request("POST", "/api/graphs/validate", json=dict(graph))
        return self._parse(ValidationResult, data)

    # --- tasks ---------------------------------------------------------------------------------------

    def submit(
        self,
        graph: Mapping[str, Any] | str,
        name: str | None = None,
        priority: int = 0,
        *,
        cpus: float | None = None,
        gpus: float | None = None,
    ) -> Task:
        """Queue a graph (a dict) or a saved graph (its id); returns at once. A graph that does not
        validate raises ApiError 422 with every problem in `.errors`."""
        body: dict[str, Any] = {"graph_id": graph} if isinstance(graph, str) else {"graph": dict(graph)}
        body["priority"] = priority
        if name is not None:
            body["name"] = name
        resources = {k: v for k, v in (("cpus", cpus), ("gpus", gpus)) if v is not None}
        if resources:
            body["resources"] = resources
        return self._parse(Task, self._request("POST", "/api/tasks", json=body))

    def list_tasks(self, status: str | None = None, limit: int = 50, offset: int = 0) -> list[Task]:
        """Your tasks, newest first; `status` is QUEUED, RUNNING, SUCCEEDED, FAILED or STOPPED."""
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if status:
            params["status"] = status.upper()
        return self._parse_list(Task, self._request("GET", "/api/tasks", params=params))

    def get_task(self, task_id: str) -> Task:
        return self._parse(Task, self._request("GET", _path("api", "tasks", task_id)))

    def stop(self, task_id: str) -> Task:
        """A queued task stops at once; a running one checkpoints first and then ends STOPPED."""
        return self._parse(Task, self._request("POST", _path("api", "tasks", task_id, "stop")))

    def retry(self, task_id: str) -> Task:
        """Queue a FAILED or STOPPED task again, resuming from its last checkpoint."""
        return self._parse(Task, self._request("POST", _path("api", "tasks", task_id, "retry")))

    def metrics(self, task_id: str, scope: str | None = None) -> list[MetricPoint]:
        params = {"scope": scope} if scope else {}
        data = self._request("GET", _path("api", "tasks", task_id, "metrics"), params=params)
        return self._parse_list(MetricPoint, data)

    def logs(self, task_id: str, offset: int = 0) -> TaskLog:
        """The training log from a byte offset (up to 64 KiB); continue from `.next_offset`."""
        data = self._request("GET", _path("api", "tasks", task_id, "logs"), params={"offset": offset})
        return self._parse(TaskLog, data)

    def events(self, task_id: str, last_event_id: int | None = None) -> Iterator[Event]:
        """The task's events: its history (after `last_event_id`), then live ones until its final status.

        A dropped connection is reopened with `Last-Event-ID`, so no event is repeated or skipped;
        so is a stream refused because the account has all its streams open (429), after the server's
        `Retry-After`. After `max_reconnects` attempts in a row without a new event, ApiError is raised.
        """
        path = _path("api", "tasks", task_id, "events")
        timeout = httpx.Timeout(self.timeout, read=max(self.timeout, STREAM_READ_TIMEOUT_S))
        last, failures, final = last_event_id, 0, False
        parser = SSEParser()
        while True:
            headers = {**self._auth(), "Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            received = 0
            parser = SSEParser(retry_ms=parser.retry_ms)
            problem: httpx.TransportError | None = None
            busy: ApiError | None = None
            retry_after_s = 0.0
            try:
                with self._http.stream("GET", path, headers=headers, timeout=timeout) as response:
                    if response.status_code == 429:  # the account's streams are all open: wait
                        response.read()
                        busy = self._error(response)
                        retry_after_s = _seconds(response.headers.get("retry-after"))
                    elif response.status_code >= 400:
                        response.read()
                        raise self._error(response)
                    else:
                        for line in response.iter_lines():
                            sse = parser.feed(line)
                            if sse is None:
                                continue
                            event = Event.from_sse(sse)
                            if event.id is not None:
                                last = event.id
                            received, failures = received + 1, 0
                            if event.status is not None:
                                final = event.is_final
                            yield event
                # The server ends the stream after the final status; a clean end before it (a proxy
                # closing idle streams) is one more reason to reconnect.
                if busy is None and (final or (received == 0 and self.get_task(task_id).finished)):
                    return
            except httpx.TransportError as exc:
                problem = exc
            failures += 1
            if failures > self.max_reconnects:
                if problem is not None:
                    raise self._unreachable(problem) from None
                raise busy or ApiError(
                    None, f"the event stream of task {task_id} keeps ending before the task does"
                )
            delay = self.reconnect_delay_s
            if delay is None:
                delay = parser.retry_ms / 1000 if parser.retry_ms is not None else 1.0
                delay = max(delay, retry_after_s)
            time.sleep(min(delay * failures, MAX_RECONNECT_DELAY_S))  # a restarting server gets time

    def wait(self, task_id: str, on_event: Callable[[Event], None] | None = None) -> Task:
        """Follow the task's events until it ends; returns the finished task."""
        for event in self.events(task_id):
            if on_event is not None:
                on_event(event)
        return self.get_task(task_id)

    # --- models --------------------------------------------------------------------------------------

    def create_sweep(
        self,
        graph: Mapping[str, Any] | str,
        *,
        trials: int = 16,
        parallel: int = 2,
        objective: str | None = None,
        sampler: str = "tpe",
        pruner: str = "median",
        seed: int = 0,
        name: str | None = None,
    ) -> Sweep:
        """Start a sweep of a graph with a `search` section (a dict) or a saved graph (its id): its
        trials run as your tasks, `parallel` at a time. Refused with ApiError 422 naming the field."""
        body: dict[str, Any] = {"graph_id": graph} if isinstance(graph, str) else {"graph": dict(graph)}
        body.update(trials=trials, parallel=parallel, sampler=sampler, pruner=pruner, seed=seed)
        if objective is not None:
            body["objective"] = objective
        if name is not None:
            body["name"] = name
        return self._parse(Sweep, self._request("POST", "/api/sweeps", json=body))

    def list_sweeps(self, limit: int = 50, offset: int = 0) -> list[Sweep]:
        params = {"limit": limit, "offset": offset}
        return self._parse_list(Sweep, self._request("GET", "/api/sweeps", params=params))

    def get_sweep(self, sweep_id: str) -> Sweep:
        return self._parse(Sweep, self._request("GET", _path("api", "sweeps", sweep_id)))

    def stop_sweep(self, sweep_id: str) -> Sweep:
        return self._parse(Sweep, self._request("POST", _path("api", "sweeps", sweep_id, "stop")))

    def resume_sweep(self, sweep_id: str) -> Sweep:
        return self._parse(Sweep, self._request("POST", _path("api", "sweeps", sweep_id, "resume")))

    def best_graph(self, sweep_id: str) -> dict[str, Any]:
        """The graph with the sweep's best values, to save or open in the editor."""
        graph: dict[str, Any] = self._request("GET", _path("api", "sweeps", sweep_id, "best-graph"))
        return graph

    def register_best(self, sweep_id: str, name: str | None = None) -> dict[str, Any]:
        """Name the sweep's best model (`name`, else "<sweep> (best of sweep)"): the one model of the
        sweep `list_models` shows. Returns `{"model_id", "name"}`."""
        body = {} if name is None else {"name": name}
        answer: dict[str, Any] = self._request(
            "POST", _path("api", "sweeps", sweep_id, "register-best"), json=body
        )
        return answer

    def wait_sweep(
        self, sweep_id: str, on_change: Callable[[Sweep], None] | None = None, poll_s: float = 2.0
    ) -> Sweep:
        """Poll until the sweep ends; `on_change` sees it each time a trial changes state."""
        seen: tuple[Any, ...] = ()
        while True:
            sweep = self.get_sweep(sweep_id)
            now = (sweep.status, *((t.state, t.value) for t in sweep.trial_list))
            if on_change is not None and now != seen:
                on_change(sweep)
            seen = now
            if sweep.finished:
                return sweep
            time.sleep(poll_s)  # a sweep runs for minutes: polling every few seconds is plenty

    def list_models(self, *, task_id: str | None = None, trials: bool = False) -> list[Model]:
        """Your models, newest first: only `task_id`'s with one; the models of sweep trials other than
        each sweep's registered best only with `trials`."""
        params: dict[str, str] = {"trials": "true"} if trials else {}
        if task_id is not None:
            params["task_id"] = task_id
        return self._parse_list(Model, self._request("GET", "/api/models", params=params))

    def get_model(self, model_id: str) -> Model:
        return self._parse(Model, self._request("GET", _path("api", "models", model_id)))

    def predict(
        self, model_id: str, images: Sequence[str | os.PathLike[str] | bytes], top_k: int = 5
    ) -> Predictions:
        """Predict images (paths, or the bytes of image files) with the model, on the server: class
        scores (`Prediction`) for a classifier, a `ValuePrediction` for a regression model."""
        files: list[tuple[str, tuple[str, bytes, str]]] = []
        for index, image in enumerate(images):
            if isinstance(image, bytes):
                files.append(("images", (f"image-{index + 1}", image, "application/octet-stream")))
                continue
            path = Path(image)
            try:
                content = path.read_bytes()
            except OSError as exc:
                raise ApiError(None, f"{path}: cannot read the image ({exc.strerror or exc})") from None
            mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            files.append(("images", (path.name, content, mime)))
        data = self._request(
            "POST", _path("api", "models", model_id, "predict"), files=files, data={"top_k": str(top_k)}
        )
        return self._parse(Predictions, data)

    def predict_files(
        self, model_id: str, paths: Sequence[str | os.PathLike[str]], top_k: int = 5
    ) -> SamplePredictions:
        """Predict the samples of files with a model whose input type reads them (a sequence model:
        `.ts` files of one or more series, a CSV of one sequence, `.npy` arrays), on the server: one
        answer per sample of each file, in order. A file that cannot be used raises ApiError 400
        naming it and its line. Image models answer `predict`."""
        files: list[tuple[str, tuple[str, bytes, str]]] = []
        for item in paths:
            path = Path(item)
            try:
                content = path.read_bytes()
            except OSError as exc:
                raise ApiError(None, f"{path}: cannot read the file ({exc.strerror or exc})") from None
            files.append(("files", (path.name, content, "application/octet-stream")))
        timeout = httpx.Timeout(self.timeout, read=max(self.timeout, UPLOAD_READ_TIMEOUT_S))
        data = self._request(
            "POST",
            _path("api", "models", model_id, "predict"),
            files=files,
            data={"top_k": str(top_k)},
            timeout=timeout,
        )
        if isinstance(data, dict) and "task" not in data:
            raise ApiError(None, f"model {model_id} answers per image: use predict() for its images")
        return self._parse(SamplePredictions, data)

    def predict_rows(
        self, model_id: str, rows: Sequence[Mapping[str, Any]], top_k: int = 5
    ) -> RowPredictions:
        """Predict rows of a table with a table model: each row maps column names to values (numbers,
        category texts, None for missing). At most 1000 rows a call; a bad value raises ApiError 400
        naming its row (1-based) and column. A classifier lists `top_k` classes per row."""
        body = {"rows": [dict(row) for row in rows]}
        path = _path("api", "models", model_id, "predict", "rows")
        data = self._request("POST", path, json=body, params={"top_k": top_k})
        return self._parse(RowPredictions, data)

    def predict_csv(self, model_id: str, path: str | os.PathLike[str], top_k: int = 5) -> RowPredictions:
        """Predict every row of a CSV (or .tsv) file with a table model, on the server; a bad value
        raises ApiError 400 naming its row (1-based, after the header) and column."""
        source = Path(path)
        try:
            content = source.read_bytes()
        except OSError as exc:
            raise ApiError(None, f"{source}: cannot read the table ({exc.strerror or exc})") from None
        mime = "text/tab-separated-values" if source.suffix.lower() == ".tsv" else "text/csv"
        timeout = httpx.Timeout(self.timeout, read=max(self.timeout, UPLOAD_READ_TIMEOUT_S))
        data = self._request(
            "POST",
            _path("api", "models", model_id, "predict", "rows"),
            files=[("file", (source.name, content, mime))],
            params={"top_k": top_k},
            timeout=timeout,
        )
        return self._parse(RowPredictions, data)

    def download(self, model_id: str, format: str = "bundle", dest: str | os.PathLike[str] = ".") -> Path:
        """Save the bundle (zip), an `onnx` or `torchscript` export, or the training `script`.

        `dest` is a file, or a folder to save under the server's file name. Returns the file written.
        """
        target = Path(dest)
        path = _path("api", "models", model_id, "download")
        timeout = httpx.Timeout(self.timeout, read=max(self.timeout, UPLOAD_READ_TIMEOUT_S))
        try:
            with self._http.stream(
                "GET", path, params={"format": format}, headers=self._auth(), timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    raise self._error(response)
                if target.is_dir():
                    found = _FILENAME.search(response.headers.get("content-disposition", ""))
                    target = target / Path(found[1] if found else f"{model_id}.{format}").name
                partial = target.with_name(f".{target.name}.part")
                with partial.open("wb") as f:
                    for chunk in response.iter_bytes():
                        f.write(chunk)
                partial.replace(target)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from None
        return target

    # --- datasets ------------------------------------------------------------------------------------

    def upload_dataset(self, path: str | os.PathLike[str], name: str | None = None) -> Dataset:
        """Upload a .zip (class folders, or a CSV with its images), a .npy per class, a table (.csv,
        .tsv or .parquet), or a folder of class folders (zipped on the way)."""
        source = Path(path)
        if not source.exists():
            raise ApiError(None, f"{source}: no such file or folder")
        with tempfile.TemporaryDirectory(prefix="dragdl-upload-") as scratch:
            if source.is_dir():
                npy = sorted(p for p in source.iterdir() if p.suffix == ".npy" and p.is_file())
                sources = npy or [_zip_folder(source, Path(scratch) / f"{source.name or 'dataset'}.zip")]
            else:
                sources = [source]
            handles = [p.open("rb") for p in sources]
            try:
                files = [
                    ("files", (p.name, h, "application/octet-stream"))
                    for p, h in zip(sources, handles, strict=True)
                ]
                timeout = httpx.Timeout(self.timeout, read=max(self.timeout, UPLOAD_READ_TIMEOUT_S))
                data = {"name": name} if name else {}
                answer = self._request("POST", "/api/datasets", files=files, data=data, timeout=timeout)
            finally:
                for handle in handles:
                    handle.close()
        return self._parse(Dataset, answer)

    def list_datasets(self) -> list[Dataset]:
        return self._parse_list(Dataset, self._request("GET", "/api/datasets"))


def _zip_folder(folder: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:  # images are compressed already
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if path.is_file() and not any(part.startswith(".") for part in relative.parts):
                archive.write(path, relative.as_posix())
    return out
