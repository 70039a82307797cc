"""The task kinds as the catalog serves them (GET /api/catalog's `task_kinds`), in the user's language.

A kind declares its texts in English (`TaskKind.title`, each `MetricSpec.label` and unit); `ZH_TASKS`
maps each to its Chinese one. tests/engine/tasks/test_presentation.py fails on a kind's text missing
here and on an entry no kind uses.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any, Literal

from dragdl.engine.tasks import TaskKind, all_task_kinds

ZH_TASKS: dict[str, str] = {
    "Classification": "分类",
    "Regression": "回归",
    "Accuracy": "准确率",
    "Top-5 accuracy": "前 5 准确率",
    "MAE": "平均绝对误差",
    "RMSE": "均方根误差",
    "R²": "R²",
}


def kind_texts(kind: TaskKind) -> Iterator[str]:
    """The English texts of a kind that users see (what a translation must cover)."""
    yield kind.title
    for spec in kind.metric_specs:
        yield spec.label
        if spec.unit:
            yield spec.unit


def _translate(text: str, lang: Literal["en", "zh"]) -> str:
    return ZH_TASKS.get(text, text) if lang == "zh" else text


@cache
def localized_task_kinds(lang: Literal["en", "zh"]) -> list[dict[str, Any]]:
    """Every registered kind's presentation with its texts in `lang` (computed once per language)."""
    out = []
    for kind in all_task_kinds():
        entry = kind.describe()
        entry["title"] = _translate(entry["title"], lang)
        for metric in entry["metrics"]:
            metric["label"] = _translate(metric["label"], lang)
            if metric["unit"]:
                metric["unit"] = _translate(metric["unit"], lang)
        out.append(entry)
    return out
