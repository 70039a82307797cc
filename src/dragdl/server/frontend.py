"""The web UI built from frontend/ (`npm run build` writes it to server/static/), served by the app,
and the security headers of every answer.

A middleware, not a route: the API's routes stay exactly what they are (a route added later is
never shadowed). A GET that no route answers gets the static file it names, or index.html, so the
browser's own pages (/editor, /tasks/42, ...) survive a reload; /api paths keep their JSON 404.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.responses import FileResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).with_name("static")
_API_PREFIXES = ("/api/", "/docs", "/redoc", "/openapi.json")
_DOCS_PREFIXES = ("/docs", "/redoc")
_FILE_SUFFIXES = (".js", ".mjs", ".css", ".map", ".wasm", ".png", ".svg", ".ico", ".json", ".woff", ".woff2")
"""A path ending so names a file of the build: when there is none it is a 404, never the page (a tab
left open across an upgrade asking for an old script would get HTML as JavaScript)."""

APP_CSP = "; ".join(
    (
        "default-src 'self'",
        # ONNX Runtime Web compiles its WebAssembly (same origin, one thread, no worker).
        "script-src 'self' 'wasm-unsafe-eval'",
        # React, @xyflow/react and ECharts set inline styles.
        "style-src 'self' 'unsafe-inline'",
        # Previews of chosen images and downloads are blob: URLs; a few icons are data: URLs.
        "img-src 'self' data: blob:",
        "connect-src 'self' blob:",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
"""The web UI's Content-Security-Policy: nothing from other origins, never inside another site's frame."""

DOCS_CSP = "; ".join(
    (
        "default-src 'self'",
        # FastAPI's /docs and /redoc pages load Swagger UI and ReDoc from this CDN and start them inline.
        "script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net",
        "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com",
        "font-src 'self' https://fonts.gstatic.com",
        "img-src 'self' data: https://fastapi.tiangolo.com https://cdn.redoc.ly",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
}


class SecurityHeadersMiddleware:
    """Adds the CSP and the other security headers to every HTTP answer (pages, assets, JSON)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        docs = str(scope.get("path", "")).startswith(_DOCS_PREFIXES)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                headers.setdefault("Content-Security-Policy", DOCS_CSP if docs else APP_CSP)
            await send(message)

        await self.app(scope, receive, send_with_headers)


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
        if not path.is_file():  # the build is being replaced (npm run build empties the folder first)
            answer = PlainTextResponse("the web UI is being rebuilt; reload in a moment", 503)
            answer.headers["Retry-After"] = "2"
            await answer(scope, receive, send)
            return
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
        if path.startswith("/assets/") or path.lower().endswith(_FILE_SUFFIXES):
            await PlainTextResponse("not found", 404)(scope, receive, send)
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


def add_security_headers(app: FastAPI) -> None:
    """Call last, so that the headers reach the answers of every other middleware too."""
    app.add_middleware(SecurityHeadersMiddleware)


def serve_frontend(app: FastAPI, directory: Path = STATIC_DIR) -> bool:
    """Serve the built UI when there is one; False (nothing changes) when there is no build."""
    if not (directory / "index.html").is_file():
        return False
    app.add_middleware(FrontendMiddleware, directory=directory)
    return True
