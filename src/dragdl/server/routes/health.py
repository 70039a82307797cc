"""`GET /api/health`: the server answers, and whether its database does (a load balancer or
`docker compose` health check should not call a server healthy while every request would fail)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy import text
from starlette.concurrency import run_in_threadpool

from dragdl import __version__
from dragdl.server.known_failures import RETRY_AFTER_S

router = APIRouter(prefix="/api", tags=["health"])

DATABASE_TIMEOUT_S = 2.0
"""How long the health check waits for `SELECT 1` (a cut-off PostgreSQL may not refuse at once)."""


class Health(BaseModel):
    status: str = Field(description="ok, or 'database unavailable' (with HTTP 503).")
    version: str
    database: str = Field("ok", description="ok or unavailable.")


def _database_answers(sessions: Any) -> bool:
    try:
        with sessions() as db:
            db.execute(text("SELECT 1"))
        return True
    except Exception:  # any driver error means: not answering now
        return False


@router.get(
    "/health",
    operation_id="getHealth",
    response_model=Health,
    responses={503: {"model": Health, "description": "The database does not answer."}},
)
async def health(request: Request) -> Any:
    sessions = getattr(request.app.state, "sessions", None)
    answers = True
    if sessions is not None:
        try:
            answers = await asyncio.wait_for(
                run_in_threadpool(_database_answers, sessions), DATABASE_TIMEOUT_S
            )
        except TimeoutError:
            answers = False
    if answers:
        return Health(status="ok", version=__version__)
    down = Health(status="database unavailable", version=__version__, database="unavailable")
    return JSONResponse(down.model_dump(), status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
