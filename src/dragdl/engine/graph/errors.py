"""One error shape for every validation stage (ARCHITECTURE.md section 3)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from dragdl.engine.errors import EngineError


class GraphError(BaseModel):
    """A problem in a graph, tied to the node and field it concerns when there is one.

    `code` is machine-readable and stable (the canvas and tests key on it); `message` is for people.
    """

    code: str
    message: str
    node_id: str | None = None
    field: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    def describe(self) -> str:
        where = []
        if self.node_id:
            where.append(f"node {self.node_id}")
        if self.field:
            where.append(f"field {self.field}")
        prefix = f"[{', '.join(where)}] " if where else ""
        return f"{prefix}{self.message} ({self.code})"


class GraphInvalid(Exception):
    """Raised by the compiler when asked to compile a graph that does not validate."""

    def __init__(self, errors: list[GraphError]) -> None:
        self.errors = errors
        super().__init__("; ".join(e.describe() for e in errors))


class NodeError(EngineError):
    """Raised inside a node's code to report a problem with one of its params.

    Validation and the compiler turn it into a `GraphError` carrying the node id.
    """

    def __init__(self, code: str, message: str, field: str | None = None, **details: Any) -> None:
        super().__init__(code, message, field=field, details=details)

    def to_graph_error(self, node_id: str | None) -> GraphError:
        return GraphError(
            code=self.code, message=self.message, node_id=node_id, field=self.field, details=self.details
        )
