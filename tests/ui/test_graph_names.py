"""Saving a renamed graph in the browser never replaces a different one: Save asks whether the
renamed canvas is a new graph or a rename, a rename onto another graph's name is refused with that
name (in English and Chinese), and "Save as" keeps the open graph as it was.

Screenshots go to test-artifacts/ui/.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from ..graphs import chain
from .test_monitor_predict import api

pytestmark = pytest.mark.ui


def small_graph(name: str, width: int) -> dict[str, Any]:
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": width}),
        ("train", "train.Classifier", {"epochs": 1}),
    ]
    return chain(name, nodes)


def graphs_by_name(base: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for graph in api(base, "GET", "/api/graphs?limit=200")["data"]:
        found.setdefault(graph["name"], []).append(graph)
    return found


def open_saved(page: Any, name: str, open_label: str) -> None:
    page.get_by_role("button", name=open_label, exact=True).click()
    page.locator(".listing li").filter(has_text=name).get_by_role("button").click()
    page.locator("dialog").wait_for(state="detached")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_renaming_and_save_as_never_replace_another_graph(
    browser: Any, server_url: str, artifacts: Path, language: str
) -> None:
    from playwright.sync_api import expect

    tag = uuid.uuid4().hex[:6]
    species, mass = f"penguins species {tag}", f"penguins mass {tag}"
    kept = api(server_url, "POST", "/api/graphs", {"graph": small_graph(species, 3), "name": species})
    api(server_url, "POST", "/api/graphs", {"graph": small_graph(mass, 7), "name": mass})
    zh = language == "zh"
    words = {
        "save": "保存" if zh else "Save",
        "save_as": "另存为" if zh else "Save as",
        "rename": "重命名并保存" if zh else "Rename and save",
        "taken": f"已有另一个图名为“{species}”" if zh else f"Another graph is already named “{species}”",
        "name": "图名称" if zh else "Graph name",
    }
    context = browser.new_context(viewport={"width": 1440, "height": 900}, base_url=server_url)
    context.add_init_script(f"localStorage.setItem('dragdl.language', '{language}');")
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto("/editor")
        expect(page.locator(".palette__group")).to_have_count(5, timeout=60_000)
        open_saved(page, mass, "打开" if zh else "Open")
        expect(page.get_by_label(words["name"])).to_have_value(mass)

        # Renamed onto the other graph's name: Save asks first, and a rename is refused by name.
        page.get_by_label(words["name"]).fill(species)
        page.get_by_role("button", name=re.compile(rf"^{words['save']} \(Ctrl\+S\)")).click()
        question = page.locator("dialog[open]")
        expect(question).to_contain_text(mass)
        page.screenshot(path=artifacts / f"graph-rename-question-{language}.png")
        question.locator("[data-alternative]").click()
        expect(page.locator(".toast").last).to_contain_text(words["taken"])
        page.screenshot(path=artifacts / f"graph-rename-refused-{language}.png")
        listed = graphs_by_name(server_url)
        assert [g["id"] for g in listed[species]] == [kept["id"]] and len(listed[mass]) == 1
        species_now = api(server_url, "GET", f"/api/graphs/{kept['id']}")
        assert (
            species_now["current_version"] == 1
            and species_now["graph"]["nodes"][2]["params"]["out_features"] == 3
        )

        # Renamed to a new name, "Save as new graph" keeps the graph it was opened from.
        renamed = f"penguins mass v2 {tag}"
        page.get_by_label(words["name"]).fill(renamed)
        page.get_by_role("button", name=re.compile(rf"^{words['save']} \(Ctrl\+S\)")).click()
        page.locator("dialog[open] [data-confirm]").click()
        expect(page.locator(".toast").last).to_contain_text(renamed)
        listed = graphs_by_name(server_url)
        assert len(listed[mass]) == 1 and len(listed[renamed]) == 1 and len(listed[species]) == 1

        # "Save as" under the open graph's own name saves a copy, named as one.
        page.get_by_role("button", name=re.compile(rf"^{words['save_as']}")).click()
        copy = f"{renamed}（副本）" if zh else f"{renamed} (copy)"  # noqa: RUF001
        expect(page.get_by_label(words["name"])).to_have_value(copy)
        listed = graphs_by_name(server_url)
        assert len(listed[copy]) == 1 and len(listed[renamed]) == 1
        page.screenshot(path=artifacts / f"graph-save-as-{language}.png")
    finally:
        context.close()
