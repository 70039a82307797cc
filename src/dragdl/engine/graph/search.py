"""The search section of a graph: which node params a sweep samples, and how.

It lives beside the nodes, at the graph level (`graph.search[node_id][param]`), so every node's own
params stay valid: a plain run trains with the node's own values, a sweep substitutes sampled ones.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scalar = float | int | str | bool


class FloatRange(BaseModel):
    """A real number in [low, high]; `log` samples its logarithm uniformly (learning rates)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["float"] = "float"
    low: float
    high: float
    log: bool = False
    step: float | None = Field(default=None, gt=0, description="Grid spacing; a grid sweep needs one.")


class IntRange(BaseModel):
    """A whole number in [low, high], every `step` (the grid of a grid sweep)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["int"] = "int"
    low: int
    high: int
    log: bool = False
    step: int = Field(default=1, ge=1)


class Choice(BaseModel):
    """One of a list of values (numbers, or the names of a choice param)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["choice"] = "choice"
    values: list[Scalar] = Field(min_length=1, max_length=100)


SearchParam = Annotated[FloatRange | IntRange | Choice, Field(discriminator="type")]
SearchSection = dict[str, dict[str, SearchParam]]
"""node id -> param name -> how it is searched."""


def searched(section: SearchSection | None) -> list[tuple[str, str, FloatRange | IntRange | Choice]]:
    """(node id, param, spec) in a stable order: the order of the section."""
    if not section:
        return []
    return [(node_id, param, spec) for node_id, params in section.items() for param, spec in params.items()]


def key(node_id: str, param: str) -> str:
    """The name of a searched param in a study and in the trials table: `node.param`."""
    return f"{node_id}.{param}"


def substitute(graph: dict[str, Any], values: dict[str, Scalar]) -> dict[str, Any]:
    """The base graph with each `node.param` set to its sampled value and no search section: a
    concrete graph that trains as a normal task."""
    concrete = copy.deepcopy(graph)
    concrete.pop("search", None)
    by_id = {node["id"]: node for node in concrete.get("nodes", []) if isinstance(node, dict)}
    for name, value in values.items():
        node_id, _, param = name.partition(".")
        by_id[node_id].setdefault("params", {})[param] = value
    return concrete
