"""`dragdl sweep graph.json --trials 16 --parallel 2 [--server URL]`: a hyper-parameter sweep on a
server, through the SDK. The trials are the user's tasks; this command starts the sweep and, unless
--no-wait, follows it to its end and prints the trials and the best one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table

from dragdl.cli_common import (
    LAST_SERVER,
    ServerOption,
    console,
    fail,
    graph_refusals,
    read_graph,
    server_session,
    styled,
)

if TYPE_CHECKING:
    from dragdl.client import Sweep


def sweep(
    graph_file: Annotated[Path, typer.Argument(help="Graph JSON file with a `search` section.")],
    trials: Annotated[int, typer.Option(min=1, max=1000, help="The budget: trials in all.")] = 16,
    parallel: Annotated[int, typer.Option(min=1, max=64, help="Trials training at once.")] = 2,
    objective: Annotated[
        str | None,
        typer.Option(
            help="A validation metric: val_accuracy, val_loss, val_r2 ... (default: the kind's first)."
        ),
    ] = None,
    sampler: Annotated[Literal["tpe", "random", "grid"], typer.Option(help="How trials are chosen.")] = "tpe",
    pruner: Annotated[
        Literal["median", "halving", "none"], typer.Option(help="Early stopping of poor trials.")
    ] = "median",
    seed: Annotated[int, typer.Option(min=0, help="The sampler's seed.")] = 0,
    name: Annotated[str | None, typer.Option(help="Sweep name (default: the graph's name).")] = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the sweep until it ends.")] = True,
    server: ServerOption = LAST_SERVER,
) -> None:
    """Run a hyper-parameter sweep of a graph on the server (Optuna sampling and pruning)."""
    raw = read_graph(graph_file)
    with server_session(server) as client:
        with graph_refusals(raw):
            created = client.create_sweep(
                raw,
                trials=trials,
                parallel=parallel,
                objective=objective,
                sampler=sampler,
                pruner=pruner,
                seed=seed,
                name=name,
            )
        console.print(
            f"sweep [bold]{created.id}[/] started: {created.trials} trials, {created.parallel} at a time, "
            f"{created.direction} {created.objective}",
            highlight=False,
        )
        if not wait:
            return
        reported: set[tuple[int, str]] = set()

        def show(current: Sweep) -> None:
            for trial in current.trial_list:
                if trial.state != "RUNNING" and (trial.number, trial.state) not in reported:
                    reported.add((trial.number, trial.state))
                    value = "-" if trial.value is None else f"{trial.value:.4f}"
                    console.print(
                        f"trial {trial.number + 1}: {trial.state} {current.objective}={value}",
                        highlight=False,
                    )

        final = client.wait_sweep(created.id, on_change=show)
    console.print(_table(final))
    if final.best_trial is None:
        fail(f"sweep {final.id} ended {final.status} without a complete trial")
    best = next(t for t in final.trial_list if t.number == final.best_trial)
    values = ", ".join(f"{k}={v}" for k, v in best.params.items())
    console.print(
        f"best: trial {best.number + 1} {final.objective}={best.value:.4f} ({escape(values)}); "
        f"task {best.task_id}",
        highlight=False,
    )


def _table(final: Sweep) -> Table:
    names = sorted({name for trial in final.trial_list for name in trial.params})
    table = Table(title=f"sweep {final.id}: {final.status}")
    table.add_column("#", justify="right")
    for name in names:
        table.add_column(name)
    table.add_column("state")
    table.add_column(final.objective, justify="right")
    table.add_column("epochs", justify="right")
    for trial in final.trial_list:
        value = "-" if trial.value is None else f"{trial.value:.4f}"
        cells = [str(trial.params.get(name, "")) for name in names]
        table.add_row(str(trial.number + 1), *cells, styled(trial.state), value, str(len(trial.intermediate)))
    return table


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
