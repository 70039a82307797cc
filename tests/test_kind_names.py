"""No generic code tests for a particular task kind: it asks the kind (engine/tasks/) instead.

Every comparison under src/dragdl with a kind's name ("classification", "regression") or a kind's
target word ("classes", "value") as one side, a `... .target == "..."` test, or `"value" in answer`
fails here naming the file and line. Only the kinds themselves (engine/tasks/), the database
migrations (history) and the translation tables may spell them.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "dragdl"
KIND_WORDS = frozenset({"classification", "regression", "classes", "value"})
EXCLUDED = ("engine/tasks/", "db/migrations/")


def _excluded(path: Path) -> bool:
    relative = path.relative_to(SRC).as_posix()
    return relative.startswith(EXCLUDED) or path.name.startswith("i18n")


def _kind_word(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in KIND_WORDS
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_kind_word(element) for element in node.elts)
    return False


def _is_target(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "target") or (
        isinstance(node, ast.Name) and node.id == "target"
    )


def offending_comparisons(source: str) -> list[tuple[int, str]]:
    """(line, source text) of every comparison that tests a kind by name."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        equality = any(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops)
        strings = [o for o in operands if isinstance(o, ast.Constant) and isinstance(o.value, str)]
        if equality and (
            any(_kind_word(o) for o in operands) or (any(map(_is_target, operands)) and strings)
        ):
            found.append((node.lineno, ast.get_source_segment(source, node) or ""))
    return found


def test_the_scan_finds_each_form_it_forbids() -> None:
    # The test can fail: each forbidden form is caught, and asking the kind is not.
    caught = offending_comparisons(
        'a = kind == "classification"\n'
        'b = task.target != "classes"\n'
        'c = "value" in answer\n'
        'd = model.task in ("regression", "other")\n'
        'e = task.target == VALUE or target == "x"\n'
    )
    assert [line for line, _ in caught] == [1, 2, 3, 4, 5]
    assert offending_comparisons("a = kind.ranks_classes\nb = edge.source == edge.target\n") == []


def test_no_generic_code_compares_a_kind_name() -> None:
    offences = [
        f"{path.relative_to(SRC.parent.parent)}:{line}: {text}"
        for path in sorted(SRC.rglob("*.py"))
        if not _excluded(path)
        for line, text in offending_comparisons(path.read_text(encoding="utf-8"))
    ]
    assert not offences, (
        "ask the task kind (engine/tasks/base.py) instead of testing its name:\n" + "\n".join(offences)
    )
