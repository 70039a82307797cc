"""Parsing and checking of Lambda expressions: the allow-list between user text and everything else.

The source is only ever turned into an AST (`ast.parse` in eval mode, never compiled to code), after its
length and bracket depth are bounded. The tree is then measured without recursion and walked against a
strict allow-list: numbers, `x`, the listed constants, the listed operators and direct calls of the listed
functions with the right number of arguments. Everything else (attributes, subscripts, strings, keywords,
lambdas, ...) is refused with an `ExprError` naming the construct and its column. Parts without `x` are
computed here, by the interpreter, so a tree that passes cannot overflow or divide by zero later.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Final, NoReturn, cast

import torch

from dragdl.engine.graph.expr_code import emit
from dragdl.engine.graph.expr_eval import evaluate
from dragdl.engine.graph.expr_language import (
    BINARY_OPS,
    COMPARE_OPS,
    CONSTANTS,
    FUNCTIONS,
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_NODES,
    MAX_NUMBER,
    MAX_SOURCE_LENGTH,
    UNARY_OPS,
    ExprError,
    Kind,
)

__all__ = ["parse"]

_NO_INPUT: Final = torch.empty(0)  # parts without x never read it
_REJECTED: Final[Mapping[type[ast.AST], str]] = {
    **dict.fromkeys((ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp), "comprehensions are"),
    **{ast.Dict: "dicts are", ast.Set: "sets are", ast.List: "lists are", ast.Tuple: "tuples are"},
    **dict.fromkeys((ast.Await, ast.Yield, ast.YieldFrom), "await and yield are"),
    **{ast.Lambda: "lambda is", ast.JoinedStr: "f-strings are", ast.Starred: "unpacking (*) is"},
    ast.NamedExpr: "assignment (:=) is",
    ast.Subscript: "indexing and slicing (x[...]) are",
    ast.IfExp: "conditional expressions (a if c else b) are",
    ast.BoolOp: "'and' and 'or' are",
}
_HINTS: Final[Mapping[type[ast.AST], str]] = {
    ast.Subscript: "; use hflip, vflip or where",
    ast.IfExp: "; use where(cond, a, b)",
    ast.BoolOp: "; use where(cond, a, b) or multiply 0/1 comparisons",
}
_OPERATOR_HELP: Final = "allowed operators: + - * / // % ** < <= > >= == !="
# Newlines and tabs become spaces so the source is one line and a column is a character index.
_WHITESPACE: Final = str.maketrans("\n\r\t\f\v", "     ")


class _Checker:
    """Checks a parsed tree: allow-list, arity, exponents, and parts without x computed and bounded."""

    def __init__(self, text: str, offset: int) -> None:
        self.text = text
        self.encoded = text.encode()
        self.offset = offset

    def column(self, byte_offset: int) -> int:
        # ast counts UTF-8 bytes; people count characters.
        return len(self.encoded[:byte_offset].decode(errors="ignore")) + self.offset + 1

    def fail(self, message: str, node: ast.AST) -> NoReturn:
        col = getattr(node, "col_offset", None)
        raise ExprError(message, None if col is None else self.column(col))

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.text, node) or type(node).__name__

    def limits(self, tree: ast.Expression) -> None:
        # Iterative, so a hostile tree cannot exhaust the stack before it is measured.
        count = 0
        stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
        while stack:
            node, depth = stack.pop()
            if isinstance(node, ast.expr):
                count += 1
                if depth > MAX_DEPTH:
                    self.fail(f"expression is nested too deeply (at most {MAX_DEPTH} levels)", node)
            stack.extend((c, depth + isinstance(c, ast.expr)) for c in ast.iter_child_nodes(node))
        if count > MAX_NODES:
            raise ExprError(f"expression is too large: {count} terms and operators (at most {MAX_NODES})")

    def fold(self, node: ast.expr) -> None:
        # A part without x is computed now, by the interpreter itself, so it cannot blow up later.
        try:
            value = evaluate(node, _NO_INPUT)
        except ArithmeticError as e:  # division by zero, float overflow
            self.fail(f"'{self.segment(node)}' cannot be computed ({e})", node)
        if not isinstance(value, int | float) or not abs(value) <= MAX_NUMBER:
            self.fail(f"'{self.segment(node)}' is not a real number of size at most {MAX_NUMBER:,.0f}", node)

    def check(self, node: ast.expr) -> None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str | bytes):
                self.fail("string constants are not allowed", node)
            if not isinstance(node.value, int | float):
                self.fail(f"the constant {node.value!r} is not allowed; only numbers are", node)
            if not abs(node.value) <= MAX_NUMBER:
                self.fail(
                    f"the number {self.segment(node)} is out of range (at most {MAX_NUMBER:,.0f})", node
                )
        elif isinstance(node, ast.Name):
            if node.id in FUNCTIONS:
                self.fail(f"'{node.id}' is a function; call it as {_usage(node.id)}", node)
            if node.id != "x" and node.id not in CONSTANTS:
                self.fail(f"unknown name '{node.id}'; the image is 'x' and the constants are pi and e", node)
        elif isinstance(node, ast.UnaryOp | ast.BinOp | ast.Compare):
            self.operator(node)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.check(child)
            if emit(node, "x").kind == Kind.NUMBER:
                self.fold(node)
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.Attribute):
            self.check(node.value)  # report the leftmost problem first, e.g. a string before `.format`
            dot = self.encoded.find(b".", cast(int, node.value.end_col_offset))
            raise ExprError(f"attribute access (.{node.attr}) is not allowed", self.column(dot))
        else:
            if isinstance(node, ast.Subscript):
                self.check(node.value)
            what = _REJECTED.get(type(node), f"{type(node).__name__} is")
            self.fail(f"{what} not allowed{_HINTS.get(type(node), '')}", node)

    def operator(self, node: ast.UnaryOp | ast.BinOp | ast.Compare) -> None:
        if isinstance(node, ast.UnaryOp) and type(node.op) not in UNARY_OPS:
            self.fail("'not' and '~' are not allowed; for a 0/1 mask m use 1 - m", node)
        if isinstance(node, ast.Compare) and any(type(op) not in COMPARE_OPS for op in node.ops):
            self.fail(f"'is' and 'in' are not allowed; {_OPERATOR_HELP}", node)
        if isinstance(node, ast.BinOp) and type(node.op) not in BINARY_OPS:
            self.fail(f"this operator is not allowed; {_OPERATOR_HELP}", node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            # A constant, small exponent keeps results bounded: no 9**9**9, no 2**x, no x**1000.
            exp = node.right
            inner = exp.operand if isinstance(exp, ast.UnaryOp) and type(exp.op) in UNARY_OPS else exp
            value = inner.value if isinstance(inner, ast.Constant) else None
            if not isinstance(value, int | float) or isinstance(value, bool):
                self.fail(
                    f"the exponent of ** must be a number like 2 or 0.5, not '{self.segment(exp)}'", exp
                )
            if not abs(value) <= MAX_EXPONENT:
                self.fail(f"the exponent {self.segment(exp)} is too large (at most {MAX_EXPONENT})", exp)

    def call(self, node: ast.Call) -> None:
        if not isinstance(node.func, ast.Name):
            self.check(node.func)
            self.fail("only the listed functions can be called", node.func)
        name, spec = node.func.id, FUNCTIONS.get(node.func.id)
        if spec is None:
            self.fail(f"unknown function '{name}'; allowed: {', '.join(FUNCTIONS)}", node.func)
        if node.keywords:
            self.fail(f"keyword arguments are not allowed; call {_usage(name)}", node.keywords[0])
        for arg in node.args:
            self.check(arg)
        if len(node.args) != spec.arity:
            self.fail(f"{name}() takes {spec.arity} argument(s), got {len(node.args)}: {_usage(name)}", node)
        kinds = [emit(arg, "x").kind for arg in node.args]
        for i, (arg, kind) in enumerate(zip(node.args, kinds, strict=True)):
            if kind == Kind.NUMBER and i not in spec.numbers_ok:
                self.fail(f"argument '{spec.params[i]}' of {name}() must depend on x, not be a number", arg)
        if all(kind == Kind.NUMBER for kind in kinds):
            self.fail(f"{name}() needs an argument that depends on x", node)


def _usage(name: str) -> str:
    return f"{name}({', '.join(FUNCTIONS[name].params)})"


def parse(source: str) -> ast.Expression:
    """The checked tree of `source`; raises ExprError naming the offending construct and its column."""
    if len(source) > MAX_SOURCE_LENGTH:
        raise ExprError(f"expression is too long: {len(source)} characters (at most {MAX_SOURCE_LENGTH})")
    text = source.translate(_WHITESPACE)
    body = text.lstrip(" ")  # eval mode reads leading spaces as an indent
    if not body.strip():
        raise ExprError("expression is empty")
    depth = 0
    for i, char in enumerate(text):  # the parser allows 200 nested brackets; we allow far fewer
        depth += (char in "([{") - (char in ")]}")
        if depth > MAX_DEPTH:
            raise ExprError(f"brackets are nested too deeply (at most {MAX_DEPTH} levels)", i + 1)
    offset = len(text) - len(body)
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError as e:
        column = None if e.offset is None else (e.offset or len(body) + 1) + offset  # 0: at the end
        raise ExprError(f"syntax error: {e.msg}", column) from None
    except (RecursionError, MemoryError):
        raise ExprError("expression is too complex to parse") from None
    except ValueError as e:
        raise ExprError(f"invalid source: {e}") from None
    checker = _Checker(body, offset)
    checker.limits(tree)
    checker.check(tree.body)
    return tree
