"""`dragdl`: validate, train and inspect graphs from the command line."""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from dragdl import cli_code, cli_model, cli_remote, cli_server, cli_sweep
from dragdl.cli_common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    DataDirOption,
    console,
    data_context,
    err_console,
    fail,
    print_graph_errors,
    print_json,
    read_graph,
    server_dataset_hint,
)

app = typer.Typer(
    help="DragDL: build, train and use models of images, tables, sequences and point clouds from "
    "dataflow graphs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def validate(
    graph_file: Annotated[Path, typer.Argument(help="Graph JSON file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the validation result as JSON.")] = False,
    data_dir: DataDirOption = None,
) -> None:
    """Check a graph: every error with its node, and the inferred shape of every node."""
    from dragdl.engine.analysis.validate import validate_graph

    raw = read_graph(graph_file)
    result = validate_graph(raw, data_context(data_dir))
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
            # Its input type words one sample (validate.py: InputType.summary).
            classes = f", {len(dataset.classes)} classes" if dataset.classes else ""
            console.print(
                f"dataset: {dataset.count} {dataset.samples_name}{classes}, {escape(dataset.sample or '')}",
                highlight=False,
            )
    else:
        print_graph_errors(result.errors, raw)
    warnings = [error for error in result.errors if not error.blocking]
    if result.ok and warnings and not as_json:
        print_graph_errors(warnings, raw)  # the graph is valid; these say what it may not mean
    if not result.ok:
        raise typer.Exit(EXIT_FAILED)


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

    raw = read_graph(graph_file)
    if resume and out is None:
        fail("--resume needs --out pointing at the run to continue", EXIT_USAGE)
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
        result = run_graph(raw, data_context(data_dir), out, reporter, overrides=overrides, resume=resume)
    except GraphInvalid as exc:
        progress.close()
        print_graph_errors(exc.errors, raw)
        server_dataset_hint(graph_file, raw, exc.errors)
        raise typer.Exit(EXIT_FAILED) from None
    except EngineError as exc:  # a layer, the data or the run failed: said once, with its node
        progress.close()
        if not files.error_logged:  # failures inside training are in log.txt already, from the trainer
            files.emit(ErrorEvent(exc.code, exc.message, exc.node_id))
        where = f" at node {exc.node_id}" if exc.node_id else ""
        err_console.print(f"[red]training failed{where}:[/] {escape(exc.message)}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from None
    except KeyboardInterrupt:
        progress.close()
        hint = f"dragdl run {graph_file} --out {out} --resume"
        if files.started:
            files.emit(LogEvent("warning", f"interrupted; continue with: {hint}"))
        err_console.print(f"[yellow]interrupted[/]; continue with: {hint}")
        raise typer.Exit(EXIT_INTERRUPTED) from None
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
        print_json(entries)
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

    print_json(graph_json_schema())


def main() -> None:  # pragma: no cover - console entry point
    app(sys.argv[1:])


# The other command groups (each module's `register` adds its commands; their help lists them in
# this order).
for _group in (cli_model, cli_server, cli_code, cli_remote, cli_sweep):
    _group.register(app)
