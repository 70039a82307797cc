"""The task kind chooses its script blocks: compile/ tests no kind, and a third kind registered with
one `register_task_blocks` line exports with its own blocks, or is refused on its train node."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.engine.compile.test_codegen import ctx_for, digits_graph, example

from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.compile.codegen_classification import CLASSIFICATION
from dragdl.engine.compile.codegen_regression import REGRESSION
from dragdl.engine.compile.codegen_tasks import BLOCKS, TaskBlocks, register_task_blocks
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.nodes import registry as nodes
from dragdl.engine.nodes.base import TrainNode
from dragdl.engine.tasks import all_task_kinds, get_task_kind
from dragdl.engine.tasks import registry as kinds
from dragdl.engine.tasks.registry import register_task_kind
from dragdl.engine.tasks.regression import Regression
from dragdl.engine.tasks.settings import RegressionConfig

COMPILE = Path(__file__).resolve().parents[3] / "src" / "dragdl" / "engine" / "compile"


def kind_vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    """(the registered kinds' names and target words, their classes and train params' classes)."""
    words = {kind.name for kind in all_task_kinds()} | {kind.target for kind in all_task_kinds()}
    classes = {type(kind).__name__ for kind in all_task_kinds()}
    classes |= {n.params_model.__name__ for n in nodes.all_node_types() if isinstance(n, TrainNode)}
    return frozenset(words), frozenset(classes)


def kind_tests(source: str) -> list[tuple[int, str]]:
    """(line, text) of every place that tells kinds apart: an isinstance/issubclass of a kind's
    class or of its train params' class, an attribute or variable named after a kind
    (`writer.regression`), a comparison with a kind's name or target word."""
    words, classes = kind_vocabulary()
    names = {kind.name for kind in all_task_kinds()}
    found: list[tuple[int, str]] = []

    def add(node: ast.AST) -> None:
        found.append((getattr(node, "lineno", 0), ast.get_source_segment(source, node) or ""))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                mentioned = {leaf.id for leaf in ast.walk(node.args[1]) if isinstance(leaf, ast.Name)}
                mentioned |= {leaf.attr for leaf in ast.walk(node.args[1]) if isinstance(leaf, ast.Attribute)}
                if mentioned & classes:
                    add(node)
        elif (isinstance(node, ast.Attribute) and node.attr in names) or (
            isinstance(node, ast.Name) and node.id in names
        ):
            add(node)
        elif isinstance(node, ast.Compare):
            constants = [leaf for side in (node.left, *node.comparators) for leaf in ast.walk(side)]
            if any(isinstance(leaf, ast.Constant) and leaf.value in words for leaf in constants):
                add(node)
    return sorted(set(found))


def test_the_scan_finds_the_kind_tests_compile_held() -> None:
    # Lines of codegen.py and codegen_tables.py before the kinds chose their blocks: each is caught.
    old = (
        "assert isinstance(config, TrainConfig | RegressionConfig)\n"
        "self.regression = isinstance(config, RegressionConfig)\n"
        "self.blocks = REGRESSION if self.regression else tpl.CLASSIFICATION\n"
        "if isinstance(c, RegressionConfig):\n    pass\n"
        "if not writer.regression:\n    pass\n"
        'kind = structure.task.name == "classification"\n'
        'word = kind.target in ("value", "other")\n'
        "same = issubclass(type(kind), tasks.Regression)\n"
    )
    assert [line for line, _ in kind_tests(old)] == [1, 2, 2, 3, 4, 6, 8, 9, 10]
    fine = (
        "assert isinstance(config, TrainSettings)\n"
        "blocks = task.script_blocks(BLOCKS)\n"
        "targets = writer.task_targets(TARGET_COLUMN)\n"
        "from dragdl.engine.compile import codegen_regression\n"
        "register_task_blocks(Regression.name, REGRESSION)\n"
    )
    assert kind_tests(fine) == []


def test_no_code_in_compile_tells_task_kinds_apart() -> None:
    """The blocks hold what differs by kind; generic code and the input types' writers ask them."""
    found = [
        f"{path.name}:{line}: {text}"
        for path in sorted(COMPILE.glob("*.py"))
        for line, text in kind_tests(path.read_text(encoding="utf-8"))
    ]
    assert not found, "take it from the kind's TaskBlocks (codegen_tasks.py):\n" + "\n".join(found)


def test_each_built_in_kind_chooses_its_registered_blocks() -> None:
    assert get_task_kind("classification").script_blocks(BLOCKS) is CLASSIFICATION
    assert get_task_kind("regression").script_blocks(BLOCKS) is REGRESSION
    with pytest.raises(ValueError, match="'regression' already has script blocks"):
        register_task_blocks("regression", dataclasses.replace(REGRESSION))
    assert register_task_blocks("regression", REGRESSION) is REGRESSION  # the same again: no change


class Rounded(Regression):
    """A third kind for these tests: regression under another name (its blocks are the test's)."""

    name: ClassVar[str] = "rounded"
    title: ClassVar[str] = "Rounded regression"


class RoundedTrainer(TrainNode[RegressionConfig]):
    type = "train.Rounded"
    title = "Train rounded"
    description = "A third task kind's train node (tests only)."
    params_model = RegressionConfig
    task: ClassVar = Rounded()


@pytest.fixture
def third_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[Rounded]:
    """The kind and its train node in the registries for one test (taken out afterwards)."""
    kind = register_task_kind(Rounded())
    nodes.get_node_type("train.Classifier")  # the catalog loaded before one node is added
    monkeypatch.setitem(nodes._REGISTRY, RoundedTrainer.type, RoundedTrainer())
    yield kind
    kinds._KINDS.pop(kind.name)
    BLOCKS.pop(kind.name, None)


def rounded(graph: dict[str, Any]) -> dict[str, Any]:
    for item in graph["nodes"]:
        if item["type"].startswith("train."):
            item["type"] = RoundedTrainer.type
            item["params"].pop("label_smoothing", None)
    return graph


def test_a_kind_without_blocks_is_refused_on_its_train_node(third_kind: Rounded, tmp_path: Path) -> None:
    with pytest.raises(GraphInvalid) as caught:
        generate_script(rounded(digits_graph()), ctx_for(tmp_path))
    (error,) = caught.value.errors
    assert (error.code, error.node_id) == ("codegen_unsupported", "train")
    assert "Rounded regression (rounded) cannot be exported as a training script" in error.message


def test_a_registered_kind_writes_its_own_blocks(third_kind: Rounded, tmp_path: Path) -> None:
    blocks = dataclasses.replace(
        REGRESSION, figure="rounded figures", targets={}, output_scaling=" * self.target_std"
    )
    register_task_blocks(third_kind.name, blocks)  # the one line a kind's blocks module adds
    graph = rounded(digits_graph())
    script = generate_script(graph, ctx_for(tmp_path))
    assert "on the CPU it reaches the same rounded figures." in script
    assert "        return x * self.target_std\n" in script
    as_regression = script.replace("rounded figures", "test MAE, RMSE and R²").replace(
        "x * self.target_std\n", "x * self.target_std + self.target_mean\n"
    )
    for item in graph["nodes"]:
        if item["id"] == "train":
            item["type"] = "train.Regressor"
    assert as_regression == generate_script(graph, ctx_for(tmp_path))

    # Its blocks hold no lines for a table's target column: refused on the train node, naming the
    # kind and the form.
    with pytest.raises(GraphInvalid) as caught:
        generate_script(rounded(example("linear_regression_diabetes")), ctx_for(tmp_path))
    (error,) = caught.value.errors
    assert (error.code, error.node_id) == ("codegen_unsupported", "train")
    assert "the rounded regression kind has no script lines for targets given as column" in error.message


def test_blocks_are_checked_to_be_task_blocks(third_kind: Rounded, tmp_path: Path) -> None:
    BLOCKS[third_kind.name] = "not blocks"  # type: ignore[assignment]
    with pytest.raises(TypeError, match="task kind rounded: script blocks must be TaskBlocks"):
        generate_script(rounded(digits_graph()), ctx_for(tmp_path))
    assert isinstance(REGRESSION, TaskBlocks)
