# ruff: noqa: RUF001  (Chinese punctuation is intended)
"""The catalog in Chinese: every visible text is translated, and every parameter has a real title."""

from __future__ import annotations

import re

from dragdl.engine.nodes.i18n import CHOICE_LABELS, choice_label, localized_catalog, visible_texts
from dragdl.engine.nodes.i18n_zh import ZH
from dragdl.engine.nodes.registry import all_node_types, catalog

LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def test_every_visible_catalog_text_has_a_chinese_entry() -> None:
    missing = [
        (entry["type"], text) for entry in catalog() for text in visible_texts(entry) if text not in ZH
    ]
    assert missing == []


def test_no_chinese_entry_is_stale() -> None:
    used = {text for entry in catalog() for text in visible_texts(entry)}
    assert sorted(set(ZH) - used) == []
    values = {
        value
        for entry in catalog()
        for prop in entry["params_schema"].get("properties", {}).values()
        for schema in (prop, *prop.get("anyOf", []))
        for value in (*schema.get("enum", []), *([schema["const"]] if "const" in schema else []))
    }
    assert sorted(set(CHOICE_LABELS) - values) == []


def test_every_parameter_declares_its_title() -> None:
    # Without one, Pydantic titles a field by its capitalised name ("Lr", "Amp").
    untitled = [
        f"{kind.type}.{name}"
        for kind in all_node_types()
        for name, field in kind.params_model.model_fields.items()
        if not field.title
    ]
    assert untitled == []


def test_chinese_catalog_carries_translated_texts_and_choice_labels() -> None:
    zh = {entry["type"]: entry for entry in localized_catalog("zh")}
    train = zh["train.Classifier"]
    props = train["params_schema"]["properties"]
    assert train["title"] == "训练分类器"
    assert props["lr"]["title"] == "学习率"
    assert props["optimizer"]["x-enum-labels"] == ["SGD", "Adam", "AdamW"]
    assert props["schedule"]["x-enum-labels"][0] == "无（保持不变）"
    assert zh["layer.Conv2d"]["inputs"][0]["label"] == "输入"
    en = {entry["type"]: entry for entry in localized_catalog("en")}
    assert en["train.Classifier"]["params_schema"]["properties"]["precision"]["title"] == "Precision"
    assert (
        en["train.Classifier"]["params_schema"]["properties"]["schedule"]["x-enum-labels"][3] == "One-cycle"
    )
    # The cached copies are separate from the registry's own schema.
    assert "x-enum-labels" not in catalog()[0]["params_schema"].get("properties", {}).get("name", {})


def test_choice_labels_of_values_without_a_label_are_the_values() -> None:
    assert choice_label(3) == "3"
    assert choice_label("sgd") == "SGD"
