"""The editor's toolbar at 1440 px, the width of a common laptop screen, in English and Chinese.

With the Sweep button shown (a searched param), the buttons kept their labels only above 1500 px
and the graph's name shrank to 'MLP (bre…'. At 1440 px every button's label shows, the name box
keeps room for about twenty characters (a Chinese template's name in full) and nothing in the
toolbar overflows.

Screenshots go to test-artifacts/ui/toolbar-1440-<language>.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .canvas import field, open_editor, select

pytestmark = [pytest.mark.ui]

NAMES = {"en": "MLP regression (penguins_en)", "zh": "多层感知机回归（penguins_zh）"}  # noqa: RUF001
TOOLBAR = """() => {
    const bar = document.querySelector('.toolbar');
    const name = bar.querySelector('.toolbar__name');
    const hidden = [...bar.querySelectorAll('.tool span')]
        .filter((label) => label.textContent && label.getBoundingClientRect().width < 4)
        .map((label) => label.textContent);
    const right = Math.max(...[...bar.children].map((child) => child.getBoundingClientRect().right));
    return {
        hidden,
        nameWidth: name.clientWidth,
        nameFits: name.scrollWidth <= name.clientWidth,
        overflow: right - bar.getBoundingClientRect().right,
    };
}"""


@pytest.mark.parametrize(("page", "language"), [("en", "en"), ("zh", "zh")], indirect=["page"])
def test_at_1440_px_the_toolbar_keeps_its_labels_and_the_graph_name(
    page: Any, language: str, artifacts: Path
) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    page.locator(".toolbar button").filter(has_text=re.compile("Templates|模板")).first.click()
    title = "MLP regression (diabetes)" if language == "en" else "多层感知机回归（糖尿病）"  # noqa: RUF001
    card = page.locator(".templates__card").filter(has=page.get_by_role("heading", name=title, exact=True))
    card.get_by_role("button").click()
    page.locator("dialog").wait_for(state="detached")
    select(page, "train")
    field(page, "lr").locator('[data-action="search-param"]').click()
    expect(page.locator('[data-action="sweep"]')).to_be_visible()
    page.locator(".toolbar__name").fill(NAMES[language])
    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    expect(page.locator(".toolbar .status")).to_have_class(re.compile("status--good"), timeout=30_000)
    top = {"x": 0, "y": 0, "width": 1440, "height": 110}
    page.screenshot(path=artifacts / f"toolbar-1440-{language}.png", clip=top)
    found = page.evaluate(TOOLBAR)
    assert found["hidden"] == [], f"labels collapsed to icons: {found['hidden']}"
    # Room for about twenty characters; a longer name ends in an ellipsis (its tooltip in full).
    assert found["nameWidth"] >= 180, f"graph name box: {found}"
    assert found["nameFits"] or language == "en", f"graph name box: {found}"
    assert found["overflow"] <= 0, f"the toolbar overflows by {found['overflow']} px"
