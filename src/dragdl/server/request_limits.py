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
"""Rows to predict: a JSON body, or a CSV upload of up to 32 MiB (services.table_rows) and its envelope."""
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


def upload_limits(settings: Settings) -> tuple[RouteLimit, ...]:
    """The routes allowed more than `settings.max_body_bytes`: the dataset upload and predictions."""
    return (
        RouteLimit(
            "POST", re.compile(r"/api/datasets/?"), settings.max_upload_bytes + MULTIPART_ENVELOPE_BYTES
        ),
        RouteLimit("POST", re.compile(r"/api/models/[^/]+/predict/?"), MAX_PREDICT_BODY_BYTES),
        RouteLimit("POST", re.compile(r"/api/models/[^/]+/predict/rows/?"), MAX_ROWS_BODY_BYTES),
    )


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, default_bytes: int, routes: Sequence[RouteLimit]) -> None:
        self.app = app
        self.default_bytes = default_bytes
        self.routes = tuple(routes)

    def limit_for(self, method: str, path: str) -> int:
        for route in self.routes:
            if route.method == method and route.path.fullmatch(path):
                return route.max_bytes
        return self.default_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method: str = scope["method"]
        path: str = scope["path"]
        limit = self.limit_for(method, path)
        declared = Headers(scope=scope).get("content-length", "")
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
