"""One declaration of what a node builds, from which both the torch object and its code follow.

A layer (or operator) returns a `Call`: the constructor, its name as the exported script writes it,
and the arguments. `build()` runs it and `code()` prints it, so the network DragDL trains and the
standalone script cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from torch import nn


@dataclass(frozen=True)
class Call:
    target: Callable[..., Any]
    name: str
    """How the script names `target`, e.g. `nn.Conv2d` or `v2.Resize`."""
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    """Only arguments that differ from the constructor's defaults, so the script stays short."""

    def build(self) -> Any:
        return self.target(*(_built(a) for a in self.args), **{k: _built(v) for k, v in self.kwargs.items()})

    def code(self) -> str:
        parts = [_code(a) for a in self.args] + [f"{k}={_code(v)}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"


@dataclass(frozen=True)
class Code:
    """An argument whose value has no readable repr: `value` when built, `text` in the script
    (an enum member, a parsed formula written as a lambda, a name the script defines)."""

    value: Any
    text: str


def nn_call(module: type[nn.Module], *args: Any, **kwargs: Any) -> Call:
    """A `torch.nn` layer, written `nn.<Name>(...)` in the script."""
    return Call(module, f"nn.{module.__name__}", args, kwargs)


def v2_call(transform: type[nn.Module], *args: Any, **kwargs: Any) -> Call:
    """A torchvision.transforms.v2 transform, written `v2.<Name>(...)` in the script."""
    return Call(transform, f"v2.{transform.__name__}", args, kwargs)


def _built(value: Any) -> Any:
    if isinstance(value, Call):
        return value.build()
    return value.value if isinstance(value, Code) else value


def _code(value: Any) -> str:
    if isinstance(value, Call):
        return value.code()
    return value.text if isinstance(value, Code) else repr(value)
