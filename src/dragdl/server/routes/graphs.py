"""Saved graphs (owner-scoped, versioned), templates, validation and generated code."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Path, Query, Request, status
from fastapi.responses import JSONResponse

from dragdl.db.models import Graph as GraphRow
from dragdl.db.models import GraphVersion, User
from dragdl.engine.payloads import ValidationResult
from dragdl.server.deps import CurrentUser, SessionDep, SettingsDep
from dragdl.server.errors import error_responses
from dragdl.server.schemas.graphs import (
    GRAPH_REJECTED,
    GraphCode,
    GraphCreate,
    GraphDetail,
    GraphProblems,
    GraphPublic,
    GraphsPublic,
    GraphUpdate,
    GraphVersionDetail,
    GraphVersionPublic,
    TemplateClone,
    TemplatePublic,
)
from dragdl.server.services import graphs as service
from dragdl.server.services.graphs import GraphRejected

router = APIRouter(prefix="/api/graphs", tags=["graphs"])

GraphId = Annotated[str, Path(max_length=64)]
VersionNumber = Annotated[int, Path(ge=1, le=2**31 - 1)]
_NOT_FOUND = error_responses(404)


async def graph_rejected(request: Request, exc: Exception) -> JSONResponse:
    """The 422 of every route that stores or runs a graph (declared as `GRAPH_REJECTED`): the app
    answers a `GraphRejected` from any service with the graph's problems."""
    assert isinstance(exc, GraphRejected)
    detail = GraphProblems(message=exc.message, errors=exc.errors).model_dump(mode="json")
    return JSONResponse(status_code=status.HTTP_422_UNPROCESSABLE_CONTENT, content={"detail": detail})


def _owned(db: SessionDep, user: User, graph_id: str) -> GraphRow:
    row = service.get_graph(db, user, graph_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no graph {graph_id!r}")
    return row


def _detail(db: SessionDep, row: GraphRow, version: GraphVersion | None = None) -> GraphDetail:
    """The graph as of `version` (default: its current one): the version a save made is the one it
    answers with, even when another save of the same graph committed right after it."""
    shown = version or service.current_version(db, row)
    public = GraphPublic.model_validate(row).model_copy(update={"current_version": shown.version})
    return GraphDetail(**public.model_dump(), graph=shown.data)


@router.post("/validate", operation_id="validateGraph", responses=error_responses(400))
def validate(
    user: CurrentUser, db: SessionDep, settings: SettingsDep, graph: Annotated[dict[str, Any], Body()]
) -> ValidationResult:
    """Validate a graph: every error with its node and field, and every node's inferred output shape.

    Validation problems are the answer, not a failed request, so this returns 200 with `ok: false`.
    The caller's uploaded datasets are available; server paths are refused for non-administrators.
    """
    return service.validate(db, settings, user, graph)


@router.post("/code", operation_id="generateCode", responses={**error_responses(400, 501), **GRAPH_REJECTED})
def code_of(
    user: CurrentUser, db: SessionDep, settings: SettingsDep, graph: Annotated[dict[str, Any], Body()]
) -> GraphCode:
    """The posted graph as a standalone PyTorch training script, saving nothing: the editor's
    "View code" shows the graph it has open, which need not be a saved version."""
    name = graph.get("name")
    return _code(db, settings, user, graph, name if isinstance(name, str) else "graph")


@router.get("/templates", operation_id="listTemplates")
def list_templates(user: CurrentUser) -> list[TemplatePublic]:
    """The example graphs shipped with DragDL, to start from."""
    return [
        TemplatePublic(id=t.id, name=t.name, description=t.description, graph=t.graph)
        for t in service.templates()
    ]


@router.post(
    "/templates/{template_id}/clone",
    operation_id="cloneTemplate",
    status_code=status.HTTP_201_CREATED,
    responses={**error_responses(400, 404), **GRAPH_REJECTED},
)
def clone_template(
    template_id: Annotated[str, Path(max_length=100)],
    user: CurrentUser,
    db: SessionDep,
    body: Annotated[TemplateClone | None, Body()] = None,
) -> GraphDetail:
    """A new graph of the user's own, copied from a template."""
    template = service.get_template(template_id)
    if template is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no template {template_id!r}")
    row = service.create_graph(db, user, template.graph, body.name if body else None)
    return _detail(db, row)


@router.get("", operation_id="listGraphs")
def list_graphs(
    user: CurrentUser,
    db: SessionDep,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> GraphsPublic:
    """The caller's graphs, most recently saved first."""
    rows, count = service.list_graphs(db, user, offset, limit)
    return GraphsPublic(data=[GraphPublic.model_validate(row) for row in rows], count=count)


@router.post(
    "",
    operation_id="createGraph",
    status_code=status.HTTP_201_CREATED,
    responses={**error_responses(400), **GRAPH_REJECTED},
)
def create_graph(body: GraphCreate, user: CurrentUser, db: SessionDep) -> GraphDetail:
    """Save a new graph (version 1). It must match the graph schema; it need not validate yet."""
    row = service.create_graph(db, user, body.graph, body.name)
    return _detail(db, row)


@router.get("/{graph_id}", operation_id="getGraph", responses=_NOT_FOUND)
def get_graph(graph_id: GraphId, user: CurrentUser, db: SessionDep) -> GraphDetail:
    return _detail(db, _owned(db, user, graph_id))


@router.patch(
    "/{graph_id}",
    operation_id="updateGraph",
    responses={**error_responses(400, 404, 409), **GRAPH_REJECTED},
)
def update_graph(graph_id: GraphId, body: GraphUpdate, user: CurrentUser, db: SessionDep) -> GraphDetail:
    """Rename and/or save; every save of `graph` is a new version. A rename onto the name of another
    of the caller's graphs is a 409 naming that graph, and saves nothing."""
    row = _owned(db, user, graph_id)
    try:
        saved = service.update_graph(db, row, body.graph, body.name)
    except service.GraphNameTaken as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return _detail(db, row, saved)


@router.delete(
    "/{graph_id}", operation_id="deleteGraph", status_code=status.HTTP_204_NO_CONTENT, responses=_NOT_FOUND
)
def delete_graph(graph_id: GraphId, user: CurrentUser, db: SessionDep) -> None:
    """Delete the graph and its versions (tasks keep their own snapshot)."""
    service.delete_graph(db, _owned(db, user, graph_id))


@router.get("/{graph_id}/versions", operation_id="listGraphVersions", responses=_NOT_FOUND)
def list_versions(graph_id: GraphId, user: CurrentUser, db: SessionDep) -> list[GraphVersionPublic]:
    """Every saved version, newest first."""
    row = _owned(db, user, graph_id)
    return [GraphVersionPublic.model_validate(v) for v in service.list_versions(db, row)]


@router.get("/{graph_id}/versions/{version}", operation_id="getGraphVersion", responses=_NOT_FOUND)
def get_version(
    graph_id: GraphId, version: VersionNumber, user: CurrentUser, db: SessionDep
) -> GraphVersionDetail:
    found = service.get_version(db, _owned(db, user, graph_id), version)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"graph {graph_id!r} has no version {version}")
    return GraphVersionDetail(version=found.version, created_at=found.created_at, graph=found.data)


@router.post(
    "/{graph_id}/versions/{version}/restore", operation_id="restoreGraphVersion", responses=_NOT_FOUND
)
def restore_version(
    graph_id: GraphId, version: VersionNumber, user: CurrentUser, db: SessionDep
) -> GraphDetail:
    """Save the old version's data as a new version."""
    row = _owned(db, user, graph_id)
    old = service.get_version(db, row, version)
    if old is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"graph {graph_id!r} has no version {version}")
    return _detail(db, row, service.restore_version(db, row, old))


@router.get(
    "/{graph_id}/code", operation_id="getGraphCode", responses={**error_responses(404, 501), **GRAPH_REJECTED}
)
def get_code(
    graph_id: GraphId,
    user: CurrentUser,
    db: SessionDep,
    settings: SettingsDep,
    version: Annotated[int | None, Query(ge=1, le=2**31 - 1, description="Default: the current one.")] = None,
) -> GraphCode:
    """The graph as a standalone PyTorch training script."""
    row = _owned(db, user, graph_id)
    found = service.get_version(db, row, version or row.current_version)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"graph {graph_id!r} has no version {version}")
    return _code(db, settings, user, found.data, row.name)


def _code(db: SessionDep, settings: SettingsDep, user: User, data: dict[str, Any], name: str) -> GraphCode:
    try:
        filename, code = service.generate_code(db, settings, user, data, name)
    except service.CodegenUnavailable as exc:
        raise HTTPException(
            status.HTTP_501_NOT_IMPLEMENTED, f"code generation is not available: {exc}"
        ) from None
    return GraphCode(filename=filename, code=code)
