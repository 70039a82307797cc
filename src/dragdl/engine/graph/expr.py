"""The safe expression language of the `Lambda` op (ARCHITECTURE.md section 2).

An expression over an image tensor `x`, e.g. ``clamp(x * 1.5 - 0.2, 0, 1)``, is parsed with `ast.parse`,
checked against a strict allow-list, run by a small interpreter and printed as PyTorch code by our own
printer; it never reaches eval/exec. Semantics (the interpreter and the printer share them):

- A part without `x` (``2 ** 0.5``) is Python arithmetic, computed at parse time to prove it is a finite
  real number of size <= 1e6 (no division by zero, no huge powers).
- Comparisons with tensors give float 0/1 tensors of x's dtype, so masks compose with arithmetic.
- mean, std, amin, amax reduce each image over its last three dims (C, H, W) with keepdim, so for a batch
  (B, C, H, W) they give (B, 1, 1, 1) and broadcast against `x`.
- The result has x's shape: a number is filled in, a broadcastable tensor (``mean(x)``) is expanded.
- gray(x) averages the channels and keeps the channel count, so a gray image fits the same network.

This module is the public face, `Expression`; the parts live beside it: `expr_language` (limits, names,
operators, functions), `expr_syntax` (parsing and the allow-list), `expr_eval` (the interpreter) and
`expr_code` (the printer).
"""

from __future__ import annotations

import ast
import keyword
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from dragdl.engine.graph.expr_code import to_source
from dragdl.engine.graph.expr_eval import run
from dragdl.engine.graph.expr_language import CONSTANTS, FUNCTIONS, ExprError, FunctionSpec
from dragdl.engine.graph.expr_language import MAX_DEPTH as MAX_DEPTH
from dragdl.engine.graph.expr_language import MAX_EXPONENT as MAX_EXPONENT
from dragdl.engine.graph.expr_language import MAX_NODES as MAX_NODES
from dragdl.engine.graph.expr_language import MAX_NUMBER as MAX_NUMBER
from dragdl.engine.graph.expr_language import MAX_SOURCE_LENGTH as MAX_SOURCE_LENGTH
from dragdl.engine.graph.expr_syntax import parse

__all__ = ["CONSTANTS", "FUNCTIONS", "ExprError", "Expression", "FunctionSpec", "parse_expression"]


@dataclass(frozen=True)
class Expression:
    """A checked Lambda expression. The constructor parses and checks `source` (raising ExprError)."""

    source: str
    tree: ast.Expression = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tree", parse(self.source))

    def __reduce__(self) -> tuple[Any, ...]:
        # DataLoader workers pickle transforms: only the source travels and is checked again on arrival.
        return (Expression, (self.source,))

    def __call__(self, x: Tensor) -> Tensor:
        if not x.is_floating_point():
            raise ExprError(f"the input must be a floating-point tensor, got {x.dtype}")
        try:
            return run(self.tree, x)
        except (RuntimeError, IndexError, TypeError) as e:
            raise ExprError(f"'{self.source}' failed on a tensor of shape {tuple(x.shape)}: {e}") from e

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ExprError unless the expression maps a float tensor of `shape` to one of the same shape."""
        out = self(torch.rand(shape))
        if out.shape != torch.Size(shape):
            raise ExprError(f"the result has shape {tuple(out.shape)}, not the input shape {shape}")
        if not out.is_floating_point():
            raise ExprError(f"the result has dtype {out.dtype}, not a float; write 1.0 rather than 1")

    def to_code(self, var: str = "x") -> str:
        """Equivalent plain PyTorch source over the tensor named `var`."""
        if not var.isidentifier() or keyword.iskeyword(var) or var == "torch":
            raise ValueError(f"var ({var!r}) must be a Python identifier")
        return to_source(self.tree, var)


def parse_expression(source: str) -> Expression:
    """Parse and check `source`; raises ExprError naming the offending construct and its column."""
    return Expression(source)
