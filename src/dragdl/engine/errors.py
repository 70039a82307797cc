"""One base for the engine's errors: a stable code, a message for people, and where it happened.

Each boundary maps `EngineError` once: validation and the compiler into `GraphError`s (HTTP 422, the
canvas), the trainer into an `ErrorEvent` and a failed task, the CLI into a printed line and exit 1.
"""

from __future__ import annotations

from typing import Any


class EngineError(Exception):
    """A problem the user can act on, tied to a node (and a field of it) when there is one."""

    def __init__(
        self,
        code: str,
        message: str,
        node_id: str | None = None,
        field: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.node_id = node_id
        self.field = field
        self.details = details or {}
