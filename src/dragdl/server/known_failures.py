"""Answers for failures whose cause is known, instead of a 500 and a traceback in the log.

- the database is down, or locked past its busy timeout: 503 with `Retry-After` (it passes; the
  scheduler and the workers wait for it the same way);
- the data disk is full (ENOSPC or EDQUOT anywhere in the error's chain, or PyTorch's writer that
  says so without an errno): 507 Insufficient Storage;
- a text holds a NUL character, which PostgreSQL cannot store (SQLite can): 400 saying so, the
  transaction rolled back, on every route that writes a name or a text.

Each is logged as one warning line. Anything else goes on to Starlette's 500 as before. The
middleware is the innermost one, so the security headers and the body limits wrap its answers too.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dragdl.runner.failures import is_disk_full, is_transient_db_error

log = logging.getLogger(__name__)

RETRY_AFTER_S = 5
"""What a client is told to wait while the database is unavailable."""


def database_unavailable() -> JSONResponse:
    return JSONResponse(
        {"detail": "the database is unavailable for a moment (down or locked); try again shortly"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


def known_answer(exc: BaseException) -> Response | None:
    """The answer for a failure with a known cause; None for any other."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 16:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if any(is_transient_db_error(error) for error in chain):
        return database_unavailable()
    if any(_nul_in_text(error) for error in chain):
        return JSONResponse(
            {"detail": "a text you sent holds a NUL character (\\x00), which cannot be stored: remove it"},
            status_code=400,
        )
    if is_disk_full(exc):
        return JSONResponse(
            {"detail": "the server's data disk is full: nothing was saved; try again once space is freed"},
            status_code=507,
        )
    return None


def _nul_in_text(error: BaseException) -> bool:
    # psycopg's DataError: "PostgreSQL text fields cannot contain NUL (0x00) bytes".
    return type(error).__name__ == "DataError" and "NUL (0x00)" in str(error)


class KnownFailuresMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            answer = known_answer(exc)
            if answer is None or started:  # a half-sent answer cannot be replaced
                raise
            log.warning(
                "%s %s: %s (%s: %s)",
                scope.get("method"),
                scope.get("path"),
                answer.status_code,
                type(exc).__name__,
                str(exc).splitlines()[0][:300] if str(exc) else "",
            )
            await answer(scope, receive, send)
