"""Driving the app at the ASGI level, where a test can see how much of a request body was read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient


@dataclass
class StreamedRequest:
    """A request whose body is handed over in chunks; `read` counts the bytes the app asked for."""

    method: str
    path: str
    headers: dict[str, str]
    chunks: list[bytes]
    read: int = 0
    status: int | None = None
    answer: bytes = b""
    _sent: list[dict[str, Any]] = field(default_factory=list)

    async def receive(self) -> dict[str, Any]:
        if not self.chunks:
            return {"type": "http.disconnect"}
        chunk = self.chunks.pop(0)
        self.read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks)}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.answer += message.get("body", b"")


def stream(client: TestClient, app: FastAPI, request: StreamedRequest) -> StreamedRequest:
    """Send `request` to `app` on the event loop of `client` (entered, so the lifespan has run)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": "http",
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (k.lower().encode(), v.encode()) for k, v in {"host": "testserver", **request.headers}.items()
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }
    client.portal.call(app, scope, request.receive, request.send)  # type: ignore[union-attr]
    return request
