"""The input types DragDL knows, by name (the port type their data travels on).

Built-in types register here; another module registers its own with `register_input_type` (one
line), as the conformance test does.
"""

from __future__ import annotations

from dragdl.engine.inputs.base import InputType
from dragdl.engine.inputs.images import IMAGES
from dragdl.engine.inputs.points import POINTS
from dragdl.engine.inputs.sequences import SEQUENCES
from dragdl.engine.inputs.tables import TABLE

_TYPES: dict[str, InputType] = {}


def register_input_type(input_type: InputType) -> InputType:
    """Make `input_type` known under its name; registering the same object again changes nothing."""
    known = _TYPES.get(input_type.name)
    if known is not None and known is not input_type:
        raise ValueError(f"input type {input_type.name!r} is already registered")
    _TYPES[input_type.name] = input_type
    return input_type


def get_input_type(name: str) -> InputType:
    try:
        return _TYPES[name]
    except KeyError:
        raise KeyError(f"unknown input type {name!r} (known: {', '.join(sorted(_TYPES))})") from None


def find_input_type(name: str) -> InputType | None:
    """The input type whose port type is `name`; None for other port types (tensor, logits)."""
    return _TYPES.get(name)


def all_input_types() -> list[InputType]:
    return list(_TYPES.values())


for _builtin in (IMAGES, TABLE, SEQUENCES, POINTS):
    register_input_type(_builtin)
