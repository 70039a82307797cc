"""Error answers shared by every route, and their declarations in the OpenAPI schema.

Every refused request answers JSON with a `detail`: a message (`ErrorMessage`), FastAPI's list of
request problems (`RequestProblems`, 422), or for graphs the list of graph problems (see
`dragdl.server.schemas.graphs.GRAPH_REJECTED`). Routes declare the statuses they can answer with
`error_responses(...)`, so the generated client knows every answer and the schema tests can hold the
server to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from dragdl.engine.graph.errors import GraphError
from dragdl.paths import hide_in, hide_server_paths

Responses = dict[int | str, dict[str, Any]]


class ErrorMessage(BaseModel):
    """A refused request: `detail` says why, naming the resource or the value concerned."""

    detail: str


class RequestProblem(BaseModel):
    loc: list[str | int] = Field(description="Where: body, query, path or header, then the field.")
    msg: str
    type: str = Field(description="Machine-readable, e.g. missing, string_too_long, json_invalid.")


class RequestProblems(BaseModel):
    """The request does not match the operation's parameters or body (FastAPI's 422)."""

    detail: list[RequestProblem]


DESCRIPTIONS = {
    400: "The request cannot be used: a body that cannot be parsed, or unusable data.",
    401: "Not signed in: log in, or send 'Authorization: Bearer <API token>'.",
    403: "Not allowed: administrators only, a change without the CSRF header, or single-user mode "
    "reached through a non-loopback host name.",
    404: "Not found (another user's resources do not exist for the caller).",
    409: "The resource's current state does not allow this.",
    410: "The resource's files are gone.",
    413: "The upload is too large.",
    415: "Wrong media type.",
    422: "The request does not match the operation's parameters or body.",
    429: "Too many requests: `Retry-After` says when to try again.",
    501: "Not available in this installation.",
}


def error_responses(*codes: int, described: dict[int, str] | None = None) -> Responses:
    """OpenAPI declarations of error answers with the `ErrorMessage` body; `described` overrides the
    generic descriptions (and adds its codes)."""
    found: Responses = {}
    for code in sorted({*codes, *(described or {})}):
        description = (described or {}).get(code) or DESCRIPTIONS[code]
        found[code] = {"model": ErrorMessage, "description": description}
    return found


SIGNED_IN_ERRORS = error_responses(401, 403)
"""What any route behind authentication can answer (see `dragdl.server.auth.authenticate`)."""

UNPROCESSABLE: Responses = {
    422: {"model": RequestProblems | ErrorMessage, "description": DESCRIPTIONS[422]},
}
"""422 for routes that also refuse a well-formed request with a message (FastAPI declares only the
request-problems list)."""


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


def public_graph_errors(errors: list[GraphError], data_dir: Path, is_admin: bool) -> list[GraphError]:
    """Graph errors as the caller may see them: administrators get them as they are, other users
    without server paths (`hide_server_paths`), in the message and the details alike."""
    if is_admin:
        return errors
    return [
        error.model_copy(
            update={
                "message": hide_server_paths(error.message, data_dir),
                "details": hide_in(error.details, data_dir),
            }
        )
        for error in errors
    ]
