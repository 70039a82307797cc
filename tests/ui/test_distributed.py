"""A distributed run from the editor, against a real `dragdl serve --no-auth` (embedded Ray) and
headless Chromium: the iris logistic regression's train node set to 2 workers, trained, and its
monitor naming the two workers (ranks, node, processes) once Ray Train has started them.

Screenshots go to test-artifacts/ui/distributed-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .canvas import field, open_editor, open_template, select

pytestmark = [pytest.mark.ui, pytest.mark.slow]

TRAIN_TIMEOUT_MS = 300_000


def test_two_workers_set_on_the_train_node_are_listed_on_the_monitor(page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Logistic regression (iris)")
    status = page.locator(".toolbar .status")
    expect(status).to_have_text("Valid", timeout=60_000)
    select(page, "train")
    workers = field(page, "workers")
    expect(workers).to_contain_text("Workers")
    workers.locator("input").fill("2")
    expect(status).to_have_text("Valid", timeout=30_000)
    page.screenshot(path=artifacts / "distributed-editor.png")

    page.keyboard.press("Control+Enter")
    dialog = page.locator("dialog[open]")
    dialog.locator('[data-action="start-training"]').click()
    expect(page).to_have_url(re.compile(r"/tasks/[^/]+$"), timeout=60_000)
    monitor = page.locator(".monitor")
    expect(monitor).to_have_attribute("data-status", "SUCCEEDED", timeout=TRAIN_TIMEOUT_MS)
    # One machine: both workers on its one node.
    expect(page.locator(".monitor__meta")).to_contain_text("2 workers on 1 node")
    page.screenshot(path=artifacts / "distributed-monitor.png")

    page.get_by_role("tab", name="Settings").click()
    listed = page.locator('[data-fact="workers"]')
    expect(listed).to_contain_text("rank 0: node")
    expect(listed).to_contain_text("rank 1: node")
    expect(page.locator('[data-fact="workers"] dd')).to_contain_text("pid")
    page.screenshot(path=artifacts / "distributed-config.png")
