"""Error answers shared by every route, and their declarations in the OpenAPI schema.

Every refused request answers JSON with a `detail`: a message (`ErrorMessage`), FastAPI's list of
request problems (`RequestProblems`, 422), or for graphs the list of graph problems (see
`dragdl.server.schemas.graphs.GRAPH_REJECTED`). Routes declare the statuses they can answer with
`error_responses(...)`, so the generated client knows every answer and the schema tests can hold the
server to it.
"""

from __future__ import annotations

from collections.abc import Iterable
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


MAX_LISTED_PROBLEMS = 20
"""Request problems a 422 lists; one more problem (`too_many_problems`) counts the others."""
MAX_QUOTED_INPUT = 200
"""Characters of a problem's `input` that a 422 quotes."""


def _bounded_input(value: Any) -> Any:
    """A problem's input as the 422 shows it: as it is while it is short, else the start of its text,
    so that a 4 MB body is not sent back (issue 23 review: a 26 MB echo took a minute to encode)."""
    if value is None or isinstance(value, bool | float):
        return value
    budget = [MAX_QUOTED_INPUT]
    if _fits(value, budget):
        return _printable(value)
    text = _start(value)
    return text[:MAX_QUOTED_INPUT] + "…"


def _fits(value: Any, budget: list[int]) -> bool:
    """Whether `value` prints in the budget, looking at no more of it than the budget allows."""
    if isinstance(value, dict | list | tuple):
        budget[0] -= 2
        items = value.items() if isinstance(value, dict) else value
        return budget[0] >= 0 and all(_fits(item, budget) for item in items)
    budget[0] -= len(value) if isinstance(value, str | bytes | bytearray) else 8
    return budget[0] >= 0 and (not isinstance(value, int) or value.bit_length() < 600)


def _start(value: Any) -> str:
    """About the first MAX_QUOTED_INPUT characters of `value` as text, without printing all of it."""
    if isinstance(value, bytes | bytearray):
        return bytes(value[: MAX_QUOTED_INPUT * 4]).decode("utf-8", errors="replace")
    if isinstance(value, str):
        return value[:MAX_QUOTED_INPUT]
    if isinstance(value, int):
        return str(value)[:MAX_QUOTED_INPUT] if value.bit_length() < 14_000 else "a very large integer"
    if isinstance(value, dict):
        parts = (f"{_inner(key)}: {_inner(item)}" for key, item in value.items())
        return "{" + _joined(parts) + "}"
    if isinstance(value, list | tuple):
        return "[" + _joined(_inner(item) for item in value) + "]"
    return repr(value)[:MAX_QUOTED_INPUT]


def _inner(value: Any) -> str:
    """A value inside a list or a dict as `_start` quotes it, a text in quotes."""
    return repr(value[:MAX_QUOTED_INPUT]) if isinstance(value, str) else _start(value)


def _joined(parts: Iterable[str]) -> str:
    """The parts with commas between them, as far as MAX_QUOTED_INPUT characters."""
    text = ""
    for part in parts:
        text += (", " if text else "") + part
        if len(text) > MAX_QUOTED_INPUT:
            break
    return text


async def request_validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's own 422, bounded: a body which is not UTF-8 is no 500, at most MAX_LISTED_PROBLEMS
    problems are listed, then one counting the rest, each quoting at most the start of its input."""
    assert isinstance(exc, RequestValidationError)
    found = exc.errors()
    errors = []
    for error in found[:MAX_LISTED_PROBLEMS]:
        shown = {key: _printable(item) for key, item in error.items() if key != "input"}
        if "input" in error:
            shown["input"] = _bounded_input(error["input"])
        errors.append(shown)
    if len(found) > MAX_LISTED_PROBLEMS:
        more = len(found) - MAX_LISTED_PROBLEMS
        errors.append({"type": "too_many_problems", "loc": ["body"], "msg": f"and {more} more problems"})
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
