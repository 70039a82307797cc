"""Input types: what a kind of data (images, tables, sequences) owns from upload to answer."""

from dragdl.engine.inputs.base import InputType
from dragdl.engine.inputs.registry import (
    all_input_types,
    find_input_type,
    get_input_type,
    register_input_type,
)

__all__ = ["InputType", "all_input_types", "find_input_type", "get_input_type", "register_input_type"]
