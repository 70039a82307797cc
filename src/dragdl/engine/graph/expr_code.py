"""The printer of the Lambda expression language: a checked tree as plain PyTorch source.

The generated training script contains this text, so it is built only from pieces this package chose:
numbers and constants through `repr`, the fixed operator symbols and function templates of
`expr_language`, and the caller's variable name (checked to be an identifier by `Expression.to_code`).
No user text is copied through. `emit` also tells each sub-expression's `Kind`, which `expr_syntax`
relies on to know the parts without `x`.
"""

from __future__ import annotations

import ast
from typing import cast

from dragdl.engine.graph.expr_language import (
    BINARY_OPS,
    COMPARE_OPS,
    CONSTANTS,
    FUNCTIONS,
    UNARY_OPS,
    Code,
    Kind,
    Prec,
    wrap,
)

__all__ = ["emit", "to_source"]


def emit(node: ast.expr, var: str) -> Code:
    """A checked sub-expression printed over the tensor named `var`, with its precedence and kind."""
    if isinstance(node, ast.Constant):
        return Code(repr(node.value), Prec.ATOM, Kind.NUMBER)
    if isinstance(node, ast.Name):
        if node.id == "x":
            return Code(var, Prec.ATOM, Kind.FULL)
        return Code(repr(CONSTANTS[node.id]), Prec.ATOM, Kind.NUMBER)
    if isinstance(node, ast.UnaryOp):
        operand = emit(node.operand, var)
        return Code(UNARY_OPS[type(node.op)][0] + wrap(operand, Prec.UNARY), Prec.UNARY, operand.kind)
    if isinstance(node, ast.BinOp):
        symbol, prec, _ = BINARY_OPS[type(node.op)]
        left, right = emit(node.left, var), emit(node.right, var)
        if prec == Prec.POW:  # right-associative, and a unary exponent (x ** -2) needs no brackets
            text = f"{wrap(left, Prec.ATOM)} ** {wrap(right, Prec.UNARY)}"
        else:
            text = f"{wrap(left, prec)} {symbol} {wrap(right, prec + 1)}"
        return Code(text, prec, max(left.kind, right.kind))
    if isinstance(node, ast.Compare):
        parts = [emit(n, var) for n in (node.left, *node.comparators)]
        kind = max(p.kind for p in parts)
        symbols = [COMPARE_OPS[type(op)][0] for op in node.ops]
        if kind == Kind.NUMBER:
            chain = " ".join(f"{s} {wrap(p, Prec.ADD)}" for s, p in zip(symbols, parts[1:], strict=True))
            return Code(f"{wrap(parts[0], Prec.ADD)} {chain}", Prec.CMP, kind)
        pairs = [
            f"{wrap(a, Prec.ADD)} {s} {wrap(b, Prec.ADD)}"
            for s, a, b in zip(symbols, parts, parts[1:], strict=False)
        ]
        mask = pairs[0] if len(pairs) == 1 else " & ".join(f"({p})" for p in pairs)
        return Code(f"({mask}).to({var}.dtype)", Prec.ATOM, kind, mask)
    spec = FUNCTIONS[cast(ast.Name, cast(ast.Call, node).func).id]
    args = [emit(a, var) for a in cast(ast.Call, node).args]
    return Code(spec.emit(args, var), Prec.ATOM, Kind.REDUCED if spec.reduces else max(a.kind for a in args))


def to_source(tree: ast.Expression, var: str) -> str:
    """The whole checked expression over `var`, with var's shape like the interpreter's result."""
    code = emit(tree.body, var)
    if code.kind == Kind.NUMBER:
        return f"torch.full_like({var}, {code.text})"
    if code.kind == Kind.REDUCED:
        return f"{wrap(code, Prec.ATOM)}.expand_as({var})"
    return code.text
