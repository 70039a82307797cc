"""What each task kind declares for clients: metric descriptors, the headline, the answer's schema
and summary, and the texts the catalog translates."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import torch

from dragdl.engine.nodes.i18n_tasks import ZH_TASKS, kind_texts, localized_task_kinds
from dragdl.engine.tasks import TaskKind, all_task_kinds, get_task_kind
from dragdl.engine.tasks.base import MetricSpec

KINDS = all_task_kinds()


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_answer_matches_its_kind_schema_and_summarizes_in_one_line(kind: TaskKind) -> None:
    outputs = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.25]])
    if not kind.ranks_classes:
        outputs = outputs[:, 2:]
    answers = kind.answer(outputs, ["cat", "dog", "owl"], top=2)
    assert len(answers) == 2
    for answer in answers:
        jsonschema.validate(answer, kind.answer_schema)
        line = kind.summarize(answer)
        assert line and "\n" not in line


def test_summaries_read_as_the_cli_prints_them() -> None:
    classifier, regressor = get_task_kind("classification"), get_task_kind("regression")
    answer = classifier.answer(torch.tensor([[0.0, 8.0]]), ["cat", "dog"], top=1)[0]
    assert classifier.summarize(answer) == f"dog {answer['probability']:.1%}"
    assert regressor.summarize({"value": 3.25}) == "3.25"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_direction_follows_the_descriptors(kind: TaskKind) -> None:
    # better() and higher_is_better derive from the MetricSpecs: one source of truth.
    for spec in kind.metric_specs:
        assert (spec.key in kind.higher_is_better) is spec.higher_is_better
        assert kind.better(f"val_{spec.key}", 2.0, 1.0) is spec.higher_is_better
        assert kind.better(f"test_{spec.key}", 1.0, 2.0) is not spec.higher_is_better
    assert kind.better("val_loss", 1.0, 2.0)
    assert kind.headline in {spec.key for spec in kind.metric_specs}
    assert set(kind.metrics) <= {spec.key for spec in kind.metric_specs}


def test_running_metrics_report_exactly_the_described_metrics() -> None:
    for kind, classes in (
        (get_task_kind("classification"), [str(i) for i in range(10)]),
        (get_task_kind("regression"), []),
    ):
        running = kind.running(torch.device("cpu"), classes)
        width = len(classes) or 1
        targets = torch.zeros(4, dtype=torch.int64) if classes else torch.zeros(4)
        running.add(torch.tensor(0.5), torch.randn(4, width), {"target": targets})
        reported = set(running.values()) - {"loss"}
        assert reported == {spec.key for spec in kind.metric_specs}, kind.name


def test_a_headline_that_names_no_metric_is_refused_when_the_kind_is_defined() -> None:
    with pytest.raises(TypeError, match="headline 'f1'"):

        class _Broken(TaskKind):  # defining it is the test
            name = "broken"
            metric_specs = (MetricSpec("accuracy", "Accuracy", "percent", higher_is_better=True),)
            headline = "f1"


def test_every_kind_text_has_a_chinese_translation_and_none_is_left_over() -> None:
    used = {text for kind in KINDS for text in kind_texts(kind)}
    missing = sorted(used - set(ZH_TASKS))
    assert not missing, f"add Chinese texts to nodes/i18n_tasks.py ZH_TASKS: {missing}"
    assert not sorted(set(ZH_TASKS) - used), "ZH_TASKS entries no kind uses"


def test_localized_kinds_differ_only_in_their_texts() -> None:
    en: list[dict[str, Any]] = localized_task_kinds("en")
    zh: list[dict[str, Any]] = localized_task_kinds("zh")
    assert [k["name"] for k in en] == [k["name"] for k in zh] == [k.name for k in KINDS]
    for english, chinese in zip(en, zh, strict=True):
        assert chinese["title"] == ZH_TASKS[english["title"]]
        assert [m["key"] for m in english["metrics"]] == [m["key"] for m in chinese["metrics"]]
        assert english["answer_schema"] == chinese["answer_schema"]
        assert english["headline"] == chinese["headline"]
