"""The interpreter of the Lambda expression language: it evaluates a checked tree on a tensor.

It is safe because it is a walk over a handful of node types, each dispatched through a fixed table to the
operators and functions of `expr_language`; it never calls eval, exec or compile, and names resolve only
to `x` and the listed constants. It trusts `expr_syntax` to have checked the tree first: a node outside
the allow-list has no entry here and could not run anyway.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any, Final

import torch
from torch import Tensor

from dragdl.engine.graph.expr_language import BINARY_OPS, COMPARE_OPS, CONSTANTS, FUNCTIONS, UNARY_OPS

__all__ = ["evaluate", "run"]


def evaluate(node: ast.expr, x: Tensor) -> Any:
    """The value of a checked sub-expression: a Python number where it has no `x`, else a tensor."""
    return _EVALUATORS[type(node)](node, x)


def run(tree: ast.Expression, x: Tensor) -> Tensor:
    """The checked expression on `x`, with x's shape: a number is filled in, a reduced tensor expanded."""
    out = evaluate(tree.body, x)
    if not isinstance(out, Tensor):
        return torch.full_like(x, out)
    return out if out.shape == x.shape else out.expand_as(x)


def _evaluate_compare(node: ast.Compare, x: Tensor) -> Any:
    values = [evaluate(n, x) for n in (node.left, *node.comparators)]
    result: Any = None
    for op, a, b in zip(node.ops, values, values[1:], strict=False):
        pair = COMPARE_OPS[type(op)][1](a, b)
        result = pair if result is None else result & pair
    return result.to(x.dtype) if isinstance(result, Tensor) else result


_EVALUATORS: Final[Mapping[type[ast.expr], Callable[[Any, Tensor], Any]]] = {
    ast.Constant: lambda node, x: node.value,
    ast.Name: lambda node, x: x if node.id == "x" else CONSTANTS[node.id],
    ast.UnaryOp: lambda node, x: UNARY_OPS[type(node.op)][1](evaluate(node.operand, x)),
    ast.BinOp: lambda n, x: BINARY_OPS[type(n.op)][2](evaluate(n.left, x), evaluate(n.right, x)),
    ast.Compare: _evaluate_compare,
    ast.Call: lambda node, x: FUNCTIONS[node.func.id].apply(*(evaluate(a, x) for a in node.args)),
}
