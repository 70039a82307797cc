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


def test_chinese_texts_speak_of_images_only_where_the_english_does() -> None:
    """Batch size, validation and test shares read 'images' (图像) in Chinese on a table's train
    node, where the English says samples."""
    from dragdl.engine.nodes.i18n_zh import ZH

    images = ("image", "picture", "photo", "pixel", "bitmap")
    wrong = {
        english: chinese
        for english, chinese in ZH.items()
        if "图像" in chinese and not any(word in english.lower() for word in images)
    }
    assert not wrong, f"Chinese texts naming images the English does not: {wrong}"
