"""Chinese node titles name one node type each: two types of one title (Normalize and Standardize
were both 标准化) cannot be told apart in the palette, the canvas or an error message."""

from __future__ import annotations

from collections import defaultdict

from dragdl.engine.nodes.i18n import localized_catalog


def test_every_node_type_has_a_chinese_title_of_its_own() -> None:
    by_title: dict[str, list[str]] = defaultdict(list)
    for entry in localized_catalog("zh", downloads=False):
        by_title[entry["title"]].append(entry["type"])
    shared = {title: types for title, types in by_title.items() if len(types) > 1}
    assert not shared, f"node types sharing a Chinese title: {shared}"
