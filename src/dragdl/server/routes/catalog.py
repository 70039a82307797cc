from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter

from dragdl.engine.payloads import CatalogEntry

router = APIRouter(prefix="/api", tags=["catalog"])


@router.get("/catalog", operation_id="getCatalog")
def get_catalog(lang: Literal["en", "zh"] = "en") -> list[CatalogEntry]:
    """Every node type with its ports and the JSON Schema of its params (drives palette and forms).

    `lang` picks the language of titles, descriptions, port and choice labels (`x-enum-labels`).
    Download switches come locked off: the server validates and trains with downloads disallowed
    (services/data_context.py), so a switch left on would promise what it does not do.
    """
    from dragdl.engine.nodes.i18n import localized_catalog

    return [CatalogEntry.model_validate(entry) for entry in localized_catalog(lang, downloads=False)]


@router.get("/schema/graph", operation_id="getGraphSchema")
def get_graph_schema() -> dict[str, Any]:
    """The JSON Schema of the graph format."""
    from dragdl.engine.graph.spec import graph_json_schema

    return graph_json_schema()
