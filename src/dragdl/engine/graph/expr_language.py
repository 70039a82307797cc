"""The vocabulary of the Lambda expression language: its limits, names, operators and functions.

Everything an expression may mention is listed here, each with how it runs (for `expr_eval`) and how it
prints (for `expr_code`), side by side so the two cannot drift apart. This is what makes the language
safe: the callables are fixed torch and `operator` functions chosen in this file, and user text only ever
selects among these tables after `expr_syntax` has checked it; it is never looked up in torch, builtins
or a namespace.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import torch
from torch import Tensor

__all__ = [
    "BINARY_OPS",
    "COMPARE_OPS",
    "CONSTANTS",
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_NODES",
    "MAX_NUMBER",
    "MAX_SOURCE_LENGTH",
    "UNARY_OPS",
    "Code",
    "ExprError",
    "FunctionSpec",
    "Kind",
    "Prec",
    "wrap",
]

MAX_SOURCE_LENGTH: Final = 500
MAX_NODES: Final = 100
MAX_DEPTH: Final = 32
MAX_NUMBER: Final = 1e6
MAX_EXPONENT: Final = 16

CONSTANTS: Final[Mapping[str, float]] = MappingProxyType({"pi": math.pi, "e": math.e})
_IMAGE_DIMS: Final = (-3, -2, -1)
_NUM12: Final = frozenset({1, 2})


class ExprError(ValueError):
    """An expression that is not allowed or cannot run; `column` is 1-based in the source, when known."""

    def __init__(self, message: str, column: int | None = None) -> None:
        self.message = message
        self.column = column
        super().__init__(message if column is None else f"{message} at column {column}")


class Kind(IntEnum):
    """What a sub-expression evaluates to. Known statically, so the printer can match the interpreter."""

    NUMBER = 0  # a Python number: the sub-expression has no x in it
    REDUCED = 1  # a tensor broadcastable to x (a per-image reduction)
    FULL = 2  # a tensor of x's shape


class Prec(IntEnum):
    """Python precedence levels the printer needs; a higher one binds tighter."""

    CMP = 1
    ADD = 2
    MUL = 3
    UNARY = 4
    POW = 5
    ATOM = 6


class Code(NamedTuple):
    """A printed sub-expression: its source, how tightly it binds and what it evaluates to."""

    text: str
    prec: int
    kind: Kind
    mask: str | None = None  # a tensor comparison as a bool tensor, so where() needs no `!= 0`


def wrap(code: Code, prec: int) -> str:
    """`code` as an operand at precedence `prec`, bracketed when it binds more loosely."""
    return code.text if code.prec >= prec else f"({code.text})"


UNARY_OPS: Final[Mapping[type[ast.unaryop], tuple[str, Callable[[Any], Any]]]] = {
    ast.USub: ("-", operator.neg),
    ast.UAdd: ("+", operator.pos),
}
BINARY_OPS: Final[Mapping[type[ast.operator], tuple[str, int, Callable[[Any, Any], Any]]]] = {
    ast.Add: ("+", Prec.ADD, operator.add),
    ast.Sub: ("-", Prec.ADD, operator.sub),
    ast.Mult: ("*", Prec.MUL, operator.mul),
    ast.Div: ("/", Prec.MUL, operator.truediv),
    ast.FloorDiv: ("//", Prec.MUL, operator.floordiv),
    ast.Mod: ("%", Prec.MUL, operator.mod),
    ast.Pow: ("**", Prec.POW, operator.pow),
}
COMPARE_OPS: Final[Mapping[type[ast.cmpop], tuple[str, Callable[[Any, Any], Any]]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}


@dataclass(frozen=True)
class FunctionSpec:
    """One function of the language: parameters, one-line help, how to run it and how to print it."""

    params: tuple[str, ...]
    help: str
    apply: Callable[..., Tensor] = field(repr=False)
    emit: Callable[[Sequence[Code], str], str] = field(repr=False)
    numbers_ok: frozenset[int] = frozenset()  # parameter positions that may be plain numbers
    reduces: bool = False

    @property
    def arity(self) -> int:
        return len(self.params)


def _simple(fn: Callable[[Tensor], Tensor], template: str, help: str) -> FunctionSpec:
    return FunctionSpec(("x",), help, fn, lambda a, var: template.format(a[0].text))


def _reduction(method: str, help: str) -> FunctionSpec:
    apply = lambda t: getattr(t, method)(dim=_IMAGE_DIMS, keepdim=True)  # noqa: E731
    emit = lambda a, var: f"{wrap(a[0], Prec.ATOM)}.{method}(dim=(-3, -2, -1), keepdim=True)"  # noqa: E731
    return FunctionSpec(("x",), help, apply, emit, reduces=True)


def _clamp(t: Tensor, lo: Any, hi: Any) -> Tensor:
    # torch.clamp takes two numbers or two tensors; a mix is clamped in two steps, which is the same.
    if isinstance(lo, Tensor) == isinstance(hi, Tensor):
        return torch.clamp(t, lo, hi)
    return torch.clamp(t, min=lo).clamp(max=hi)


def _emit_clamp(a: Sequence[Code], var: str) -> str:
    if (a[1].kind == Kind.NUMBER) == (a[2].kind == Kind.NUMBER):
        return f"torch.clamp({a[0].text}, {a[1].text}, {a[2].text})"
    return f"torch.clamp({a[0].text}, min={a[1].text}).clamp(max={a[2].text})"


def _extremum(name: str, help: str) -> FunctionSpec:
    # torch.minimum/maximum want two tensors; against a number the same thing is a one-sided clamp.
    pick, bound = getattr(torch, name), "max" if name == "minimum" else "min"

    def apply(a: Any, b: Any) -> Tensor:
        a, b = (b, a) if not isinstance(a, Tensor) else (a, b)
        return pick(a, b) if isinstance(b, Tensor) else torch.clamp(a, **{bound: b})

    def emit(args: Sequence[Code], var: str) -> str:
        a, b = (args[1], args[0]) if args[0].kind == Kind.NUMBER else args
        if b.kind == Kind.NUMBER:
            return f"torch.clamp({a.text}, {bound}={b.text})"
        return f"torch.{name}({a.text}, {b.text})"

    return FunctionSpec(("a", "b"), help, apply, emit, frozenset({0, 1}))


def _emit_where(a: Sequence[Code], var: str) -> str:
    mask = a[0].mask if a[0].mask is not None else f"{wrap(a[0], Prec.ADD)} != 0"
    return f"torch.where({mask}, {a[1].text}, {a[2].text})"


def _gray(t: Tensor) -> Tensor:
    return t.mean(dim=-3, keepdim=True).expand_as(t)


def _emit_gray(a: Sequence[Code], var: str) -> str:
    mean = f"{wrap(a[0], Prec.ATOM)}.mean(dim=-3, keepdim=True)"
    # A full-size argument has x's shape, so expanding to `var` avoids printing the argument twice; a
    # reduced one already has a single channel.
    return f"{mean}.expand_as({var})" if a[0].kind == Kind.FULL else mean


_ELEMENTWISE: Final = {
    "abs": "absolute value",
    "sqrt": "square root (NaN below 0)",
    "exp": "e to the power x",
    "log": "natural logarithm (-inf at 0, NaN below)",
    "sin": "sine (radians)",
    "cos": "cosine (radians)",
    "tanh": "hyperbolic tangent, in (-1, 1)",
    "sigmoid": "1 / (1 + exp(-x)), in (0, 1)",
    "relu": "max(x, 0)",
    "floor": "round down to an integer",
    "ceil": "round up to an integer",
    "round": "round to the nearest integer (halves to even)",
    "sign": "-1, 0 or 1",
}
FUNCTIONS: Final[Mapping[str, FunctionSpec]] = MappingProxyType(
    {
        **{name: _simple(getattr(torch, name), f"torch.{name}({{}})", h) for name, h in _ELEMENTWISE.items()},
        "clamp": FunctionSpec(
            ("x", "lo", "hi"), "limit to [lo, hi] (numbers or tensors)", _clamp, _emit_clamp, _NUM12
        ),
        "minimum": _extremum("minimum", "elementwise smaller of a and b"),
        "maximum": _extremum("maximum", "elementwise larger of a and b"),
        "where": FunctionSpec(
            ("cond", "a", "b"),
            "a where cond is true (non-zero), else b; e.g. where(x > 0.5, 1.0, 0.0)",
            lambda cond, a, b: torch.where(cond != 0, a, b),
            _emit_where,
            _NUM12,
        ),
        "mean": _reduction("mean", "mean of each image, over (C, H, W)"),
        "std": _reduction("std", "standard deviation of each image, over (C, H, W)"),
        "amin": _reduction("amin", "minimum of each image, over (C, H, W)"),
        "amax": _reduction("amax", "maximum of each image, over (C, H, W)"),
        "hflip": _simple(lambda t: t.flip(-1), "torch.flip({}, dims=(-1,))", "mirror left-right"),
        "vflip": _simple(lambda t: t.flip(-2), "torch.flip({}, dims=(-2,))", "mirror top-bottom"),
        "gray": FunctionSpec(("x",), "mean of the channels, keeping the channel count", _gray, _emit_gray),
    }
)
