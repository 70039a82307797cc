"""The commands that talk to a DragDL server through the SDK: login, submit, tasks, stop (and the
remote half of `dragdl predict --server`).

Every expected failure (an unreachable server, a refused graph, a task that failed) ends with a
message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from dragdl.cli_common import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    LAST_SERVER,
    STATE_STYLE,
    ServerOption,
    console,
    err_console,
    fail,
    graph_refusals,
    print_json,
    read_graph,
    server_session,
    skipped,
    styled,
)

if TYPE_CHECKING:
    from dragdl.client import DragDLClient, Event, Prediction, Task, ValuePrediction
    from dragdl.engine.tasks import TaskKind
    from dragdl.engine.train.events import Event as EngineEvent
    from dragdl.engine.train.events import Status

_BATCH = 64
"""Images per prediction request (the server takes at most 64)."""
_ROWS = 1000
"""Table rows per prediction request (the server takes at most 1000)."""
_ROW = re.compile(r"\brow (\d+)\b")
_TRAINER_STATUS: dict[str, Status] = {
    "RUNNING": "running",
    "SUCCEEDED": "succeeded",
    "FAILED": "failed",
    "STOPPED": "stopped",
}
"""Task statuses as the trainer names them; QUEUED has no trainer counterpart."""
_HEADLINE_METRICS = (
    "test_accuracy",
    "val_accuracy",
    "accuracy",
    "test_r2",
    "val_r2",
    "test_loss",
    "val_loss",
    "loss",
)
"""The first of these a task has is its headline (a classifier's accuracy, a regressor's R²)."""


class StatusChoice(StrEnum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    STOPPED = "STOPPED"


def register(app: typer.Typer) -> None:
    """Add the server commands to the main `dragdl` app."""
    app.command("login")(login)
    app.command("submit")(submit)
    app.command("tasks")(tasks)
    app.command("stop")(stop)


# --- login -----------------------------------------------------------------------------------------


def login(
    server: ServerOption = LAST_SERVER,
    username: Annotated[str, typer.Option(prompt=True, help="Your account on the server.")] = "",
    password: Annotated[
        str, typer.Option(prompt=True, hide_input=True, help="Asked for when not given.")
    ] = "",
) -> None:
    """Log in and save a personal API token for this server in ~/.dragdl/credentials.json (mode 0600)."""
    from dragdl.client import save_token

    with server_session(server, login_hint=False) as client:
        client.login(username, password)
        user = client.me()
        assert client.token is not None
        try:
            path = save_token(client.server_url, client.token, user.username)
        except OSError as exc:
            fail(f"cannot save the token: {exc.strerror or exc} ({exc.filename or ''})")
    console.print(
        f"logged in to {escape(client.server_url)} as [bold]{escape(user.username)}[/]; "
        f"API token saved in {escape(str(path))}",
        highlight=False,
    )
    if os.environ.get("DRAGDL_TOKEN"):
        console.print("[yellow]note:[/] $DRAGDL_TOKEN is set and is used instead of the saved token")


# --- submit ----------------------------------------------------------------------------------------


def submit(
    graph_file: Annotated[Path, typer.Argument(help="Graph JSON file.")],
    server: ServerOption = LAST_SERVER,
    name: Annotated[str | None, typer.Option(help="Task name (default: the graph's name).")] = None,
    priority: Annotated[
        int, typer.Option(min=-100, max=100, help="Orders your own queued tasks (higher first).")
    ] = 0,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the training with progress bars until it ends.")
    ] = False,
) -> None:
    """Queue a graph for training on the server; prints the task id at once.

    With --wait, the exit code is 0 only when the task SUCCEEDED.
    """
    raw = read_graph(graph_file)
    with server_session(server) as client:
        with graph_refusals(raw):
            task = client.submit(raw, name=name, priority=priority)
        console.print(f"task [bold]{task.id}[/] queued: {escape(task.name)}", highlight=False)
        if not wait:
            return
        final = _follow(client, task.id)
        _summary(client, final)
    if final.status == "FAILED":
        error = final.error
        where = f" at node {error.node_id}" if error and error.node_id else ""
        detail = f"{error.message} ({error.code})" if error else "no error was recorded"
        fail(f"task {final.id} FAILED{where}: {detail}")
    if final.status != "SUCCEEDED":
        fail(f"task {final.id} ended {final.status}; continue it with the web UI or the SDK's retry()")


def _follow(client: DragDLClient, task_id: str) -> Task:
    """Stream the task's events into the progress bars of `dragdl run`; returns the finished task."""
    from dragdl.cli_progress import RichReporter
    from dragdl.engine.train.events import MetricEvent, ProgressEvent, StartEvent

    reporter = RichReporter(console)
    steps_per_epoch = 0
    try:
        for event in client.events(task_id):
            if event.kind == "status":
                _print_status(event)
            converted = _engine_event(event)
            if isinstance(converted, StartEvent):
                steps_per_epoch = converted.steps_per_epoch
            elif isinstance(converted, MetricEvent) and converted.scope == "epoch" and steps_per_epoch:
                # The server keeps about two progress events a second: a fast epoch may have none,
                # so its end fills the step bar.
                reporter.emit(ProgressEvent(converted.epoch, steps_per_epoch, steps_per_epoch))
            if converted is not None:
                reporter.emit(converted)
    except KeyboardInterrupt:
        reporter.close()
        err_console.print(
            f"[yellow]stopped watching[/]; task {task_id} goes on (stop it with: dragdl stop {task_id})"
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        reporter.close()
    return client.get_task(task_id)


def _print_status(event: Event) -> None:
    status = event.status or "?"
    message = str(event.data.get("message") or "")
    attempt = event.data.get("attempt")
    if status == "RUNNING" and isinstance(attempt, int) and attempt > 1:
        message = f"attempt {attempt}: {message}"
    style = STATE_STYLE.get(status, "white")
    console.print(f"[{style}]{status}[/] [dim]{escape(message)}[/]", highlight=False)


def _engine_event(event: Event) -> EngineEvent | None:
    """The engine event an SSE payload came from, for `RichReporter`; None for what it does not show.

    Status events carry the task's status (RUNNING, ...), not the trainer's (running, ...); errors are
    left out here and printed once, with their node, from the finished task.
    """
    from dragdl.engine.train.events import StatusEvent, event_from_json

    if event.kind == "status":
        status = _TRAINER_STATUS.get(event.status or "")
        return StatusEvent(status, str(event.data.get("message") or "")) if status else None
    if event.kind == "error":
        return None
    try:
        return event_from_json({**event.data, "type": event.kind})
    except (TypeError, ValueError):  # an event kind or field this version does not know
        return None


def _summary(client: DragDLClient, task: Task) -> None:
    style = "bold green" if task.status == "SUCCEEDED" else "bold red"
    table = Table(title="Result", show_header=False, title_style=style)
    table.add_column("what", style="cyan")
    table.add_column("value", justify="right")
    table.add_row("task", task.id)
    table.add_row("status", styled(task.status))
    table.add_row("epochs", str(task.epoch))
    if task.elapsed_s is not None:
        table.add_row("time", f"{task.elapsed_s:.1f} s")
    best = task.best_metrics
    shown = [k for k in best if k.startswith("test_")]
    shown += [k for k in ("val_accuracy", "val_r2", "val_loss") if k in best]
    for key in shown or sorted(best):
        table.add_row(key.replace("_", " "), _fmt(key, best[key]))
    model = next(iter(client.list_models(task_id=task.id)), None)
    if model is not None:
        table.add_row("model", model.id)
    console.print(table)
    if model is not None:
        inputs = "TABLE.csv" if model.input_columns is not None else "IMAGE..."
        console.print(
            f"predict with: dragdl predict --server {escape(client.server_url)} {model.id} {inputs}",
            highlight=False,
        )


def _fmt(key: str, value: float) -> str:
    return f"{value * 100:.2f}%" if "accuracy" in key else f"{value:.4f}"


# --- tasks, stop -----------------------------------------------------------------------------------


def tasks(
    server: ServerOption = LAST_SERVER,
    status: Annotated[
        StatusChoice | None, typer.Option("--status", case_sensitive=False, help="Only tasks in this state.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=200, help="How many (newest first).")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tasks as JSON.")] = False,
) -> None:
    """List your tasks on the server, newest first."""
    with server_session(server) as client:
        found = client.list_tasks(status.value if status else None, limit=limit)
    if as_json:
        print_json([task.model_dump(mode="json") for task in found])
        return
    if not found:
        console.print("no tasks" + (f" with status {status.value}" if status else ""))
        return
    table = Table(title=f"{len(found)} task(s) on {escape(client.server_url)}")
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("status")
    table.add_column("progress", justify="right")
    table.add_column("best metric", justify="right")
    table.add_column("created", no_wrap=True)
    for task in found:
        table.add_row(
            task.id,
            escape(task.name),
            styled(task.status),
            f"{task.progress:.0%}" + (f" (epoch {task.epoch})" if task.epoch else ""),
            _headline(task.best_metrics),
            _local_time(task),
        )
    console.print(table)


def _headline(best: dict[str, float]) -> str:
    key = next((k for k in _HEADLINE_METRICS if k in best), None)
    return f"{key} {_fmt(key, best[key])}" if key else ""


def _local_time(task: Task) -> str:
    from dragdl.client.models import as_utc

    return as_utc(task.created_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def stop(
    task_id: Annotated[str, typer.Argument(help="The task's id (see `dragdl tasks`).")],
    server: ServerOption = LAST_SERVER,
) -> None:
    """Stop a task: a queued one at once, a running one after its next checkpoint."""
    with server_session(server) as client:
        task = client.stop(task_id)
    if task.status == "STOPPED":
        console.print(f"task {task.id} stopped", highlight=False)
    else:
        console.print(f"task {task.id}: stop requested; it checkpoints, then ends STOPPED", highlight=False)


# --- predict --server ------------------------------------------------------------------------------


def predict_remote(
    server: str, model_id: str, files: list[tuple[Path, bool]], top_k: int
) -> tuple[str, list[str], list[tuple[Path, Prediction]]]:
    """(model name, classes, (file, prediction) rows) for `dragdl predict --server` on a classifier
    of images (`predict_rows_remote` and `predict_values_remote` serve the other models).

    As locally, an unreadable image named on the command line ends the command; one found in a
    folder is named and skipped.
    """
    from dragdl.client import ApiError

    rows: list[tuple[Path, Prediction]] = []
    with server_session(server) as client:
        model = client.get_model(model_id)
        if model.input_columns is not None:
            fail(f"model {model_id} takes table rows, not images: give it CSV, TSV or Parquet files")
        for start in range(0, len(files), _BATCH):
            batch = files[start : start + _BATCH]
            try:
                answer = client.predict(model_id, [path for path, _ in batch], top_k)
            except ApiError as exc:
                if exc.status != 400 or all(explicit for _, explicit in batch):
                    raise
                rows.extend(_one_by_one(client, model_id, batch, top_k))
                continue
            rows.extend(zip((path for path, _ in batch), _classified(answer.predictions), strict=True))
    return model.name, model.classes, rows


def _classified(predictions: list[Prediction | ValuePrediction]) -> list[Prediction]:
    """A classifier's predictions (predict_remote checked the model's kind first)."""
    from dragdl.client import Prediction

    found = [p for p in predictions if isinstance(p, Prediction)]
    if len(found) != len(predictions):
        fail("the server answered values, not classes: the model is not a classifier")
    return found


def predict_values_remote(
    server: str, model_id: str, files: list[tuple[Path, bool]]
) -> tuple[str, TaskKind, list[tuple[Path, int, dict[str, Any]]]] | None:
    """(model name, its kind, (image, 1, answer) per image) for `dragdl predict --server` on an image
    model whose kind ranks no classes (regression); None for a classifier. An unreadable image ends
    the command."""
    from dragdl.client import ValuePrediction
    from dragdl.engine.tasks import get_task_kind

    with server_session(server) as client:
        model = client.get_model(model_id)
        kind = get_task_kind(model.task)
        if kind.ranks_classes or model.input_columns is not None:
            return None
        rows: list[tuple[Path, int, dict[str, Any]]] = []
        for start in range(0, len(files), _BATCH):
            batch = [path for path, _ in files[start : start + _BATCH]]
            answer = client.predict(model_id, batch)
            for path, prediction in zip(batch, answer.predictions, strict=True):
                if not isinstance(prediction, ValuePrediction):
                    fail("the server answered classes, not values: the model is a classifier")
                rows.append((path, 1, prediction.to_json()))
    return model.name, kind, rows


def predict_samples_remote(
    server: str, model_id: str, paths: list[Path], top_k: int
) -> tuple[list[str], TaskKind, list[tuple[Path, int, dict[str, Any]]]] | None:
    """(classes, the model's kind, (file, sample, answer) per sample) for `dragdl predict --server` on
    files of samples (.ts, .csv, .npy for a sequence model), sent in requests of at most 64 files;
    None when the paths are images or folders of them (the image paths serve those). A file the
    server refuses ends the command with its message, which names the file and line."""
    from dragdl.engine.inputs.image_decode import is_image_file
    from dragdl.engine.tasks import get_task_kind

    if not paths or any(path.is_dir() or is_image_file(path) for path in paths):
        return None
    for path in paths:
        if not path.is_file():
            fail(f"{path}: no such file", EXIT_USAGE)
    rows: list[tuple[Path, int, dict[str, Any]]] = []
    classes: list[str] = []
    kind: TaskKind | None = None
    with server_session(server) as client:
        for start in range(0, len(paths), _BATCH):
            batch = paths[start : start + _BATCH]
            answer = client.predict_files(model_id, batch, top_k)
            classes, kind = answer.classes, get_task_kind(answer.task)
            by_name = {path.name: path for path in batch}
            rows.extend(
                (by_name.get(p.filename, Path(p.filename)), p.sample, p.answer) for p in answer.predictions
            )
    assert kind is not None  # at least one request was answered
    return classes, kind, rows


RemoteRows = tuple[str, list[str], "TaskKind", list[tuple[Path, int, dict[str, Any]]]]
"""(model name, classes, the model's task kind, (file, row, answer) per row)."""


def predict_rows_remote(server: str, model_id: str, files: list[Path], top_k: int) -> RemoteRows | None:
    """`dragdl predict --server` on a table model: every row of the CSV/TSV/Parquet files, read here
    as `dragdl predict` reads them and predicted on the server in requests of its row limit. None when
    the model takes images. A bad value ends the command naming the file, row and column."""
    from dragdl.client import ApiError
    from dragdl.engine.data.base import DatasetError
    from dragdl.engine.data.tables import read_rows
    from dragdl.engine.tasks import get_task_kind

    found: list[tuple[Path, int, dict[str, Any]]] = []
    with server_session(server) as client:
        model = client.get_model(model_id)
        if model.input_columns is None:
            return None
        for path in files:
            if not path.is_file():
                fail(f"{path}: no such file", EXIT_USAGE)
            try:
                rows = [{k: _plain(v) for k, v in row.items()} for row in read_rows(path)]
            except DatasetError as exc:  # its message names the file already, or nothing
                fail(exc.message if path.name in exc.message else f"{path}: {exc.message}")
            for start in range(0, len(rows), _ROWS):
                try:
                    answer = client.predict_rows(model_id, rows[start : start + _ROWS], top_k)
                except ApiError as exc:
                    if exc.status != 400:
                        raise
                    # The server counts the rows of one request; the file's numbers go on from `start`.
                    fail(f"{path}: {_shift_rows(exc.message, start)}")
                found.extend(
                    (path, start + i + 1, p.model_dump(exclude_unset=True, by_alias=True))
                    for i, p in enumerate(answer.predictions)
                )
    return model.name, model.classes, get_task_kind(model.task), found


def _shift_rows(message: str, offset: int) -> str:
    """A server message about the rows of one request, with the rows numbered as in the file."""
    return _ROW.sub(lambda found: f"row {offset + int(found[1])}", message)


def _plain(value: Any) -> Any:
    """A cell as JSON takes it (numpy scalars from Parquet become Python numbers)."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def _one_by_one(
    client: DragDLClient, model_id: str, batch: list[tuple[Path, bool]], top_k: int
) -> Iterator[tuple[Path, Prediction]]:
    from dragdl.client import ApiError

    for path, explicit in batch:
        try:
            yield path, _classified(client.predict(model_id, [path], top_k).predictions)[0]
        except ApiError as exc:
            if explicit or exc.status != 400:
                raise
            skipped(exc.message)
