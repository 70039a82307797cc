from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter

from dragdl.engine.payloads import Catalog

router = APIRouter(prefix="/api", tags=["catalog"])


@router.get("/catalog", operation_id="getCatalog")
def get_catalog(lang: Literal["en", "zh"] = "en") -> Catalog:
    """Every node type with its ports and the JSON Schema of its params (drives palette and forms),
    and every task kind with its metrics, headline metric and answer schema (drives the monitor's
    charts and KPIs, the task list and the prediction views).

    `lang` picks the language of titles, descriptions, port, choice and metric labels.
    Download switches come locked off: the server validates and trains with downloads disallowed
    (services/data_context.py), so a switch left on would promise what it does not do.
    """
    from dragdl.engine.nodes.i18n import localized_catalog
    from dragdl.engine.nodes.i18n_tasks import localized_task_kinds

    return Catalog.model_validate(
        {"nodes": localized_catalog(lang, downloads=False), "task_kinds": localized_task_kinds(lang)}
    )


@router.get("/schema/graph", operation_id="getGraphSchema")
def get_graph_schema() -> dict[str, Any]:
    """The JSON Schema of the graph format."""
    from dragdl.engine.graph.spec import graph_json_schema

    return graph_json_schema()
