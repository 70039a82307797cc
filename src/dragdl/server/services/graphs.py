"""Saved graphs: every save is a new immutable version; templates; validation and generated code.

Saving only requires the graph to match the graph schema: users save work in progress, and the
deeper validation stages run on `validate`, on code generation and on task submission.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from pydantic import ValidationError
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from dragdl.db.models import Graph as GraphRow
from dragdl.db.models import GraphVersion, User, utcnow
from dragdl.engine.graph.errors import GraphError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.payloads import ValidationResult
from dragdl.server.errors import public_graph_errors
from dragdl.server.services.access import reachable_by
from dragdl.server.services.data_context import check_graph_policy, data_context_for
from dragdl.server.settings import Settings


class GraphRejected(Exception):
    """The graph cannot be used for this request; `errors` say where and why (answered as 422)."""

    def __init__(self, message: str, errors: list[GraphError]) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors


class GraphNameTaken(Exception):
    """A rename onto the name of another of the owner's graphs (answered as 409): two graphs of one
    name look like one in Open, and a save that renamed the open graph seemed to replace the other."""

    def __init__(self, name: str, other: GraphRow) -> None:
        super().__init__(
            f"a graph named {name!r} already exists (graph {other.id}); choose another name, "
            "or open that graph to change it"
        )
        self.name = name
        self.other_id = other.id


class CodegenUnavailable(Exception):
    """This installation has no code generator, or it cannot write this graph yet."""


@dataclass(frozen=True)
class Template:
    id: str
    name: str
    description: str
    graph: dict[str, Any]


# --- parsing ------------------------------------------------------------------------------------


def parse(raw: dict[str, Any]) -> tuple[Graph, dict[str, Any]]:
    """The graph and the JSON to store (what the user sent, checked); GraphRejected if malformed.

    Same `schema_invalid` errors as validation's first stage, without importing the engine's catalog
    (and torch) into a plain save.
    """
    try:
        graph = Graph.model_validate(raw)
    except ValidationError as exc:
        errors = []
        for item in exc.errors():
            loc = [str(part) for part in item["loc"]]
            errors.append(
                GraphError(
                    code="schema_invalid",
                    message=f"{'.'.join(loc) or 'graph'}: {item['msg']}",
                    node_id=_node_id_at(raw, item["loc"]),
                    field=".".join(loc) or None,
                    details={"type": item["type"]},
                )
            )
        raise GraphRejected("the graph does not match the graph schema", errors) from None
    data = graph.model_dump(mode="json", by_alias=True, exclude_unset=True)
    data.setdefault("version", graph.version)
    errors = _size_errors(graph, data)
    if errors:
        raise GraphRejected("the graph is too large", errors)
    return graph, data


MAX_GRAPH_BYTES = 1024**2
"""A stored graph's JSON; the largest templates are a few KB (the schema caps nodes and edges)."""
MAX_PARAM_TEXT = 10_000
"""Characters of any text in a node's params (a Lambda formula, a path, a model name)."""


def _size_errors(graph: Graph, data: dict[str, Any]) -> list[GraphError]:
    errors = [
        GraphError(
            code="value_too_long",
            message=f"{field}: {length} characters is above the limit of {MAX_PARAM_TEXT}",
            node_id=node.id,
            field=field,
            details={"limit": MAX_PARAM_TEXT, "length": length},
        )
        for node in graph.nodes
        for field, length in _long_texts(node.params, "params")
    ]
    size = len(json.dumps(data, separators=(",", ":")).encode())
    if size > MAX_GRAPH_BYTES:
        errors.append(
            GraphError(
                code="graph_too_large",
                message=f"the graph is {size} bytes of JSON, above the limit of {MAX_GRAPH_BYTES}",
                details={"limit": MAX_GRAPH_BYTES, "size": size},
            )
        )
    return errors


def _long_texts(value: Any, where: str) -> list[tuple[str, int]]:
    """(field path, length) of every text (keys included) longer than MAX_PARAM_TEXT within `value`."""
    if isinstance(value, str):
        return [(where, len(value))] if len(value) > MAX_PARAM_TEXT else []
    found: list[tuple[str, int]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _long_texts(key, where) + _long_texts(item, f"{where}.{key[:40]}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _long_texts(item, f"{where}.{index}")
    return found


def _node_id_at(raw: dict[str, Any], loc: tuple[int | str, ...]) -> str | None:
    if len(loc) >= 2 and loc[0] == "nodes" and isinstance(loc[1], int):
        nodes = raw.get("nodes")
        if isinstance(nodes, list) and loc[1] < len(nodes) and isinstance(nodes[loc[1]], dict):
            node_id = nodes[loc[1]].get("id")
            return node_id if isinstance(node_id, str) else None
    return None


# --- graphs and versions ------------------------------------------------------------------------


def list_graphs(db: Session, user: User, offset: int, limit: int) -> tuple[list[GraphRow], int]:
    """The user's own graphs, most recently saved first."""
    mine = GraphRow.owner_id == user.id
    count = db.scalar(select(func.count()).select_from(GraphRow).where(mine)) or 0
    query = (
        select(GraphRow)
        .where(mine)
        .order_by(GraphRow.updated_at.desc(), GraphRow.created_at.desc(), GraphRow.id)
        .offset(offset)
        .limit(limit)
    )
    return list(db.scalars(query)), count


def get_graph(db: Session, user: User, graph_id: str) -> GraphRow | None:
    """A graph of the user's own; administrators see every graph. Others' graphs do not exist (404)."""
    return db.scalar(select(GraphRow).where(GraphRow.id == graph_id, reachable_by(GraphRow.owner_id, user)))


def get_version(db: Session, graph: GraphRow, version: int) -> GraphVersion | None:
    query = select(GraphVersion).where(GraphVersion.graph_id == graph.id, GraphVersion.version == version)
    return db.scalar(query)


def current_version(db: Session, graph: GraphRow) -> GraphVersion:
    return _version(db, graph, graph.current_version)


def current_data(db: Session, graph: GraphRow) -> dict[str, Any]:
    """The graph JSON of the current version (what a task submitted by graph id trains)."""
    return current_version(db, graph).data


def _version(db: Session, graph: GraphRow, number: int) -> GraphVersion:
    version = get_version(db, graph, number)
    if version is None:  # every graph is created with its first version, in one transaction
        raise LookupError(f"graph {graph.id} has no version {number}")
    return version


def list_versions(db: Session, graph: GraphRow) -> list[GraphVersion]:
    query = (
        select(GraphVersion).where(GraphVersion.graph_id == graph.id).order_by(GraphVersion.version.desc())
    )
    return list(db.scalars(query))


def create_graph(db: Session, user: User, raw: dict[str, Any], name: str | None = None) -> GraphRow:
    graph, data = parse(raw)
    row = GraphRow(owner_id=user.id, name=name or graph.name, current_version=1)
    row.versions.append(GraphVersion(version=1, data=data))
    db.add(row)
    db.commit()
    return row


def update_graph(db: Session, row: GraphRow, raw: dict[str, Any] | None, name: str | None) -> GraphVersion:
    """Rename, save a new version, or both; returns the version the graph now shows to this caller.

    GraphNameTaken, and nothing saved, when the new name is another of the owner's graphs'. A new
    graph (`create_graph`, "Save as") may share a name: it replaces nothing.
    """
    data = parse(raw)[1] if raw is not None else None
    if name is not None and name.strip() != row.name.strip():
        other = db.scalar(
            select(GraphRow).where(
                GraphRow.owner_id == row.owner_id,
                GraphRow.id != row.id,
                func.trim(GraphRow.name) == name.strip(),
            )
        )
        if other is not None:
            raise GraphNameTaken(name.strip(), other)
    if name is not None:
        row.name = name
        row.updated_at = utcnow()
    saved = _add_version(db, row, data) if data is not None else None
    db.commit()
    db.refresh(row)
    return saved or _version(db, row, row.current_version)


def restore_version(db: Session, row: GraphRow, old: GraphVersion) -> GraphVersion:
    """A new version holding the old one's data; history is never rewritten."""
    saved = _add_version(db, row, old.data)
    db.commit()
    db.refresh(row)
    return saved


def _add_version(db: Session, row: GraphRow, data: dict[str, Any]) -> GraphVersion:
    # Incrementing in the database serialises concurrent saves of one graph (the row stays locked
    # until commit), so two saves can never both claim the same version number.
    bump = (
        update(GraphRow)
        .where(GraphRow.id == row.id)
        .values(current_version=GraphRow.current_version + 1, updated_at=utcnow())
        .returning(GraphRow.current_version)
    )
    number = db.execute(bump).scalar_one()
    version = GraphVersion(graph_id=row.id, version=number, data=data)
    db.add(version)
    return version


def delete_graph(db: Session, row: GraphRow) -> None:
    db.delete(row)
    db.commit()


# --- templates ----------------------------------------------------------------------------------


@cache
def templates() -> tuple[Template, ...]:
    """The example graphs shipped in `dragdl.examples`, by file name."""
    found = []
    for entry in sorted(resources.files("dragdl.examples").iterdir(), key=lambda item: item.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        graph = Graph.model_validate(data)
        found.append(Template(entry.name[: -len(".json")], graph.name, graph.description, data))
    return tuple(found)


def get_template(template_id: str) -> Template | None:
    return next((t for t in templates() if t.id == template_id), None)


# --- validation and code ------------------------------------------------------------------------


def validate(db: Session, settings: Settings, user: User, raw: dict[str, Any]) -> ValidationResult:
    """Validation with the user's uploaded datasets; a graph refused by policy is not read at all."""
    refused = check_graph_policy(raw, user)
    if refused:
        return ValidationResult(ok=False, errors=refused)
    from dragdl.engine.analysis.validate import validate_graph

    result = validate_graph(raw, data_context_for(db, settings, user))
    errors = public_graph_errors(result.errors, settings.data_dir, user.is_admin)
    return result.model_copy(update={"errors": errors})


def generate_code(
    db: Session, settings: Settings, user: User, data: dict[str, Any], name: str
) -> tuple[str, str]:
    """(file name, standalone training script); GraphRejected when the graph does not validate."""
    refused = check_graph_policy(data, user)
    if refused:
        raise GraphRejected("the graph reads server paths", refused)
    try:
        from dragdl.engine.compile.codegen import generate_script
    except ImportError as exc:
        raise CodegenUnavailable(str(exc)) from exc
    from dragdl.engine.graph.errors import GraphInvalid

    try:
        code = generate_script(data, data_context_for(db, settings, user))
    except GraphInvalid as exc:  # generate_script validates first and reports every error
        errors = public_graph_errors(exc.errors, settings.data_dir, user.is_admin)
        raise GraphRejected("the graph does not validate", errors) from None
    except NotImplementedError as exc:  # a valid graph the generator does not write yet (tables)
        raise CodegenUnavailable(str(exc)) from None
    return f"{_slug(name)}.py", code


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "graph"
