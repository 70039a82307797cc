"""The import layering of docs/architecture.md section 1, checked on every import statement.

Every `import` and `from ... import` in src/dragdl is read with `ast`: at module level, inside
functions (the lazy imports that keep start-up fast) and under `if TYPE_CHECKING:`, since a
type-only import is still a dependency a reader must follow. `__import__("...")` and
`import_module("...")` with a literal name count too. A violation names the file, the line, the
importing module, the imported one and the rule it breaks.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src"

ENGINE_ORDER = (
    "errors",
    "files",
    "graph",
    "payloads",
    "models",
    "data",
    "inputs",
    "network",
    "tasks",
    "train",
    "nodes",
    "sweep",
    "analysis",
    "compile",
    "bundle",
    "run",
)
"""The engine's packages (and bottom modules), lowest first: each may import only those before it."""

FORBIDDEN = {
    "dragdl.engine": ("dragdl.server", "dragdl.runner", "dragdl.client", "dragdl.cli"),
    "dragdl.runner": ("dragdl.server",),
    "dragdl.db": ("dragdl.server", "dragdl.runner"),
}
"""Importer -> what no module under it may import (a name and everything below it)."""

_DYNAMIC = {"__import__", "import_module"}


@dataclass(frozen=True)
class Import:
    file: Path
    line: int
    importer: str
    """The importing module's dotted name."""
    imported: str
    """The imported module's dotted name (the submodule, for `from package import submodule`)."""

    def where(self, root: Path) -> str:
        return f"{self.file.relative_to(root)}:{self.line}: {self.importer} imports {self.imported}"


def _module_name(path: Path, source: Path) -> str:
    parts = list(path.relative_to(source).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of a (possibly relative) `from` import's module."""
    if level == 0:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def scan(source: Path, package: str = "dragdl") -> list[Import]:
    """Every import of a `package` module by a module of `package` under `source`."""
    paths = sorted((source / package).rglob("*.py"))
    modules = {_module_name(path, source) for path in paths}
    found: list[Import] = []
    for path in paths:
        importer = _module_name(path, source)
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(importer, is_package, node.level, node.module)
                # `from pkg import sub` imports the submodule pkg.sub; `from mod import name`, mod.
                subs = [f"{base}.{alias.name}" for alias in node.names]
                names = [sub if sub in modules else base for sub in subs]
            elif isinstance(node, ast.Call) and node.args:
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                first = node.args[0]
                if called in _DYNAMIC and isinstance(first, ast.Constant) and isinstance(first.value, str):
                    names = [first.value]
            for name in dict.fromkeys(names):
                if name == package or name.startswith(f"{package}."):
                    found.append(Import(path, node.lineno, importer, name))
    return found


def _engine_package(module: str, engine: str) -> str | None:
    """The engine package (or bottom module) a module belongs to; None outside the engine or for
    the engine's own __init__."""
    if not module.startswith(f"{engine}."):
        return None
    return module[len(engine) + 1 :].split(".")[0]


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(f"{prefix}.")


def check(source: Path, package: str = "dragdl", order: tuple[str, ...] = ENGINE_ORDER) -> list[str]:
    """Every violation of the layering, one line each."""
    engine = f"{package}.engine"
    forbidden = {
        importer.replace("dragdl", package, 1): tuple(p.replace("dragdl", package, 1) for p in banned)
        for importer, banned in FORBIDDEN.items()
    }
    rank = {name: index for index, name in enumerate(order)}
    problems: list[str] = []
    edges: dict[tuple[str, str], Import] = {}
    for item in scan(source, package):
        where = item.where(source)
        for importer_area, banned in forbidden.items():
            if _under(item.importer, importer_area):
                problems += [
                    f"{where}: {importer_area} must not import {prefix}"
                    for prefix in banned
                    if _under(item.imported, prefix)
                ]
        low, high = _engine_package(item.imported, engine), _engine_package(item.importer, engine)
        if low is None or high is None or low == high:
            continue
        edges.setdefault((high, low), item)
        unknown = [name for name in (high, low) if name not in rank]
        if unknown:
            problems.append(
                f"{where}: engine package {', '.join(unknown)} is not in the layer order "
                f"({' < '.join(order)}); place it there and in docs/architecture.md section 1"
            )
        elif rank[low] > rank[high]:
            problems.append(
                f"{where}: engine layering: {high} may import only packages below it, and {low} is above "
                f"({' < '.join(order)})"
            )
    problems += _cycles(edges, source)
    return problems


def _cycles(edges: dict[tuple[str, str], Import], source: Path) -> list[str]:
    """Each group of engine packages that import each other in a circle, with one statement per
    import between them (Tarjan's strongly connected components)."""
    graph: dict[str, list[str]] = defaultdict(list)
    for high, low in sorted(edges):
        graph[high].append(low)
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = lowlink[node] = len(index)
        stack.append(node)
        for target in graph.get(node, []):
            if target not in index:
                visit(target)
                lowlink[node] = min(lowlink[node], lowlink[target])
            elif target in stack:
                lowlink[node] = min(lowlink[node], index[target])
        if lowlink[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    problems = []
    for component in components:
        inside = [(pair, item) for pair, item in sorted(edges.items()) if set(pair) <= set(component)]
        statements = "; ".join(f"{high} -> {low} at {item.where(source)}" for (high, low), item in inside)
        problems.append(f"import cycle between engine packages {', '.join(component)}: {statements}")
    return problems


# --- the project --------------------------------------------------------------------------------


def test_the_engine_runner_and_db_follow_the_layers() -> None:
    problems = check(SOURCE)
    assert problems == [], "\n".join(problems)


def test_the_scan_sees_lazy_and_type_only_imports() -> None:
    imports = {(i.importer, i.imported) for i in scan(SOURCE)}
    # A function-level import (cli.py imports the engine on first use) and a TYPE_CHECKING one.
    assert ("dragdl.cli", "dragdl.engine.analysis.validate") in imports
    assert ("dragdl.engine.bundle", "dragdl.engine.bundle.bundle") in imports


def test_the_architecture_document_states_the_same_order() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## 1.") : text.index("## 2.")]
    stated = re.search(r"^\s*(errors\s*<.*)$", section, flags=re.MULTILINE)
    assert stated is not None, "docs/architecture.md section 1 does not state the engine's order"
    assert tuple(name.strip() for name in stated.group(1).split("<")) == ENGINE_ORDER


# --- the checker fails where it should ----------------------------------------------------------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A small tree with one import of each forbidden kind."""
    _write(
        tmp_path,
        {
            "dragdl/__init__.py": "",
            "dragdl/engine/__init__.py": "",
            "dragdl/engine/errors.py": "import os\n",
            "dragdl/engine/graph/__init__.py": "",
            "dragdl/engine/graph/spec.py": "from dragdl.engine.errors import EngineError\n",
            "dragdl/engine/models/__init__.py": "",
            # models -> data is upward, and with data -> models below a cycle.
            "dragdl/engine/models/weights.py": (
                "from __future__ import annotations\n\n\ndef load() -> None:\n"
                "    from dragdl.engine.data.base import DataContext\n"
            ),
            "dragdl/engine/data/__init__.py": "",
            "dragdl/engine/data/base.py": "from dragdl.engine.models import weights\n",
            # A type-only import from the bottom to the top.
            "dragdl/engine/files.py": (
                "from typing import TYPE_CHECKING\n\n"
                "if TYPE_CHECKING:\n    from dragdl.engine.run import launch\n"
            ),
            "dragdl/engine/run/__init__.py": "",
            "dragdl/engine/run/launch.py": "from ..graph import spec\n",  # relative, and allowed
            "dragdl/engine/extras/__init__.py": "from dragdl.engine.graph.spec import Graph\n",
            "dragdl/engine/nodes/__init__.py": "__import__('dragdl.client.api')\n",
            "dragdl/runner/__init__.py": "",
            "dragdl/runner/worker.py": "import dragdl.server.app\n",
            "dragdl/db/__init__.py": "",
            "dragdl/db/session.py": "from dragdl.runner import worker\n",
            "dragdl/server/__init__.py": "",
            "dragdl/server/app.py": "from dragdl.runner import worker\nfrom dragdl.engine import run\n",
            "dragdl/client/__init__.py": "",
            "dragdl/client/api.py": "",
        },
    )
    return tmp_path


def test_a_planted_cycle_and_wrong_direction_imports_are_all_reported(planted: Path) -> None:
    order = ("errors", "files", "graph", "models", "data", "nodes", "run")
    problems = check(planted, order=order)
    text = "\n".join(problems)
    expected = [
        # Upward, inside a function, named by file, line, importer, imported and rule.
        "dragdl/engine/models/weights.py:5: dragdl.engine.models.weights imports dragdl.engine.data.base: "
        "engine layering: models may import only packages below it, and data is above",
        # Upward under TYPE_CHECKING.
        "dragdl/engine/files.py:4: dragdl.engine.files imports dragdl.engine.run.launch: engine layering: "
        "files may import only packages below it, and run is above",
        "dragdl/engine/extras/__init__.py:1: dragdl.engine.extras imports dragdl.engine.graph.spec: "
        "engine package extras is not in the layer order",
        "dragdl/engine/nodes/__init__.py:1: dragdl.engine.nodes imports dragdl.client.api: "
        "dragdl.engine must not import dragdl.client",
        "dragdl/runner/worker.py:1: dragdl.runner.worker imports dragdl.server.app: "
        "dragdl.runner must not import dragdl.server",
        "dragdl/db/session.py:1: dragdl.db.session imports dragdl.runner.worker: "
        "dragdl.db must not import dragdl.runner",
        "import cycle between engine packages data, models: "
        "data -> models at dragdl/engine/data/base.py:1: dragdl.engine.data.base imports "
        "dragdl.engine.models.weights; models -> data at dragdl/engine/models/weights.py:5",
    ]
    for line in expected:
        assert line in text, f"not reported: {line}\n--- reported:\n{text}"
    assert len(problems) == len(expected), text
    # Allowed imports stay quiet: downward (run -> graph, relative), and the server importing anything.
    assert "launch.py" not in text and "server/app.py" not in text


def test_a_cycle_of_three_packages_is_reported_with_each_import(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "dragdl/engine/a/__init__.py": "from dragdl.engine.b import x\n",
            "dragdl/engine/b/__init__.py": "from dragdl.engine.c import y\n",
            "dragdl/engine/c/__init__.py": "def f() -> None:\n    import dragdl.engine.a\n",
        },
    )
    problems = check(tmp_path, order=("a", "b", "c"))
    cycles = [p for p in problems if p.startswith("import cycle")]
    assert len(cycles) == 1
    assert cycles[0].startswith("import cycle between engine packages a, b, c: a -> b at ")
    assert "c -> a at dragdl/engine/c/__init__.py:2: dragdl.engine.c imports dragdl.engine.a" in cycles[0]
