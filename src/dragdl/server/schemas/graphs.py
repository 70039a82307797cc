"""Saved graphs, their versions, templates and generated code."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.graph.errors import GraphError
from dragdl.server.errors import RequestProblems

GRAPH_DESCRIPTION = "The graph JSON (see GET /api/schema/graph); saved even when deeper validation fails."


class GraphCreate(BaseModel):
    name: str | None = Field(
        default=None, min_length=1, max_length=200, description="Defaults to the graph's own name."
    )
    graph: dict[str, Any] = Field(description=GRAPH_DESCRIPTION)


class GraphUpdate(BaseModel):
    """A rename, a save (a new version), or both."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    graph: dict[str, Any] | None = Field(default=None, description=GRAPH_DESCRIPTION)


class GraphPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    current_version: int
    created_at: datetime
    updated_at: datetime


class GraphDetail(GraphPublic):
    graph: dict[str, Any] = Field(description="The data of the current version.")


class GraphsPublic(BaseModel):
    data: list[GraphPublic]
    count: int = Field(description="All graphs of the user, not only this page.")


class GraphVersionPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    version: int
    created_at: datetime


class GraphVersionDetail(GraphVersionPublic):
    graph: dict[str, Any]


class GraphCode(BaseModel):
    filename: str = Field(description="A suggested file name, e.g. sketcher_cnn.py.")
    code: str = Field(description="A standalone PyTorch training script.")


class TemplatePublic(BaseModel):
    id: str = Field(description="The template's name, e.g. sketcher_cnn.")
    name: str
    description: str
    graph: dict[str, Any]


class TemplateClone(BaseModel):
    name: str | None = Field(default=None, min_length=1, max_length=200)


class GraphProblems(BaseModel):
    """The `detail` of a 422 about a graph: every problem found, each tied to its node and field."""

    message: str
    errors: list[GraphError]


class GraphRejection(BaseModel):
    """The body of a 422 about a graph."""

    detail: GraphProblems


GRAPH_REJECTED: dict[int | str, dict[str, Any]] = {
    422: {
        "model": GraphRejection | RequestProblems,
        "description": "The graph is malformed, refused or does not validate (`detail.errors` lists every "
        "problem), or the request itself does not match the operation.",
    }
}
"""The declaration of the answer `GraphRejected` gets, for every route that stores or runs a graph."""
