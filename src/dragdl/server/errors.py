"""Error answers shared by every route."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


def _printable(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return {key: _printable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(item) for item in value]
    return value


async def request_validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own 422, except that a body which is not UTF-8 no longer turns it into a 500."""
    assert isinstance(exc, RequestValidationError)
    errors = [_printable(error) for error in exc.errors()]
    return JSONResponse(status_code=422, content={"detail": jsonable_encoder(errors)})
