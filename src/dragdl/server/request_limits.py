"""How large a request body may be: a small cap for every route, larger ones only for the uploads.

A pure ASGI middleware, so that it sees the body before any route or form parser does: a declared
Content-Length above the route's cap is answered 413 without reading a byte, and every byte that
arrives is counted (chunked bodies have no length to check), so a body that crosses the cap is
refused as it streams. The refusal is an `HTTPException`, so the route's own clean-up runs (the
dataset upload removes its partial files) and the answer is the usual JSON `detail`, naming the cap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from fastapi import status
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dragdl.server.settings import Settings

MAX_PREDICT_BODY_BYTES = 64 * 1024**2
"""All images of one prediction request together (they are held in memory while predicted)."""
MAX_ROWS_BODY_BYTES = 33 * 1024**2
"""Rows to predict as a CSV upload of up to 32 MiB (services.table_rows) and its envelope. Rows sent
as JSON (at most 1000 of them) get the cap of every other JSON body (`Settings.max_body_bytes`): a
34 MB JSON body of 1.9 million rows held the event loop for a minute before the row count refused it
(issue 23 review)."""
MULTIPART_ENVELOPE_BYTES = 1024**2
"""Room for multipart headers, boundaries and the text fields on top of an upload's file bytes."""


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int, method: str, path: str) -> None:
        super().__init__(
            status.HTTP_413_CONTENT_TOO_LARGE,
            f"the request body is larger than the limit of {limit} bytes for {method} {path}",
        )


@dataclass(frozen=True)
class RouteLimit:
    method: str
    path: re.Pattern[str]
    max_bytes: int
    content_types: frozenset[str] | None = None
    """The media types it is for (None: any); other bodies to the route get the default cap."""

    def matches(self, method: str, path: str, content_type: str | None) -> bool:
        """Whether it caps this request; a `content_type` of None matches any of its types."""
        return (
            self.method == method
            and self.path.fullmatch(path) is not None
            and (self.content_types is None or content_type is None or content_type in self.content_types)
        )


def upload_limits(settings: Settings) -> tuple[RouteLimit, ...]:
    """The routes allowed more than `settings.max_body_bytes`: the dataset upload and predictions."""
    return (
        RouteLimit(
            "POST", re.compile(r"/api/datasets/?"), settings.max_upload_bytes + MULTIPART_ENVELOPE_BYTES
        ),
        RouteLimit("POST", re.compile(r"/api/models/[^/]+/predict/?"), MAX_PREDICT_BODY_BYTES),
        RouteLimit(
            "POST",
            re.compile(r"/api/models/[^/]+/predict/rows/?"),
            MAX_ROWS_BODY_BYTES,
            frozenset({"multipart/form-data"}),
        ),
    )


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, default_bytes: int, routes: Sequence[RouteLimit]) -> None:
        self.app = app
        self.default_bytes = default_bytes
        self.routes = tuple(routes)

    def limit_for(self, method: str, path: str, content_type: str | None = None) -> int:
        """The cap of a request's body (of its upload type's when `content_type` is None)."""
        for route in self.routes:
            if route.matches(method, path, content_type):
                return route.max_bytes
        return self.default_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        path: str = scope["path"]
        headers = Headers(scope=scope)
        content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        limit = self.limit_for(method, path, content_type)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _answer(BodyTooLarge(limit, method, path), scope, receive, send)
            return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit, method, path)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLarge as exc:  # a route that let it through (the framework's handlers answer it first)
            if started:
                raise
            await _answer(exc, scope, receive, send)


async def _answer(exc: BodyTooLarge, scope: Scope, receive: Receive, send: Send) -> None:
    # Connection: close, since the rest of the body is never read.
    response = JSONResponse({"detail": exc.detail}, exc.status_code, headers={"Connection": "close"})
    await response(scope, receive, send)
