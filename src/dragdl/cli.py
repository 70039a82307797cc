"""`dragdl`: validate, train and inspect graphs from the command line."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dragdl.paths import default_data_dir

app = typer.Typer(
    help="DragDL: build, train and use image models from dataflow graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory (default: $DRAGDL_DATA_DIR or ~/.dragdl)."),
]


def _data_context(data_dir: Path | None) -> Any:
    from dragdl.engine.data.base import DataContext

    return DataContext(data_dir=(data_dir or default_data_dir()).expanduser())


def _read_graph(path: Path) -> dict[str, Any]:
    """Read a graph file or exit 2 with a message that names the file and the position."""
    from dragdl.engine.graph.spec import load_graph_file

    try:
        return load_graph_file(path)
    except FileNotFoundError:
        err_console.print(f"[red]error:[/] {path}: no such file")
    except json.JSONDecodeError as exc:
        err_console.print(
            f"[red]error:[/] {path}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        )
    except (UnicodeDecodeError, ValueError, OSError) as exc:
        err_console.print(f"[red]error:[/] {path}: {exc}")
    raise typer.Exit(2)


def _print_errors(errors: list[Any], graph: dict[str, Any]) -> None:
    types = {
        node.get("id"): node.get("type")
        for node in graph.get("nodes", [])
        if isinstance(graph.get("nodes"), list) and isinstance(node, dict)
    }
    table = Table(title=f"{len(errors)} problem(s) in the graph", title_style="bold red", show_lines=False)
    table.add_column("node", style="cyan", no_wrap=True)
    table.add_column("field", style="magenta")
    table.add_column("problem")
    table.add_column("code", style="dim")
    for error in errors:
        node = f"{error.node_id} ({types.get(error.node_id, '?')})" if error.node_id else "graph"
        table.add_row(node, error.field or "", error.message, error.code)
    err_console.print(table)


@app.command()
def validate(
    graph_file: Annotated[Path, typer.Argument(help="Graph JSON file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the validation result as JSON.")] = False,
    data_dir: DataDirOption = None,
) -> None:
    """Check a graph: every error with its node, and the inferred shape of every node."""
    from dragdl.engine.analysis.validate import validate_graph

    raw = _read_graph(graph_file)
    result = validate_graph(raw, _data_context(data_dir))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    elif result.ok:
        table = Table(title=f"{graph_file.name}: valid", title_style="bold green")
        table.add_column("node", style="cyan")
        table.add_column("type")
        table.add_column("output shape", justify="right")
        for node in raw.get("nodes", []):
            table.add_row(node["id"], node["type"], result.shapes.get(node["id"], ""))
        console.print(table)
        dataset = result.dataset
        if dataset and dataset.columns is not None:
            kinds = ", ".join(
                f"{c.name} ({c.kind}{f', {c.missing} missing' if c.missing else ''})" for c in dataset.columns
            )
            console.print(
                f"dataset: {dataset.count} rows, target {dataset.target!r} "
                f"({len(dataset.classes)} distinct), {len(dataset.columns)} columns: {escape(kinds)}",
                highlight=False,
            )
        elif dataset:
            console.print(
                f"dataset: {dataset.count} images, {len(dataset.classes)} classes, "
                f"{dataset.channels} channel(s), size {dataset.size or 'varies'}"
            )
    else:
        _print_errors(result.errors, raw)
    if not result.ok:
        raise typer.Exit(1)


@app.command()
def run(
    graph_file: Annotated[Path, typer.Argument(help="Graph JSON file.")],
    epochs: Annotated[int | None, typer.Option(help="Override the train node's epochs.", min=1)] = None,
    out: Annotated[Path | None, typer.Option(help="Output directory (default: runs/<name>-<time>).")] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the newest checkpoint in --out.")] = False,
    device: Annotated[str | None, typer.Option(help="Override the device: auto, cpu or cuda.")] = None,
    data_dir: DataDirOption = None,
) -> None:
    """Train a graph with progress bars; writes checkpoints, report.json and log.txt to --out."""
    from dragdl.cli_progress import RichReporter, RunFiles
    from dragdl.engine.errors import EngineError
    from dragdl.engine.graph.errors import GraphInvalid
    from dragdl.engine.run import read_report, run_graph
    from dragdl.engine.train.events import ErrorEvent, LogEvent
    from dragdl.engine.train.reporter import MultiReporter

    raw = _read_graph(graph_file)
    if resume and out is None:
        err_console.print("[red]error:[/] --resume needs --out pointing at the run to continue")
        raise typer.Exit(2)
    if out is None:
        slug = "".join(c if c.isalnum() else "-" for c in str(raw.get("name", "run")).lower()).strip("-")
        out = Path("runs") / f"{slug or 'run'}-{datetime.now():%Y%m%d-%H%M%S}"
    overrides: dict[str, Any] = {}
    if epochs is not None:
        overrides["epochs"] = epochs
    if device is not None:
        overrides["device"] = device
    progress = RichReporter(console)
    files = RunFiles(out)
    reporter = MultiReporter(progress, files)
    started = time.perf_counter()
    try:
        result = run_graph(raw, _data_context(data_dir), out, reporter, overrides=overrides, resume=resume)
    except GraphInvalid as exc:
        progress.close()
        _print_errors(exc.errors, raw)
        raise typer.Exit(1) from None
    except EngineError as exc:  # a layer, the data or the run failed: said once, with its node
        progress.close()
        if not files.error_logged:  # failures inside training are in log.txt already, from the trainer
            files.emit(ErrorEvent(exc.code, exc.message, exc.node_id))
        where = f" at node {exc.node_id}" if exc.node_id else ""
        err_console.print(f"[red]training failed{where}:[/] {exc.message}")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        progress.close()
        hint = f"dragdl run {graph_file} --out {out} --resume"
        if files.started:
            files.emit(LogEvent("warning", f"interrupted; continue with: {hint}"))
        err_console.print(f"[yellow]interrupted[/]; continue with: {hint}")
        raise typer.Exit(130) from None
    except Exception as exc:
        progress.close()
        if not files.error_logged:
            files.emit(ErrorEvent("train_failed", f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        files.close()
    progress.close()
    progress.print_summary(result.status, read_report(result), out, time.perf_counter() - started)


@app.command("catalog")
def catalog_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the catalog as JSON (what the canvas uses).")
    ] = False,
) -> None:
    """List every node type: category, ports and params."""
    from dragdl.engine.nodes.registry import catalog

    entries = catalog()
    if as_json:
        typer.echo(json.dumps(entries, indent=2))
        return
    table = Table(title=f"DragDL node catalog ({len(entries)} node types)")
    table.add_column("type", style="cyan", no_wrap=True)
    table.add_column("ports")
    table.add_column("params")
    table.add_column("description")
    for entry in entries:
        ins = ",".join("|".join(p["types"]) for p in entry["inputs"]) or "-"
        outs = ",".join("|".join(p["types"]) for p in entry["outputs"]) or "-"
        params = ", ".join(entry["params_schema"].get("properties", {}))
        random = " [yellow](random)[/]" if entry["random"] else ""
        table.add_row(entry["type"], f"{ins} -> {outs}", params, entry["description"] + random)
    console.print(table)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the graph format."""
    from dragdl.engine.graph.spec import graph_json_schema

    typer.echo(json.dumps(graph_json_schema(), indent=2))


def main() -> None:  # pragma: no cover - console entry point
    app(sys.argv[1:])


# Further command groups register themselves here (one line each).
__import__("dragdl.cli_model").cli_model.register(app)  # predict, export (lazy-importing commands)
from dragdl import cli_server as _cli_server  # noqa: E402

_cli_server.register(app)
__import__("dragdl.cli_code").cli_code.register(app)  # export-code
__import__("dragdl.cli_remote").cli_remote.register(app)  # login, submit, tasks, stop (server)
__import__("dragdl.cli_sweep").cli_sweep.register(app)  # sweep (server)
