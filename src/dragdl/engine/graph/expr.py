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
"""

from __future__ import annotations

import ast
import keyword
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Any, Final, NamedTuple, NoReturn, cast

import torch
from torch import Tensor

__all__ = ["CONSTANTS", "FUNCTIONS", "ExprError", "Expression", "FunctionSpec", "parse_expression"]

MAX_SOURCE_LENGTH: Final = 500
MAX_NODES: Final = 100
MAX_DEPTH: Final = 32
MAX_NUMBER: Final = 1e6
MAX_EXPONENT: Final = 16

CONSTANTS: Final[Mapping[str, float]] = MappingProxyType({"pi": math.pi, "e": math.e})
_IMAGE_DIMS: Final = (-3, -2, -1)
_NO_INPUT: Final = torch.empty(0)  # parts without x never read it
_NUM12: Final = frozenset({1, 2})


class ExprError(ValueError):
    """An expression that is not allowed or cannot run; `column` is 1-based in the source, when known."""

    def __init__(self, message: str, column: int | None = None) -> None:
        self.message = message
        self.column = column
        super().__init__(message if column is None else f"{message} at column {column}")


class _Kind(IntEnum):
    """What a sub-expression evaluates to. Known statically, so the printer can match the interpreter."""

    NUMBER = 0  # a Python number: the sub-expression has no x in it
    REDUCED = 1  # a tensor broadcastable to x (a per-image reduction)
    FULL = 2  # a tensor of x's shape


# Python precedence levels the printer needs; a higher one binds tighter.
_CMP, _ADD, _MUL, _UNARY, _POW, _ATOM = range(1, 7)


class _Code(NamedTuple):
    text: str
    prec: int
    kind: _Kind
    mask: str | None = None  # a tensor comparison as a bool tensor, so where() needs no `!= 0`


def _wrap(code: _Code, prec: int) -> str:
    return code.text if code.prec >= prec else f"({code.text})"


@dataclass(frozen=True)
class FunctionSpec:
    """One function of the language: parameters, one-line help, how to run it and how to print it."""

    params: tuple[str, ...]
    help: str
    apply: Callable[..., Tensor] = field(repr=False)
    emit: Callable[[Sequence[_Code], str], str] = field(repr=False)
    numbers_ok: frozenset[int] = frozenset()  # parameter positions that may be plain numbers
    reduces: bool = False

    @property
    def arity(self) -> int:
        return len(self.params)


def _simple(fn: Callable[[Tensor], Tensor], template: str, help: str) -> FunctionSpec:
    return FunctionSpec(("x",), help, fn, lambda a, var: template.format(a[0].text))


def _reduction(method: str, help: str) -> FunctionSpec:
    apply = lambda t: getattr(t, method)(dim=_IMAGE_DIMS, keepdim=True)  # noqa: E731
    emit = lambda a, var: f"{_wrap(a[0], _ATOM)}.{method}(dim=(-3, -2, -1), keepdim=True)"  # noqa: E731
    return FunctionSpec(("x",), help, apply, emit, reduces=True)


def _clamp(t: Tensor, lo: Any, hi: Any) -> Tensor:
    # torch.clamp takes two numbers or two tensors; a mix is clamped in two steps, which is the same.
    if isinstance(lo, Tensor) == isinstance(hi, Tensor):
        return torch.clamp(t, lo, hi)
    return torch.clamp(t, min=lo).clamp(max=hi)


def _emit_clamp(a: Sequence[_Code], var: str) -> str:
    if (a[1].kind == _Kind.NUMBER) == (a[2].kind == _Kind.NUMBER):
        return f"torch.clamp({a[0].text}, {a[1].text}, {a[2].text})"
    return f"torch.clamp({a[0].text}, min={a[1].text}).clamp(max={a[2].text})"


def _extremum(name: str, help: str) -> FunctionSpec:
    # torch.minimum/maximum want two tensors; against a number the same thing is a one-sided clamp.
    pick, bound = getattr(torch, name), "max" if name == "minimum" else "min"

    def apply(a: Any, b: Any) -> Tensor:
        a, b = (b, a) if not isinstance(a, Tensor) else (a, b)
        return pick(a, b) if isinstance(b, Tensor) else torch.clamp(a, **{bound: b})

    def emit(args: Sequence[_Code], var: str) -> str:
        a, b = (args[1], args[0]) if args[0].kind == _Kind.NUMBER else args
        if b.kind == _Kind.NUMBER:
            return f"torch.clamp({a.text}, {bound}={b.text})"
        return f"torch.{name}({a.text}, {b.text})"

    return FunctionSpec(("a", "b"), help, apply, emit, frozenset({0, 1}))


def _emit_where(a: Sequence[_Code], var: str) -> str:
    mask = a[0].mask if a[0].mask is not None else f"{_wrap(a[0], _ADD)} != 0"
    return f"torch.where({mask}, {a[1].text}, {a[2].text})"


def _gray(t: Tensor) -> Tensor:
    return t.mean(dim=-3, keepdim=True).expand_as(t)


def _emit_gray(a: Sequence[_Code], var: str) -> str:
    mean = f"{_wrap(a[0], _ATOM)}.mean(dim=-3, keepdim=True)"
    # A full-size argument has x's shape, so expanding to `var` avoids printing the argument twice; a
    # reduced one already has a single channel.
    return f"{mean}.expand_as({var})" if a[0].kind == _Kind.FULL else mean


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

_UNARY_OPS: Final[Mapping[type[ast.unaryop], tuple[str, Callable[[Any], Any]]]] = {
    ast.USub: ("-", operator.neg),
    ast.UAdd: ("+", operator.pos),
}
_BINARY_OPS: Final[Mapping[type[ast.operator], tuple[str, int, Callable[[Any, Any], Any]]]] = {
    ast.Add: ("+", _ADD, operator.add),
    ast.Sub: ("-", _ADD, operator.sub),
    ast.Mult: ("*", _MUL, operator.mul),
    ast.Div: ("/", _MUL, operator.truediv),
    ast.FloorDiv: ("//", _MUL, operator.floordiv),
    ast.Mod: ("%", _MUL, operator.mod),
    ast.Pow: ("**", _POW, operator.pow),
}
_COMPARE_OPS: Final[Mapping[type[ast.cmpop], tuple[str, Callable[[Any, Any], Any]]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}
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
            value = _evaluate(node, _NO_INPUT)
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
            if _emit(node, "x").kind == _Kind.NUMBER:
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
        if isinstance(node, ast.UnaryOp) and type(node.op) not in _UNARY_OPS:
            self.fail("'not' and '~' are not allowed; for a 0/1 mask m use 1 - m", node)
        if isinstance(node, ast.Compare) and any(type(op) not in _COMPARE_OPS for op in node.ops):
            self.fail(f"'is' and 'in' are not allowed; {_OPERATOR_HELP}", node)
        if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY_OPS:
            self.fail(f"this operator is not allowed; {_OPERATOR_HELP}", node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            # A constant, small exponent keeps results bounded: no 9**9**9, no 2**x, no x**1000.
            exp = node.right
            inner = exp.operand if isinstance(exp, ast.UnaryOp) and type(exp.op) in _UNARY_OPS else exp
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
        kinds = [_emit(arg, "x").kind for arg in node.args]
        for i, (arg, kind) in enumerate(zip(node.args, kinds, strict=True)):
            if kind == _Kind.NUMBER and i not in spec.numbers_ok:
                self.fail(f"argument '{spec.params[i]}' of {name}() must depend on x, not be a number", arg)
        if all(kind == _Kind.NUMBER for kind in kinds):
            self.fail(f"{name}() needs an argument that depends on x", node)


def _usage(name: str) -> str:
    return f"{name}({', '.join(FUNCTIONS[name].params)})"


def _parse(source: str) -> ast.Expression:
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


def _evaluate(node: ast.expr, x: Tensor) -> Any:
    return _EVALUATORS[type(node)](node, x)


def _evaluate_compare(node: ast.Compare, x: Tensor) -> Any:
    values = [_evaluate(n, x) for n in (node.left, *node.comparators)]
    result: Any = None
    for op, a, b in zip(node.ops, values, values[1:], strict=False):
        pair = _COMPARE_OPS[type(op)][1](a, b)
        result = pair if result is None else result & pair
    return result.to(x.dtype) if isinstance(result, Tensor) else result


_EVALUATORS: Final[Mapping[type[ast.expr], Callable[[Any, Tensor], Any]]] = {
    ast.Constant: lambda node, x: node.value,
    ast.Name: lambda node, x: x if node.id == "x" else CONSTANTS[node.id],
    ast.UnaryOp: lambda node, x: _UNARY_OPS[type(node.op)][1](_evaluate(node.operand, x)),
    ast.BinOp: lambda n, x: _BINARY_OPS[type(n.op)][2](_evaluate(n.left, x), _evaluate(n.right, x)),
    ast.Compare: _evaluate_compare,
    ast.Call: lambda node, x: FUNCTIONS[node.func.id].apply(*(_evaluate(a, x) for a in node.args)),
}


def _emit(node: ast.expr, var: str) -> _Code:
    if isinstance(node, ast.Constant):
        return _Code(repr(node.value), _ATOM, _Kind.NUMBER)
    if isinstance(node, ast.Name):
        if node.id == "x":
            return _Code(var, _ATOM, _Kind.FULL)
        return _Code(repr(CONSTANTS[node.id]), _ATOM, _Kind.NUMBER)
    if isinstance(node, ast.UnaryOp):
        operand = _emit(node.operand, var)
        return _Code(_UNARY_OPS[type(node.op)][0] + _wrap(operand, _UNARY), _UNARY, operand.kind)
    if isinstance(node, ast.BinOp):
        symbol, prec, _ = _BINARY_OPS[type(node.op)]
        left, right = _emit(node.left, var), _emit(node.right, var)
        if prec == _POW:  # right-associative, and a unary exponent (x ** -2) needs no brackets
            text = f"{_wrap(left, _ATOM)} ** {_wrap(right, _UNARY)}"
        else:
            text = f"{_wrap(left, prec)} {symbol} {_wrap(right, prec + 1)}"
        return _Code(text, prec, max(left.kind, right.kind))
    if isinstance(node, ast.Compare):
        parts = [_emit(n, var) for n in (node.left, *node.comparators)]
        kind = max(p.kind for p in parts)
        symbols = [_COMPARE_OPS[type(op)][0] for op in node.ops]
        if kind == _Kind.NUMBER:
            chain = " ".join(f"{s} {_wrap(p, _ADD)}" for s, p in zip(symbols, parts[1:], strict=True))
            return _Code(f"{_wrap(parts[0], _ADD)} {chain}", _CMP, kind)
        pairs = [
            f"{_wrap(a, _ADD)} {s} {_wrap(b, _ADD)}"
            for s, a, b in zip(symbols, parts, parts[1:], strict=False)
        ]
        mask = pairs[0] if len(pairs) == 1 else " & ".join(f"({p})" for p in pairs)
        return _Code(f"({mask}).to({var}.dtype)", _ATOM, kind, mask)
    spec = FUNCTIONS[cast(ast.Name, cast(ast.Call, node).func).id]
    args = [_emit(a, var) for a in cast(ast.Call, node).args]
    return _Code(spec.emit(args, var), _ATOM, _Kind.REDUCED if spec.reduces else max(a.kind for a in args))


@dataclass(frozen=True)
class Expression:
    """A checked Lambda expression. The constructor parses and checks `source` (raising ExprError)."""

    source: str
    tree: ast.Expression = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tree", _parse(self.source))

    def __reduce__(self) -> tuple[Any, ...]:
        # DataLoader workers pickle transforms: only the source travels and is checked again on arrival.
        return (Expression, (self.source,))

    def __call__(self, x: Tensor) -> Tensor:
        if not x.is_floating_point():
            raise ExprError(f"the input must be a floating-point tensor, got {x.dtype}")
        try:
            out = _evaluate(self.tree.body, x)
            if not isinstance(out, Tensor):
                return torch.full_like(x, out)
            return out if out.shape == x.shape else out.expand_as(x)
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
        code = _emit(self.tree.body, var)
        if code.kind == _Kind.NUMBER:
            return f"torch.full_like({var}, {code.text})"
        if code.kind == _Kind.REDUCED:
            return f"{_wrap(code, _ATOM)}.expand_as({var})"
        return code.text


def parse_expression(source: str) -> Expression:
    """Parse and check `source`; raises ExprError naming the offending construct and its column."""
    return Expression(source)
