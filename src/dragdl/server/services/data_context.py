"""What a user's graph may read on this server: the caller's uploaded datasets, and no server paths.

Validation, task submission and dataset previews build their `DataContext` here, and refuse graphs
that fail `check_graph_policy`, so a user can neither read another user's files nor probe the
server's file system (a dataset node that reads a path answers with its class names and counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.db.models import Dataset, User
from dragdl.engine.graph.errors import GraphError
from dragdl.engine.graph.spec import Graph
from dragdl.server.settings import Settings

if TYPE_CHECKING:  # the engine's data module imports torch: only at call time
    from dragdl.engine.data.base import DataContext


def data_context_for(
    db: Session, settings: Settings, user: User, *, allow_download: bool = False
) -> DataContext:
    """The data directory plus the datasets `user` uploaded, by id (administrators: their own too)."""
    from dragdl.engine.data.base import DataContext, UploadedDataset

    rows = db.scalars(select(Dataset).where(Dataset.owner_id == user.id))
    uploaded = {row.id: UploadedDataset(kind=row.kind, path=settings.data_dir / row.path) for row in rows}
    return DataContext(data_dir=settings.data_dir, allow_download=allow_download, uploaded=uploaded)


def check_graph_policy(graph: Graph | dict[str, Any], user: User) -> list[GraphError]:
    """Errors for what this user may not do on the server; empty for administrators.

    Non-administrators may not set parameters that name server files or folders (those the node
    catalog marks `ServerPath`): they upload their data instead. The refusal depends only on the
    node and the field, never on the value, and nothing is read before it, so it tells nothing about
    the server's files. A raw graph that does not parse yields no errors here (validation reports the
    schema errors), and neither does a node type the catalog does not know.
    """
    if user.is_admin:
        return []
    if not isinstance(graph, Graph):
        parsed = _parse(graph)
        if parsed is None:
            return []
        graph = parsed
    from dragdl.engine.nodes.registry import get_node_type

    errors: list[GraphError] = []
    for node in graph.nodes:
        kind = get_node_type(node.type)
        if kind is None:
            continue
        for name in kind.path_fields:
            if kind.params_model.model_fields[name].is_required() or _set(node.params.get(name)):
                errors.append(_path_refused(node.label or node.id, node.id, node.type, kind.category, name))
    return errors


def _set(value: Any) -> bool:
    """Whether an optional path field names something (property forms send "" for an emptied box)."""
    return value is not None and not (isinstance(value, str) and not value.strip())


def _path_refused(who: str, node_id: str, node_type: str, category: str, name: str) -> GraphError:
    instead = "upload the data as a dataset and use that" if category == "dataset" else f"clear '{name}'"
    return GraphError(
        code="dataset_path_forbidden",
        message=(
            f"{who} ({node_type}) names a file or folder on the server in '{name}'; only "
            f"administrators may use server paths: {instead}"
        ),
        node_id=node_id,
        field=name,
        details={"type": node_type},
    )


def _parse(raw: dict[str, Any]) -> Graph | None:
    from pydantic import ValidationError

    try:
        return Graph.model_validate(raw)
    except ValidationError:
        return None
