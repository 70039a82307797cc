"""`dragdl serve` and the commands that talk to a running server."""

from __future__ import annotations

from typing import Annotated

import typer

from dragdl.cli_common import EXIT_USAGE, DataDirOption, console, err_console, fail


def register(app: typer.Typer) -> None:
    app.command()(serve)


def serve(
    host: Annotated[str, typer.Option(help="Address to bind; loopback by default.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    data_dir: DataDirOption = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="Single-user mode: no accounts, every request is the local administrator (loopback only).",
        ),
    ] = False,
) -> None:
    """Start the DragDL server (API docs at /docs)."""
    import os

    import uvicorn

    from dragdl.paths import PRIVATE_UMASK

    # Before anything is created: the database, datasets, artifacts, caches and logs, and whatever the
    # Ray workers started from here write, are then the owner's alone.
    os.umask(PRIVATE_UMASK)

    from dragdl.server.app import create_app
    from dragdl.server.settings import LOOPBACK_HOSTS, Settings

    if no_auth and host not in LOOPBACK_HOSTS:
        fail(
            f"--no-auth lets anyone who reaches the server act as its administrator; "
            f"it is only allowed on a loopback address ({', '.join(LOOPBACK_HOSTS)}), not {host}",
            EXIT_USAGE,
        )
    settings = Settings.from_env(data_dir, auth_enabled=not no_auth)
    if host not in LOOPBACK_HOSTS:
        err_console.print(
            f"[yellow]warning:[/] listening on {host}: the server is reachable from other machines"
        )
    console.print(f"DragDL serving on http://{host}:{port} (data in {settings.data_dir})")
    if no_auth:
        console.print("single-user mode (--no-auth): no sign-in, every request is the local administrator")
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")
