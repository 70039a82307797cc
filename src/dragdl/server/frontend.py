"""The web UI built from frontend/ (`npm run build` writes it to server/static/), served by the app.

A middleware, not a route: the API's routes stay exactly what they are (a route added later is
never shadowed). A GET that no route answers gets the static file it names, or index.html, so the
browser's own pages (/editor, /tasks/42, ...) survive a reload; /api paths keep their JSON 404.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.responses import FileResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).with_name("static")
_API_PREFIXES = ("/api/", "/docs", "/redoc", "/openapi.json")


class FrontendMiddleware:
    def __init__(self, app: ASGIApp, directory: Path) -> None:
        self.app = app
        self.directory = directory.resolve()
        self.index = self.directory / "index.html"

    def _file(self, url_path: str) -> Path | None:
        candidate = (self.directory / url_path.lstrip("/")).resolve()
        if candidate.is_relative_to(self.directory) and candidate.is_file():
            return candidate
        return None

    async def _serve(self, path: Path, scope: Scope, receive: Receive, send: Send) -> None:
        # Asset names carry a content hash; the page that names them must always be fetched anew.
        immutable = path.parent.name == "assets"
        headers = {"Cache-Control": "public, max-age=31536000, immutable" if immutable else "no-cache"}
        await FileResponse(path, headers=headers)(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or path == "/api"
            or path.startswith(_API_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        if path == "/":
            await self._serve(self.index, scope, receive, send)
            return
        found = self._file(path)
        if found is not None:
            await self._serve(found, scope, receive, send)
            return

        not_found = False

        async def send_unless_404(message: Message) -> None:
            nonlocal not_found
            if message["type"] == "http.response.start" and message["status"] == 404:
                not_found = True
            if not not_found:
                await send(message)

        await self.app(scope, receive, send_unless_404)
        if not_found:
            await self._serve(self.index, scope, receive, send)


def serve_frontend(app: FastAPI, directory: Path = STATIC_DIR) -> bool:
    """Serve the built UI when there is one; False (nothing changes) when there is no build."""
    if not (directory / "index.html").is_file():
        return False
    app.add_middleware(FrontendMiddleware, directory=directory)
    return True
