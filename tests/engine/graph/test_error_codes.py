"""Every validation error code and parameter error type has a template in each web UI language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dragdl.engine.graph.param_messages import TEMPLATE_TYPES
from dragdl.engine.nodes.registry import CATEGORIES

ROOT = Path(__file__).resolve().parents[3]
CODE_PATTERNS = (
    re.compile(r'code="(\w+)"'),
    re.compile(r'NodeError\(\s*"(\w+)"'),
    re.compile(r'code: str = "(\w+)"'),
    re.compile(r'_code: ClassVar\[str\] = "(\w+)"'),  # a task kind's validation code
)


def _codes_in_source() -> set[str]:
    codes: set[str] = set()
    for path in (ROOT / "src" / "dragdl").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for pattern in CODE_PATTERNS:
            codes.update(pattern.findall(text))
    # structure.py builds these two from the category of the one-per-graph nodes.
    one_per_graph = ("dataset", "train")
    codes.update(f"{prefix}_{category}" for prefix in ("missing", "multiple") for category in one_per_graph)
    return codes


def _template_keys(language: str, group: str) -> set[str]:
    text = (ROOT / "frontend" / "src" / "i18n" / f"{language}.ts").read_text(encoding="utf-8")
    block = text[text.index("  graphError: {") :]
    start = block.index(f"    {group}: {{")
    body = block[start : block.index("\n    },", start)]
    return set(re.findall(r"^      (\w+):", body, flags=re.MULTILINE))


def test_source_codes_are_found() -> None:
    codes = _codes_in_source()
    assert {"param_invalid", "shape_mismatch", "missing_input", "dataset_invalid", "cycle"} <= codes
    assert all(category in CATEGORIES for category in ("dataset", "train"))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_error_code_has_a_template(language: str) -> None:
    missing = sorted(_codes_in_source() - _template_keys(language, "code"))
    assert missing == []


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_parameter_error_type_has_a_template(language: str) -> None:
    assert sorted(TEMPLATE_TYPES - _template_keys(language, "param")) == []


FAILURE_PATTERNS = (
    re.compile(r'"code": "(\w+)"'),
    re.compile(r'code, node_id(?:, message)? = "(\w+)"'),
    re.compile(r'code = "(\w+)"'),
    re.compile(r'TrainError\(\s*"(\w+)"'),
    re.compile(r'code="(\w+)"'),
    re.compile(r'super\(\).__init__\(\s*"(\w+)"'),  # an EngineError subclass naming its code
)


def _failure_codes() -> set[str]:
    codes: set[str] = {"graph_invalid", "dataset_invalid"}  # worker.py: from GraphInvalid, DatasetError
    source = ROOT / "src" / "dragdl"
    paths = [*(source / "runner").rglob("*.py"), *(source / "engine" / "train").rglob("*.py")]
    # A layer's run-time error (network/module.py) ends a task too.
    for path in [*paths, source / "engine" / "network" / "module.py"]:
        text = path.read_text(encoding="utf-8")
        for pattern in FAILURE_PATTERNS:
            codes.update(pattern.findall(text))
    return codes


def test_every_task_failure_code_has_a_message() -> None:
    text = (ROOT / "frontend" / "src" / "features" / "tasks" / "messages.ts").read_text(encoding="utf-8")
    for start in (text.index("const en"), text.index("const zh")):
        block = text[text.index("    failure: {", start) :]
        keys = set(re.findall(r"^      (\w+):", block[: block.index("\n    },")], flags=re.MULTILINE))
        codes = _failure_codes()
        assert {"worker_lost", "out_of_memory", "layer_failed"} <= codes
        assert sorted(codes - keys) == []
