from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from dragdl import __version__

router = APIRouter(prefix="/api", tags=["health"])


class Health(BaseModel):
    status: str
    version: str


@router.get("/health", operation_id="getHealth")
def health() -> Health:
    return Health(status="ok", version=__version__)
