"""The FastAPI application and `dragdl serve`."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse

from dragdl import __version__
from dragdl.server.routes import catalog, graphs, health

_HOME = """<!doctype html><html><head><meta charset="utf-8"><title>DragDL</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;color:#1f2937}
code{background:#f3f4f6;padding:.1rem .3rem;border-radius:.25rem}</style></head>
<body><h1>DragDL</h1><p>The DragDL server is running (version {version}).</p>
<p>The API is described at <a href="/docs">/docs</a>. Try <code>GET /api/catalog</code> or
<code>POST /api/graphs/validate</code>; train from the command line with
<code>dragdl run graph.json</code>.</p>
</body></html>"""


def create_app(data_dir: Path) -> FastAPI:
    app = FastAPI(title="DragDL", version=__version__, description="Visual deep-learning workbench API.")
    app.state.data_dir = data_dir
    for module in (health, catalog, graphs):
        app.include_router(module.router)

    @app.get("/", include_in_schema=False)
    def home() -> HTMLResponse:
        return HTMLResponse(_HOME.replace("{version}", __version__))

    return app
