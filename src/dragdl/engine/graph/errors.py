"""One error shape for every validation stage (ARCHITECTURE.md section 3)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from dragdl.engine.errors import EngineError


class GraphError(BaseModel):
    """A problem in a graph, tied to the node and field it concerns when there is one.

    `code` is machine-readable and stable (the canvas and tests key on it); `message` is for people.
    A warning is a graph that trains but probably not as meant (a classifier on a measurement):
    shown beside the errors, it never makes the graph invalid.
    """

    code: str
    message: str
    node_id: str | None = None
    field: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    severity: Literal["error", "warning"] = "error"

    @property
    def blocking(self) -> bool:
        return self.severity == "error"

    def describe(self) -> str:
        where = []
        if self.node_id:
            where.append(f"node {self.node_id}")
        if self.field:
            where.append(f"field {self.field}")
        prefix = f"[{', '.join(where)}] " if where else ""
        warning = "warning: " if not self.blocking else ""
        return f"{prefix}{warning}{self.message} ({self.code})"


def blocking(errors: list[GraphError]) -> list[GraphError]:
    """The errors among `errors`, without the warnings."""
    return [error for error in errors if error.blocking]


class GraphInvalid(Exception):
    """Raised by the compiler when asked to compile a graph that does not validate (its warnings,
    if any are given, are left out: they never stop a graph)."""

    def __init__(self, errors: list[GraphError]) -> None:
        self.errors = blocking(errors)
        super().__init__("; ".join(e.describe() for e in errors))


class NodeError(EngineError):
    """Raised inside a node's code to report a problem with one of its params.

    Validation and the compiler turn it into a `GraphError` carrying the node id.
    """

    def __init__(self, code: str, message: str, field: str | None = None, **details: Any) -> None:
        super().__init__(code, message, field=field, details=details)

    def to_graph_error(
        self, node_id: str | None, severity: Literal["error", "warning"] = "error"
    ) -> GraphError:
        return GraphError(
            code=self.code,
            message=self.message,
            node_id=node_id,
            field=self.field,
            details=self.details,
            severity=severity,
        )
