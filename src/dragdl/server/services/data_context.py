"""What a user's graph may read on this server: the caller's uploaded datasets, and no server paths.

Validation, task submission and dataset previews build their `DataContext` here, and refuse graphs
that fail `check_graph_policy`, so a user can neither read another user's files nor probe the
server's file system (a dataset node that reads a path answers with its class names and counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.engine.graph.errors import GraphError
from dragdl.engine.graph.spec import Graph
from dragdl.server.db.models import Dataset, User
from dragdl.server.settings import Settings

if TYPE_CHECKING:  # the engine's data module imports torch: only at call time
    from dragdl.engine.data.base import DataContext

PATH_FIELDS: dict[str, tuple[str, ...]] = {
    "dataset.folder": ("path",),
    "dataset.csv": ("path", "image_root"),
    "dataset.bitmaps": ("path",),
}
"""Node types that read a server path, and the fields that hold it."""
OPTIONAL_PATH_FIELDS: dict[str, tuple[str, ...]] = {"dataset.torchvision": ("root",)}
"""Node types that read a server path only when the field is set."""


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

    Non-administrators may not point dataset nodes at server paths: they upload their data instead.
    A raw graph that does not parse yields no errors here (validation reports the schema errors).
    """
    if user.is_admin:
        return []
    if not isinstance(graph, Graph):
        parsed = _parse(graph)
        if parsed is None:
            return []
        graph = parsed
    errors: list[GraphError] = []
    for node in graph.nodes:
        fields = PATH_FIELDS.get(node.type, ())
        forbidden = [name for name in fields if name == "path" or node.params.get(name)]
        forbidden += [name for name in OPTIONAL_PATH_FIELDS.get(node.type, ()) if node.params.get(name)]
        for name in forbidden:
            errors.append(
                GraphError(
                    code="dataset_path_forbidden",
                    message=(
                        f"{node.label or node.id} ({node.type}) reads the server path in '{name}'; only "
                        "administrators may read server paths: upload the data as a dataset and use that"
                    ),
                    node_id=node.id,
                    field=name,
                    details={"type": node.type},
                )
            )
    return errors


def _parse(raw: dict[str, Any]) -> Graph | None:
    from pydantic import ValidationError

    try:
        return Graph.model_validate(raw)
    except ValidationError:
        return None
