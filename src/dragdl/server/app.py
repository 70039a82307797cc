"""The FastAPI application and its start-up: database migrations, then the task runner."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse

from dragdl import __version__
from dragdl.db.migrate import upgrade_database
from dragdl.db.session import make_engine, make_session_factory
from dragdl.paths import make_private_dir
from dragdl.runner.sweep_driver import SweepDriver
from dragdl.server.errors import SIGNED_IN_ERRORS, request_validation_error
from dragdl.server.frontend import add_security_headers, serve_frontend
from dragdl.server.known_failures import KnownFailuresMiddleware
from dragdl.server.request_limits import BodyLimitMiddleware, upload_limits
from dragdl.server.routes import auth, catalog, datasets, graphs, health, models, sweeps, tasks, users
from dragdl.server.services.admission import trial_admission
from dragdl.server.services.cpu_pool import CpuPool
from dragdl.server.services.event_hub import EventHub
from dragdl.server.services.graphs import GraphRejected
from dragdl.server.services.prediction import PredictionService
from dragdl.server.services.sweep_importance import ImportanceCache
from dragdl.server.services.tasks import create_runner
from dragdl.server.settings import Settings
from dragdl.server.throttle import LoginThrottle, PasswordGate

PUBLIC_ROUTERS = (health.router, catalog.router, auth.router)
"""Routers with public routes (the auth router declares the errors of its signed-in routes itself)."""
SIGNED_IN_ROUTERS = (users.router, graphs.router, datasets.router, models.router, tasks.router, sweeps.router)
"""Routers whose every route needs a signed-in user: each declares 401 and 403."""

LOGIN_QUEUE = 64
"""Sign-ins that may wait for a password check; beyond that they are answered 429 at once."""

_HOME = """<!doctype html><html><head><meta charset="utf-8"><title>DragDL</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;color:#1f2937}
code{background:#f3f4f6;padding:.1rem .3rem;border-radius:.25rem}</style></head>
<body><h1>DragDL</h1><p>The DragDL server is running (version {version}).</p>
<p>The API is described at <a href="/docs">/docs</a>. Try <code>GET /api/catalog</code> or
<code>POST /api/graphs/validate</code>; train from the command line with
<code>dragdl run graph.json</code>.</p>
</body></html>"""


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings: Settings = app.state.settings
    make_private_dir(settings.data_dir)
    upgrade_database(settings.database_url)
    engine = make_engine(settings.database_url)
    app.state.sessions = make_session_factory(engine)
    app.state.events = EventHub(app.state.sessions, settings.max_event_streams_per_user)
    app.state.runner = create_runner(settings, app.state.sessions)
    app.state.runner.start()
    app.state.sweeps = SweepDriver(
        app.state.sessions,
        app.state.runner.wake,
        admit=trial_admission(settings, app.state.runner),
    )
    app.state.sweeps.start()
    app.state.cpu_pool = CpuPool.shared(settings.cpu_workers)
    app.state.importance = ImportanceCache(app.state.cpu_pool)
    app.state.predictor = PredictionService.from_settings(settings)
    try:
        yield
    finally:
        await app.state.events.close()
        app.state.sweeps.shutdown()
        app.state.importance.close()
        app.state.runner.shutdown()
        await app.state.predictor.close()
        engine.dispose()


def create_app(settings: Settings) -> FastAPI:
    app = FastAPI(
        title="DragDL",
        version=__version__,
        description="Visual deep-learning workbench API.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.login_throttle = LoginThrottle()
    app.state.password_gate = PasswordGate(settings.login_concurrency, waiting=LOGIN_QUEUE)
    app.add_exception_handler(RequestValidationError, request_validation_error)
    app.add_exception_handler(GraphRejected, graphs.graph_rejected)
    for router in PUBLIC_ROUTERS:
        app.include_router(router)
    for router in SIGNED_IN_ROUTERS:
        app.include_router(router, responses=SIGNED_IN_ERRORS)

    @app.get("/", include_in_schema=False)
    def home() -> HTMLResponse:
        return HTMLResponse(_HOME.replace("{version}", __version__))

    app.add_middleware(KnownFailuresMiddleware)  # innermost: the others wrap its 503 and 507 too
    app.add_middleware(
        BodyLimitMiddleware, default_bytes=settings.max_body_bytes, routes=upload_limits(settings)
    )
    serve_frontend(app)  # the built web UI, when there is one, answers / and the paths no route takes
    add_security_headers(app)
    return app
