"""Lay out generated statements the way `ruff format` (black style) would, without running it.

Exported scripts must come out formatted, and they are built from expression strings that node
types return (`nn.Conv2d(1, 16, kernel_size=3, padding='same')`). This module re-renders such an
expression from its syntax tree (double quotes, black's spacing, the power operator hugging simple
operands) and splits a statement that is too long at its brackets: first the whole bracket
content on one indented line, else one item per line with a trailing comma, recursively.
That is the subset of black's right-hand split that generated code needs. Import lines are merged
and ordered as isort writes them (`ordered_imports`).
"""

from __future__ import annotations

import ast

WIDTH = 88
"""ruff format's default line length: the script is formatted for a reader's default settings."""
_STEP = 4

_BINARY: dict[type[ast.operator], tuple[str, int]] = {
    ast.BitOr: ("|", 7),
    ast.BitXor: ("^", 8),
    ast.BitAnd: ("&", 9),
    ast.LShift: ("<<", 10),
    ast.RShift: (">>", 10),
    ast.Add: ("+", 11),
    ast.Sub: ("-", 11),
    ast.Mult: ("*", 12),
    ast.Div: ("/", 12),
    ast.FloorDiv: ("//", 12),
    ast.Mod: ("%", 12),
    ast.MatMult: ("@", 12),
    ast.Pow: ("**", 14),
}
_UNARY: dict[type[ast.unaryop], str] = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not "}
_COMPARE: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
_ATOM = 16
_UNARY_PRECEDENCE = 13
_COMPARE_PRECEDENCE = 6


def _precedence(node: ast.expr) -> int:
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)][1]
    if isinstance(node, ast.UnaryOp):
        return 5 if isinstance(node.op, ast.Not) else _UNARY_PRECEDENCE
    if isinstance(node, ast.Compare):
        return _COMPARE_PRECEDENCE
    if isinstance(node, ast.BoolOp):
        return 4 if isinstance(node.op, ast.And) else 3
    if isinstance(node, ast.IfExp):
        return 2
    if isinstance(node, ast.Lambda):
        return 1
    if isinstance(node, ast.NamedExpr):
        return 0
    return _ATOM


def string_literal(value: str) -> str:
    """A string literal with double quotes unless that needs more escapes (ruff's preference)."""
    text = repr(value)
    if text.startswith('"'):
        return text  # holds a ' and no ": repr already chose double quotes
    body = text[1:-1].replace("\\'", "'")
    if '"' in body and "'" not in value:
        return text  # double quotes would need escapes that single quotes avoid
    return '"' + body.replace('"', '\\"') + '"'


def _wrap(node: ast.expr, minimum: int) -> str:
    text = flat(node)
    return f"({text})" if _precedence(node) < minimum else text


def _is_simple_power_operand(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return _is_simple_power_operand(node.operand)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.Attribute):
        return _is_simple_power_operand(node.value) and not isinstance(node.value, ast.Constant)
    return isinstance(node, ast.Name)


def _binary(node: ast.BinOp) -> str:
    symbol, prec = _BINARY[type(node.op)]
    if isinstance(node.op, ast.Pow):
        # Right-associative; a unary operand on the right needs no brackets (x ** -2).
        left, right = _wrap(node.left, prec + 1), _wrap(node.right, _UNARY_PRECEDENCE)
        if _is_simple_power_operand(node.left) and _is_simple_power_operand(node.right):
            return f"{left}**{right}"
        return f"{left} ** {right}"
    return f"{_wrap(node.left, prec)} {symbol} {_wrap(node.right, prec + 1)}"


def _argument(node: ast.expr | ast.keyword) -> str:
    if isinstance(node, ast.keyword):
        return f"{node.arg}={flat(node.value)}" if node.arg else f"**{flat(node.value)}"
    return flat(node)


def flat(node: ast.expr) -> str:
    """One-line source of an expression, spaced and quoted as ruff format writes it."""
    if isinstance(node, ast.Constant):
        return string_literal(node.value) if isinstance(node.value, str) else repr(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _wrap(node.value, _ATOM)
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
            base = f"({base})"
        return f"{base}.{node.attr}"
    if isinstance(node, ast.Call):
        items: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
        return f"{_wrap(node.func, _ATOM)}({', '.join(_argument(item) for item in items)})"
    if isinstance(node, ast.Starred):
        return f"*{_wrap(node.value, _ATOM)}"
    if isinstance(node, ast.List):
        return "[" + ", ".join(flat(e) for e in node.elts) + "]"
    if isinstance(node, ast.Set):
        return "{" + ", ".join(flat(e) for e in node.elts) + "}"
    if isinstance(node, ast.Tuple):
        inner = ", ".join(flat(e) for e in node.elts)
        return f"({inner},)" if len(node.elts) == 1 else f"({inner})"
    if isinstance(node, ast.Dict):
        pairs = [
            f"{flat(k)}: {flat(v)}" if k is not None else f"**{flat(v)}"
            for k, v in zip(node.keys, node.values, strict=True)
        ]
        return "{" + ", ".join(pairs) + "}"
    if isinstance(node, ast.BinOp):
        return _binary(node)
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)] + _wrap(node.operand, _precedence(node))
    if isinstance(node, ast.Compare):
        parts = [_wrap(node.left, _COMPARE_PRECEDENCE + 1)]
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts.append(f"{_COMPARE[type(op)]} {_wrap(right, _COMPARE_PRECEDENCE + 1)}")
        return " ".join(parts)
    if isinstance(node, ast.BoolOp):
        word = " and " if isinstance(node.op, ast.And) else " or "
        return word.join(_wrap(value, _precedence(node) + 1) for value in node.values)
    if isinstance(node, ast.IfExp):
        return f"{_wrap(node.body, 3)} if {_wrap(node.test, 3)} else {_wrap(node.orelse, 2)}"
    if isinstance(node, ast.Lambda):
        params = ast.unparse(node.args)
        return f"lambda {params}: {flat(node.body)}" if params else f"lambda: {flat(node.body)}"
    return ast.unparse(node)


def expression(source: str) -> str:
    """Re-render an expression string on one line (quotes and spacing as ruff format writes them)."""
    return flat(ast.parse(source.strip(), mode="eval").body)


def _bracketed(node: ast.expr) -> tuple[str, list[tuple[str, ast.expr]], str, bool] | None:
    """(opening, items as (prefix, value), closing, one-tuple) of a bracketed expression."""
    if isinstance(node, ast.Call):
        items: list[tuple[str, ast.expr]] = [("", arg) for arg in node.args]
        items += [(f"{kw.arg}=" if kw.arg else "**", kw.value) for kw in node.keywords]
        return f"{_wrap(node.func, _ATOM)}(", items, ")", False
    if isinstance(node, ast.List):
        return "[", [("", e) for e in node.elts], "]", False
    if isinstance(node, ast.Tuple):
        return "(", [("", e) for e in node.elts], ")", len(node.elts) == 1
    if isinstance(node, ast.Set):
        return "{", [("", e) for e in node.elts], "}", False
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return (
            "{",
            [(f"{flat(k)}: ", v) for k, v in zip(node.keys, node.values, strict=True) if k],
            "}",
            False,
        )
    return None


def layout(node: ast.expr, head: str, tail: str, indent: int) -> list[str]:
    """Lines of `head + node + tail` at `indent` spaces, split at brackets when too long."""
    pad = " " * indent
    line = f"{pad}{head}{flat(node)}{tail}"
    parts = _bracketed(node)
    if len(line) <= WIDTH or parts is None or (not parts[1] and not parts[3]):
        return [line]
    opening, items, closing, one_tuple = parts
    inner = indent + _STEP
    body = " " * inner + ", ".join(prefix + flat(value) for prefix, value in items)
    body += "," if one_tuple else ""
    lines = [f"{pad}{head}{opening}"]
    if len(body) <= WIDTH:
        lines.append(body)
    elif len(items) == 1 and not one_tuple:
        lines.extend(layout(items[0][1], items[0][0], "", inner))
    else:
        for prefix, value in items:
            lines.extend(layout(value, prefix, ",", inner))
    lines.append(f"{pad}{closing}{tail}")
    return lines


def statement(head: str, source: str, indent: int = 0, tail: str = "") -> str:
    """`head + source + tail` (one expression, e.g. `self.conv1 = ` + a codegen string), formatted."""
    return "\n".join(layout(ast.parse(source.strip(), mode="eval").body, head, tail, indent))


def reflow(source: str, indent: int) -> str:
    """Indent hand-written lines by `indent` spaces; simple statements now too long are split.

    Dataset nodes write their `load_dataset()` body by hand; only lines holding user values (paths,
    category lists) can outgrow the width, and those are single assignments, calls or returns.
    """
    out: list[str] = []
    for raw in source.strip("\n").splitlines():
        if not raw.strip():
            out.append("")
            continue
        lead = len(raw) - len(raw.lstrip(" "))
        line = " " * indent + raw
        if len(line) > WIDTH:
            split = _split_simple(raw.strip(), indent + lead)
            if split is not None and all(len(part) <= WIDTH for part in split.splitlines()):
                line = split
        out.append(line)
    return "\n".join(out)


def _split_simple(text: str, indent: int) -> str | None:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = ast.get_source_segment(text, stmt.targets[0])
        return statement(f"{target} = ", flat(stmt.value), indent) if target else None
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        return statement("return ", flat(stmt.value), indent)
    if isinstance(stmt, ast.Expr):
        return statement("", flat(stmt.value), indent)
    return None


def ordered_imports(lines: set[str]) -> list[str]:
    """Import lines in isort's order: plain imports, then from-imports, each by module name."""
    return sorted(_merged(lines), key=lambda s: (s.startswith("from"), s.split()[1].lower(), s))


def _merged(lines: set[str]) -> set[str]:
    """One `from <module> import ...` line per module, as isort writes it: a carried module's
    `from torch import Tensor, nn` and the script's `from torch import nn` become one line, names in
    isort's order (constants, classes, then the rest)."""
    names: dict[str, set[str]] = {}
    merged = set()
    for line in lines:
        if not line.startswith("from "):
            merged.add(line)
            continue
        module, listed = line.removeprefix("from ").split(" import ", 1)
        names.setdefault(module, set()).update(name.strip() for name in listed.split(","))
    for module, imported in names.items():
        merged.add(f"from {module} import {', '.join(sorted(imported, key=_isort_name))}")
    return merged


def _isort_name(name: str) -> tuple[int, str]:
    bare = name.split(" as ")[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return kind, bare
