"""The one exception of the SDK: what the server answered, or why it could not be reached."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A refused request (`status` is the HTTP status), or no usable answer (`status` None: the server
    could not be reached, the connection broke, or the answer was not DragDL's).

    `message` is the server's own message; `errors` holds the graph problems of a 422 (dicts with
    `code`, `message`, `node_id`, `field`, `details`, like the engine's `GraphError`), or FastAPI's
    request-validation problems in the same shape.
    """

    def __init__(
        self, status: int | None, message: str, errors: list[dict[str, Any]] | None = None, url: str = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors: list[dict[str, Any]] = errors or []
        self.url = url

    def __str__(self) -> str:
        return self.message if self.status is None else f"{self.message} (HTTP {self.status})"

    @classmethod
    def from_response(cls, status: int, body: Any, text: str, url: str) -> ApiError:
        """Read FastAPI's error shapes: `{"detail": str}`, `{"detail": {"message", "errors"}}`, and the
        request-validation list `{"detail": [{"loc", "msg", "type"}]}`."""
        detail = body.get("detail") if isinstance(body, dict) else None
        if isinstance(detail, str):
            return cls(status, detail, url=url)
        if isinstance(detail, dict):
            errors = [e for e in detail.get("errors") or [] if isinstance(e, dict)]
            return cls(status, str(detail.get("message") or f"HTTP {status}"), errors, url)
        if isinstance(detail, list):
            errors = [_request_problem(item) for item in detail if isinstance(item, dict)]
            summary = "; ".join(
                f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errors
            )
            return cls(status, f"the request was refused: {summary or 'invalid'}", errors, url)
        snippet = " ".join(text.split())[:200]
        return cls(status, f"HTTP {status} from {url}" + (f": {snippet}" if snippet else ""), url=url)


def _request_problem(item: dict[str, Any]) -> dict[str, Any]:
    location = [str(part) for part in item.get("loc") or [] if part != "body"]
    return {
        "code": str(item.get("type") or "invalid"),
        "message": str(item.get("msg") or "invalid value"),
        "node_id": None,
        "field": ".".join(location) or None,
        "details": {},
    }
