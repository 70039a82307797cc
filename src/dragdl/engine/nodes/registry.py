"""The node catalog: one registration per node type.

Every consumer (the canvas palette and property forms, validation, the compiler, the code
generator) reads node types from here. A node type is a small class: a typed Pydantic params
model, its ports, and the category-specific hooks declared by the base classes in `base.py`.
"""

from __future__ import annotations

import builtins
from abc import ABC
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from dragdl.engine.graph.errors import GraphError
from dragdl.engine.graph.param_messages import param_error
from dragdl.engine.inputs.registry import all_input_types

Category = Literal["dataset", "op", "layer", "model", "train"]
PortType = str
"""An input type's name (`images`, `table`, `sequence`: data as its dataset node outputs it, see
`engine/inputs/`), `tensor` (a layer's output) or `logits` (a pretrained model's)."""
ANY_DATA: PortType = "data"
"""In an input port's types: every input type's port (the network's first layer takes whatever
data reaches it, its shape checked by the layer), so a new input type needs no change to a layer."""
CATEGORIES: tuple[Category, ...] = ("dataset", "op", "layer", "model", "train")


@dataclass(frozen=True)
class Port:
    """A typed connection point.

    An output port produces exactly one type. An input port lists the types it accepts; an edge is
    legal only when the source type is one of them, compared exactly (never by substring).
    """

    name: str
    types: tuple[PortType, ...]
    multiple: bool = False
    label: str = ""

    @property
    def accepted(self) -> tuple[PortType, ...]:
        """The port types an input port takes, `ANY_DATA` spelled out as the registered input types."""
        if ANY_DATA not in self.types:
            return self.types
        names = tuple(input_type.name for input_type in all_input_types())
        return tuple(dict.fromkeys(name for t in self.types for name in (names if t == ANY_DATA else (t,))))

    def accepts(self, produced: PortType) -> bool:
        return produced in self.accepted

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "types": list(self.accepted),
            "multiple": self.multiple,
            "label": self.label,
        }


@dataclass(frozen=True)
class _ServerPathMark:
    """Field metadata: the parameter names a file or folder on the machine that runs the engine.

    The server lets only administrators set such parameters (a path answers with what it reads), and
    derives that policy from this mark, so a new node type cannot forget a path field. The JSON
    Schema says so too (`x-server-path`), for forms and clients.
    """

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-server-path"] = True
        return schema


SERVER_PATH = _ServerPathMark()
ServerPath = Annotated[str, SERVER_PATH]
"""A required parameter naming a server file or folder."""
OptionalServerPath = Annotated[str | None, SERVER_PATH]
"""An optional parameter naming a server file or folder (empty: the node's default location)."""


P = TypeVar("P", bound=BaseModel)


class NodeType(ABC, Generic[P]):
    """Base of every node type. Subclasses set the class attributes and register themselves."""

    type: ClassVar[str]
    category: ClassVar[Category]
    title: ClassVar[str]
    description: ClassVar[str]
    params_model: builtins.type[P]
    inputs: ClassVar[tuple[Port, ...]] = ()
    outputs: ClassVar[tuple[Port, ...]] = ()
    random: ClassVar[bool] = False
    """Random data operators run on training batches only."""

    def parse_params(
        self, raw: dict[str, Any], node_id: str | None = None
    ) -> tuple[P | None, list[GraphError]]:
        """Check raw JSON params; return the typed params or one error per bad field."""
        try:
            return self.params_model.model_validate(raw), []
        except ValidationError as exc:
            titles = {name: field.title or name for name, field in self.params_model.model_fields.items()}
            errors = []
            for item in exc.errors():
                field = ".".join(str(part) for part in item["loc"]) or None
                message, details = param_error(item, titles)
                errors.append(
                    GraphError(
                        code="param_invalid", message=message, node_id=node_id, field=field, details=details
                    )
                )
            return None, errors

    @property
    def path_fields(self) -> tuple[str, ...]:
        """The parameters naming server files or folders (marked `ServerPath` in the params model)."""
        fields = self.params_model.model_fields
        return tuple(name for name, info in fields.items() if SERVER_PATH in info.metadata)

    def input_port(self, name: str | None) -> Port | None:
        return _find_port(self.inputs, name)

    def output_port(self, name: str | None) -> Port | None:
        return _find_port(self.outputs, name)

    def catalog_entry(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "category": self.category,
            "title": self.title,
            "description": self.description,
            "inputs": [port.to_json() for port in self.inputs],
            "outputs": [port.to_json() for port in self.outputs],
            "random": self.random,
            "params_schema": self.params_model.model_json_schema(),
        }


def _find_port(ports: tuple[Port, ...], name: str | None) -> Port | None:
    if name is None:
        return ports[0] if len(ports) == 1 else None
    for port in ports:
        if port.name == name:
            return port
    return None


_REGISTRY: dict[str, NodeType[Any]] = {}

N = TypeVar("N", bound=type[NodeType[Any]])


def register(cls: N) -> N:
    """Class decorator: add one node type to the catalog (exactly once)."""
    if cls.type in _REGISTRY:
        raise ValueError(f"node type {cls.type!r} is registered twice")
    prefix = cls.type.split(".", 1)[0]
    if prefix != cls.category:
        raise ValueError(f"node type {cls.type!r} must start with its category {cls.category!r}")
    _REGISTRY[cls.type] = cls()
    return cls


def get_node_type(type_name: str) -> NodeType[Any] | None:
    _load_catalog()
    return _REGISTRY.get(type_name)


def all_node_types() -> list[NodeType[Any]]:
    _load_catalog()
    order = {category: i for i, category in enumerate(CATEGORIES)}
    return sorted(_REGISTRY.values(), key=lambda node: (order[node.category], node.type))


def catalog() -> list[dict[str, Any]]:
    """The whole catalog as JSON data (what `dragdl catalog --json` and the canvas use)."""
    return [node.catalog_entry() for node in all_node_types()]


def _load_catalog() -> None:
    # Importing the families registers their node types; done lazily so that importing the
    # registry alone stays cheap and free of import cycles.
    import dragdl.engine.nodes  # noqa: F401
