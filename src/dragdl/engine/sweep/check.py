"""Validation of a graph's search section (a stage after the params stage): each searched param
names a node of the graph and a numeric or choice param of it, and every value the sweep may sample
fits the param's own constraints. Each error names the node and the param."""

from __future__ import annotations

import enum
import math
import types
import typing
from typing import Any, Literal

from pydantic import ValidationError

from dragdl.engine.graph.errors import GraphError
from dragdl.engine.graph.search import Choice, FloatRange, IntRange, Scalar, SearchSection, searched
from dragdl.engine.nodes.registry import NodeType, get_node_type

MAX_GRID = 10_000
"""Values of one param's grid (a range's step); more are refused: no sweep could visit them."""
MAX_GRID_POINTS = 100_000
"""Points of a whole grid sweep (the product of its params' values), counted from the spec."""
CHECKED_ENDS = 500
"""Grid values checked at each end of a longer range (a param's constraints are bounds)."""


def check_search(
    section: SearchSection | None, nodes: dict[str, tuple[NodeType[Any], dict[str, Any]]]
) -> list[GraphError]:
    """`nodes`: node id -> (its type, its raw params)."""
    errors: list[GraphError] = []
    for node_id, param, spec in searched(section):
        found = nodes.get(node_id)
        if found is None:
            errors.append(
                GraphError(
                    code="search_node_unknown",
                    message=f"the search section names node {node_id!r}, which is not in the graph",
                    node_id=node_id,
                    field=param,
                )
            )
            continue
        kind, params = found
        problem = _check_param(kind, params, param, spec)
        if problem is not None:
            code, message = problem
            errors.append(GraphError(code=code, message=message, node_id=node_id, field=param))
    return errors


def _check_param(
    kind: NodeType[Any], params: dict[str, Any], param: str, spec: FloatRange | IntRange | Choice
) -> tuple[str, str] | None:
    field = kind.params_model.model_fields.get(param)
    if field is None:
        known = ", ".join(kind.params_model.model_fields) or "none"
        return "search_param_unknown", f"{kind.title} has no parameter {param!r} to search (it has: {known})"
    accepted = _value_kinds(field.annotation)
    if isinstance(spec, FloatRange) and "float" not in accepted:
        return "search_param_kind", f"{param} is not a real number: search it with type int or choice"
    if isinstance(spec, IntRange) and not {"int", "float"} & accepted:
        return "search_param_kind", f"{param} is not a number: search it with type choice"
    if isinstance(spec, Choice) and not accepted:
        return "search_param_kind", f"{param} is neither a number nor a choice: it cannot be searched"
    if isinstance(spec, FloatRange | IntRange):
        problem = _check_range(param, spec)
        if problem is not None:
            return "search_range_invalid", problem
    for value in produced_values(spec):
        try:
            kind.params_model.model_validate({**params, param: value})
        except ValidationError as exc:
            reasons = "; ".join(item["msg"] for item in exc.errors() if item["loc"][:1] == (param,))
            if reasons:
                return "search_value_invalid", f"{param} = {value!r} does not fit the parameter: {reasons}"
    return None


def _check_range(param: str, spec: FloatRange | IntRange) -> str | None:
    for bound in ("low", "high"):
        if not math.isfinite(getattr(spec, bound)):
            return f"{param}: {bound} must be a finite number, not {getattr(spec, bound)}"
    if spec.low >= spec.high:
        return f"{param}: low ({spec.low}) must be below high ({spec.high})"
    if spec.log and spec.low <= 0:
        return f"{param}: a log scale needs low above 0 (got {spec.low})"
    if spec.log and (spec.step is not None and not (isinstance(spec, IntRange) and spec.step == 1)):
        return f"{param}: a log scale cannot have a step"
    if spec.step is not None and (spec.high - spec.low) / spec.step > MAX_GRID:
        return f"{param}: step {spec.step} makes more than {MAX_GRID} values"
    return None


def _value_kinds(annotation: Any) -> set[str]:
    """What a param accepts that a sweep can sample: 'int', 'float', 'choice' (a Literal or Enum)."""
    kinds: set[str] = set()
    for part in _union_parts(annotation):
        if part is bool:
            kinds.add("choice")
        elif part is int:
            kinds.add("int")
        elif part is float:
            kinds.update(("float", "int"))
        elif typing.get_origin(part) is Literal or (isinstance(part, type) and issubclass(part, enum.Enum)):
            kinds.add("choice")
    return kinds


def _union_parts(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return [p for arg in typing.get_args(annotation) for p in _union_parts(arg)]
    if origin is typing.Annotated:
        return _union_parts(typing.get_args(annotation)[0])
    return [annotation]


def grid_count(spec: FloatRange | IntRange | Choice) -> int | None:
    """How many values a grid sweep visits for this param, without listing them; None when it has
    no grid (a real range without a step)."""
    if isinstance(spec, Choice):
        return len(spec.values)
    if spec.step is None:
        return None
    return math.floor((spec.high - spec.low) / spec.step + 1e-9) + 1


def grid_value(spec: FloatRange | IntRange | Choice, index: int) -> Scalar:
    """The `index`-th value of the param's grid (0-based, below `grid_count`)."""
    if isinstance(spec, Choice):
        return spec.values[index]
    assert spec.step is not None
    if isinstance(spec, IntRange):
        return spec.low + index * spec.step
    return tidy(spec.low + index * spec.step)


def tidy(value: float) -> float:
    """12 significant digits: hides the float noise of low + i * step (0.30000000000000004) but,
    unlike rounding to 12 decimals, never turns a small positive value (1e-13) into 0."""
    return float(f"{value:.12g}")


def grid_points(section: SearchSection | None, limit: int = MAX_GRID_POINTS) -> int:
    """The number of points of the section's grid, counted from the specs; stops counting above
    `limit` (returns limit + 1), so a 10^6000-point grid costs nothing. ValueError naming the first
    param without a grid."""
    total = 1
    for node_id, param, spec in searched(section):
        count = grid_count(spec)
        if count is None:
            raise ValueError(f"{node_id}.{param}: a grid sweep needs a step for a real range, or choices")
        total = min(total * count, limit + 1)
    return total


def produced_values(spec: FloatRange | IntRange | Choice) -> list[Scalar]:
    """The values a sweep may give the param that are checked against its model: every choice; a
    range's bounds and its grid values as the sweep computes them (all of a short grid, the ends of
    a long one: a rounded value must not slip past a bound)."""
    if isinstance(spec, Choice):
        return list(spec.values)
    values: list[Scalar] = [spec.low, spec.high]
    count = grid_count(spec)
    if count is not None:
        indices = (
            range(count)
            if count <= 2 * CHECKED_ENDS
            else [
                *range(CHECKED_ENDS),
                *range(count - CHECKED_ENDS, count),
            ]
        )
        values.extend(grid_value(spec, i) for i in indices)
    return values


def check_values(graph: dict[str, Any], values: dict[str, Scalar]) -> str | None:
    """Whether a trial's values (`node.param` -> value) fit their params' own models in `graph`:
    None, or a message naming the node, the param and the value. The sweep driver asks it of every
    trial before queueing it, so a value no check foresaw fails its sweep, not the driver."""
    nodes = {node.get("id"): node for node in graph.get("nodes", []) if isinstance(node, dict)}
    for name, value in values.items():
        node_id, _, param = name.partition(".")
        node = nodes.get(node_id)
        kind = get_node_type(str(node.get("type"))) if node is not None else None
        if node is None or kind is None:
            return f"the search section names node {node_id!r}, which is not in the graph"
        try:
            kind.params_model.model_validate({**(node.get("params") or {}), param: value})
        except ValidationError as exc:
            reasons = "; ".join(item["msg"] for item in exc.errors() if item["loc"][:1] == (param,))
            if reasons:
                return f"node {node_id!r}: {param} = {value!r} does not fit the parameter: {reasons}"
    return None
