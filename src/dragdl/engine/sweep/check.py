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
from dragdl.engine.nodes.registry import NodeType

MAX_GRID = 10_000
"""A grid larger than this is refused: no sweep could visit it."""


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
        values: list[Scalar] = [spec.low, spec.high]
    else:
        values = list(spec.values)
    for value in values:
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


def grid_values(spec: FloatRange | IntRange | Choice) -> list[Scalar] | None:
    """The values a grid sweep visits; None when the param has no grid (a real range without step)."""
    if isinstance(spec, Choice):
        return list(spec.values)
    if spec.step is None:
        return None
    count = math.floor((spec.high - spec.low) / spec.step + 1e-9) + 1
    if isinstance(spec, IntRange):
        return [spec.low + i * spec.step for i in range(count)]
    return [round(spec.low + i * spec.step, 12) for i in range(count)]
