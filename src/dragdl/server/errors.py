"""Error answers shared by every route, and their declarations in the OpenAPI schema.

Every refused request answers JSON with a `detail`: a message (`ErrorMessage`), FastAPI's list of
request problems (`RequestProblems`, 422), or for graphs the list of graph problems (see
`dragdl.server.schemas.graphs.GRAPH_REJECTED`). Routes declare the statuses they can answer with
`error_responses(...)`, so the generated client knows every answer and the schema tests can hold the
server to it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from dragdl.engine.graph.errors import GraphError

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


# An absolute or home-relative path: not the tail of a URL or of a relative path, nor a division in a
# formula ("x/255"), and ending before quotes, brackets and separators.
_SERVER_PATH = re.compile(r"(?<![\w.:/~\\)\]-])~?/[\w.~-][^\s'\"`,;()<>\[\]{}]*")
_TRAILING = ".:"
"""Sentence punctuation after a path ("Looked in: /a/b.pth.") is not part of it."""


def hide_server_paths(text: str, data_dir: Path) -> str:
    """`text` as a user who is not an administrator may see it: paths inside the data dir relative
    to it (`datasets/<id>/data/cat/1.png`, `cache/weights`), any other server path replaced by
    "a server file". Engine messages name absolute paths (caches, other users' files, the layout of
    the machine); what the user may act on is inside their data."""
    roots = [data_dir, data_dir.resolve()]

    def rewrite(match: re.Match[str]) -> str:
        raw = match.group(0)
        stripped = raw.rstrip(_TRAILING)
        trail = raw[len(stripped) :]
        path = Path(stripped).expanduser()
        for root in roots:
            if path.is_relative_to(root):
                inside = path.relative_to(root).as_posix()
                return ("the data folder" if inside == "." else inside) + trail
        return "a server file" + trail

    return _SERVER_PATH.sub(rewrite, text)


def _hide_in(value: Any, data_dir: Path) -> Any:
    if isinstance(value, str):
        return hide_server_paths(value, data_dir)
    if isinstance(value, dict):
        return {key: _hide_in(item, data_dir) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_hide_in(item, data_dir) for item in value]
    return value


def public_graph_errors(errors: list[GraphError], data_dir: Path, is_admin: bool) -> list[GraphError]:
    """Graph errors as the caller may see them: administrators get them as they are, other users
    without server paths (`hide_server_paths`), in the message and the details alike."""
    if is_admin:
        return errors
    return [
        error.model_copy(
            update={
                "message": hide_server_paths(error.message, data_dir),
                "details": _hide_in(error.details, data_dir),
            }
        )
        for error in errors
    ]
