"""What the `dragdl` commands share: their consoles, how a command ends on an error (one line and
an exit code, never a traceback), graph files and their problems, JSON output, and the server
commands' --server option and session.

Imported by every `cli_*` module at start-up: it imports only Typer and Rich at module level. The
engine and the SDK are imported inside the functions that use them, so `dragdl run` loads no
client module and `dragdl --help` no engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from dragdl.client import ApiError, DragDLClient
    from dragdl.engine.data.base import DataContext

console = Console()
err_console = Console(stderr=True)

EXIT_FAILED = 1
"""The command ran and its subject failed: a graph with problems, a failed task, a bad prediction."""
EXIT_USAGE = 2
"""The command could not start: a missing or unreadable file, options that do not go together."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT), as shells report it."""

DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory (default: $DRAGDL_DATA_DIR or ~/.dragdl)."),
]
LAST_SERVER = ""
"""--server's default: $DRAGDL_SERVER, else the server of the last `dragdl login`, else the
client's default (http://127.0.0.1:8000); `server_session` resolves it and says which it asks."""
ServerOption = Annotated[
    str,
    typer.Option(
        "--server",
        envvar="DRAGDL_SERVER",
        help="The DragDL server (default: $DRAGDL_SERVER, else the last `dragdl login`'s server, "
        "else http://127.0.0.1:8000).",
        show_default=False,
        show_envvar=False,
    ),
]

STATE_STYLE = {
    "QUEUED": "yellow",
    "RUNNING": "cyan",
    "SUCCEEDED": "green",
    "COMPLETE": "green",
    "PRUNED": "yellow",
    "FAILED": "red",
    "STOPPED": "magenta",
}
"""Colours of task statuses and sweep trial states, the same in every command's output."""


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """End the command with one error line (the message is text, not Rich markup)."""
    err_console.print(f"[red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def skipped(message: str) -> None:
    """Name a file a command passes over (one unreadable image in a folder of thousands)."""
    err_console.print(f"[yellow]skipped:[/] {escape(message)}", highlight=False, soft_wrap=True)


def styled(state: str) -> str:
    """A status or trial state in its colour, as Rich markup."""
    return f"[{STATE_STYLE.get(state, 'white')}]{state}[/]"


def print_json(data: Any) -> None:
    """What --json prints: indented JSON on stdout, nothing else."""
    typer.echo(json.dumps(data, indent=2))


# --- graphs -------------------------------------------------------------------------------------


def data_context(data_dir: Path | None) -> DataContext:
    from dragdl.engine.data.base import DataContext
    from dragdl.paths import default_data_dir

    return DataContext(data_dir=(data_dir or default_data_dir()).expanduser())


def read_graph(path: Path) -> dict[str, Any]:
    """Read a graph file, or end the command naming the file (and the position of a JSON error)."""
    from dragdl.engine.graph.spec import load_graph_file

    try:
        return load_graph_file(path)
    except FileNotFoundError:
        fail(f"{path}: no such file", EXIT_USAGE)
    except json.JSONDecodeError as exc:
        fail(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", EXIT_USAGE)
    except (UnicodeDecodeError, ValueError, OSError) as exc:
        fail(f"{path}: {exc}", EXIT_USAGE)


def print_graph_errors(errors: list[Any], graph: dict[str, Any]) -> None:
    """A graph's problems (`GraphError`s, found here or by a server) as one table on stderr."""
    nodes = graph.get("nodes")
    listed = nodes if isinstance(nodes, list) else []
    types = {node.get("id"): node.get("type") for node in listed if isinstance(node, dict)}
    # Warnings (severity "warning") leave the graph valid: counted apart and shown in yellow.
    warnings = sum(1 for error in errors if getattr(error, "severity", "error") == "warning")
    problems = len(errors) - warnings
    title = ", ".join(
        part
        for part in (
            f"{problems} problem(s) in the graph" if problems else "",
            f"{warnings} warning(s)" if warnings else "",
        )
        if part
    )
    table = Table(title=title, title_style="bold red" if problems else "bold yellow", show_lines=False)
    table.add_column("node", style="cyan", no_wrap=True)
    table.add_column("field", style="magenta")
    table.add_column("problem")
    table.add_column("code", style="dim")
    for error in errors:
        node = f"{error.node_id} ({types.get(error.node_id, '?')})" if error.node_id else "graph"
        warning = getattr(error, "severity", "error") == "warning"
        message = Text(f"warning: {error.message}", style="yellow") if warning else Text(error.message)
        table.add_row(node, error.field or "", message, error.code)
    err_console.print(table)


def server_dataset_hint(graph_file: Path, graph: dict[str, Any], errors: list[Any]) -> None:
    """After `dragdl run`'s errors: a dataset node naming a dataset uploaded to a server (its
    `dataset_id`) cannot be read here, and "dataset ... not found" alone does not say why."""
    refused = {e.node_id for e in errors if getattr(e, "field", None) == "dataset_id"}
    for node in graph.get("nodes", []):
        params = node.get("params") if isinstance(node, dict) else None
        if node.get("id") not in refused or not isinstance(params, dict) or not params.get("dataset_id"):
            continue
        err_console.print(
            f"[yellow]hint:[/] node {escape(repr(node.get('id')))} reads the dataset "
            f"{escape(str(params['dataset_id']))} uploaded to a DragDL server, which `dragdl run` cannot "
            f"reach. Train it on that server: dragdl submit {escape(str(graph_file))} --wait "
            "[--server URL]; or download the data and point the node at the local file or folder "
            "(source: file, path: ...).",
            highlight=False,
        )


# --- a server -----------------------------------------------------------------------------------


def _report(exc: ApiError, login_hint: bool) -> NoReturn:
    message = exc.message if exc.status is None else f"{exc.message} (HTTP {exc.status})"
    if exc.status == 401 and exc.url and login_hint:
        message += f"; log in with: dragdl login --server {exc.url} (or set DRAGDL_TOKEN)"
    fail(message)


def resolve_server(server: str) -> str:
    """The server a command asks: the one named (--server, $DRAGDL_SERVER), else the last login's,
    said on stderr so that a user with two servers knows which answered, else the default."""
    from dragdl.client.credentials import DEFAULT_SERVER, last_server

    if server:
        return server
    last = last_server()
    if last is None:
        return DEFAULT_SERVER
    err_console.print(
        f"[dim]server: {escape(last)} (your last login; --server to ask another)[/]", highlight=False
    )
    return last


@contextmanager
def server_session(server: str, *, login_hint: bool = True) -> Iterator[DragDLClient]:
    """A client for the server (its token: $DRAGDL_TOKEN, else the one `dragdl login` saved); an
    ApiError escaping the block becomes one error line and exit 1."""
    from dragdl.client import ApiError, DragDLClient

    try:
        with DragDLClient(resolve_server(server)) as client:
            yield client
    except ApiError as exc:
        _report(exc, login_hint)


@contextmanager
def graph_refusals(graph: dict[str, Any]) -> Iterator[None]:
    """Within the block, a server's 422 that lists graph problems ends the command with them, in
    the table `dragdl validate` prints."""
    from dragdl.client import ApiError
    from dragdl.engine.graph.errors import GraphError

    try:
        yield
    except ApiError as exc:
        if exc.status != 422 or not exc.errors:
            raise
        err_console.print(f"[red]the server refused the graph:[/] {escape(exc.message)}", highlight=False)
        errors = []
        for item in exc.errors:
            try:
                errors.append(GraphError.model_validate(item))
            except ValueError:
                errors.append(GraphError(code="invalid", message=str(item)))
        print_graph_errors(errors, graph)
        raise typer.Exit(EXIT_FAILED) from None
