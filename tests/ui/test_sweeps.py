"""Sweeps in the web UI, against a real `dragdl serve --no-auth` and headless Chromium.

From the iris logistic-regression template: mark the learning rate as searched in the train node's
property form (a log range), see the node's "Searched" tag and the graph still valid, start a
4-trial sweep two at a time from the Sweep dialog, and follow it on the sweep page until it ends:
the trials table (one row per trial with its learning rate, objective and state, each linked to its
task's monitor), the parallel-coordinates, best-so-far and importance charts drawn with the trials'
data, the best model registered, and the best trial's graph opened in the editor with its values.
The same page in Chinese shows no English besides names and identifiers.

Screenshots of each step go to test-artifacts/ui/sweeps-*.png.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .canvas import field, node, open_editor, open_template, select
from .conftest import VIEWPORT
from .test_i18n import assert_chinese

pytestmark = [pytest.mark.ui, pytest.mark.slow]

SWEEP_TIMEOUT_MS = 420_000


def get_json(base: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base}{path}", timeout=30) as response:
        return json.loads(response.read())


def test_a_sweep_from_the_property_form_to_the_best_graph_in_the_editor(
    page: Any, server_url: str, artifacts: Path, browser: Any
) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Logistic regression (iris)")
    expect(page.locator(".toolbar .status")).to_have_text("Valid", timeout=60_000)
    # No searched param yet: no Sweep button.
    expect(page.locator('[data-action="sweep"]')).to_have_count(0)

    # --- mark the learning rate as searched, on a log scale --------------------------------------
    select(page, "train")
    lr = field(page, "lr")
    lr.locator('[data-action="search-param"]').click()
    expect(lr.locator('[data-action="search-param"]')).to_have_attribute("aria-pressed", "true")
    low, high = lr.locator(".search__input").nth(0), lr.locator(".search__input").nth(1)
    low.fill("0.001")
    high.fill("0.3")
    expect(lr.locator(".search__log input")).to_be_checked()
    expect(node(page, "train").locator(".dnode__tag--search")).to_have_text("Searched")
    expect(page.locator(".toolbar .status")).to_have_text("Valid", timeout=30_000)
    # An empty range is refused in the form and, by the server, named on the field.
    high.fill("0.0001")
    expect(lr.locator(".search .field__error")).to_be_visible()
    expect(lr.locator(".field__error").filter(has_text="must be below high (0.0001)").first).to_be_visible(
        timeout=30_000
    )
    high.fill("0.3")
    expect(page.locator(".toolbar .status")).to_have_text("Valid", timeout=30_000)
    page.screenshot(path=artifacts / "sweeps-01-searched-param.png")

    # --- the Sweep dialog ----------------------------------------------------------------------------
    page.locator('[data-action="sweep"]').click()
    dialog = page.locator("dialog[open]")
    # The searched param by its node and title (its id in the tooltip).
    expect(dialog.locator('[data-param="train.lr"]')).to_have_text("train · Learning rate")
    dialog.locator('[data-field="trials"]').fill("4")
    dialog.locator('[data-field="parallel"]').fill("2")
    expect(dialog.locator('[data-field="objective"]')).to_have_value("val_accuracy")
    dialog.locator('[data-field="sampler"]').select_option("random")
    expect(dialog.locator('[data-field="pruner"]')).to_have_value("median")
    page.screenshot(path=artifacts / "sweeps-02-dialog.png")
    dialog.locator('[data-action="start-sweep"]').click()
    expect(page).to_have_url(re.compile(r"/sweeps/[^/]+$"), timeout=60_000)
    sweep_id = page.url.rstrip("/").rsplit("/", 1)[-1]

    # --- the sweep page, live until the sweep ends ---------------------------------------------------
    sweep_page = page.locator(".sweep-page")
    expect(sweep_page).to_have_attribute("data-status", "RUNNING")
    page.locator('.trials-table tbody tr[data-state="RUNNING"]').first.wait_for(timeout=120_000)
    page.screenshot(path=artifacts / "sweeps-03-running.png")
    expect(sweep_page).to_have_attribute("data-status", "SUCCEEDED", timeout=SWEEP_TIMEOUT_MS)

    detail = get_json(server_url, f"/api/sweeps/{sweep_id}")
    trials = detail["trial_list"]
    assert len(trials) == 4
    rows = page.locator(".trials-table tbody tr")
    expect(rows).to_have_count(4)
    for trial in trials:
        row = page.locator(f'.trials-table tbody tr[data-trial="{trial["number"]}"]')
        expect(row).to_have_attribute("data-state", trial["state"])
        assert trial["state"] in ("COMPLETE", "PRUNED")
        assert 0.001 <= trial["params"]["train.lr"] <= 0.3
        expect(row.locator('[data-action="trial-task"]')).to_have_attribute(
            "href", f"/tasks/{trial['task_id']}"
        )
    best = next(t for t in trials if t["number"] == detail["best_trial"])
    expect(page.locator(".trials-table tr.is-best")).to_have_attribute("data-trial", str(best["number"]))
    expect(page.locator(".sweep-stat__value[data-best]")).to_have_text(f"{best['value'] * 100:.2f}%")

    # The charts are drawn, with one mark per trial that has a value.
    with_values = sum(t["value"] is not None for t in trials)
    complete = sum(t["state"] == "COMPLETE" for t in trials)
    expect(page.locator(".sweep-parallel")).to_have_attribute("data-points", str(with_values))
    expect(page.locator(".sweep-best")).to_have_attribute("data-points", str(complete))
    page.locator(".sweep-parallel canvas").wait_for()
    page.locator(".sweep-best canvas").wait_for()
    if detail["importance"]:
        expect(page.locator(".sweep-importance")).to_have_attribute(
            "data-points", str(len(detail["importance"]))
        )
        page.locator(".sweep-importance canvas").wait_for()
    page.screenshot(path=artifacts / "sweeps-04-finished.png")
    page.locator(".trials-table").scroll_into_view_if_needed()
    page.screenshot(path=artifacts / "sweeps-04-trials.png")

    # The list shows it finished.
    page.get_by_role("link", name="All sweeps").click()
    listed = page.locator(f'.sweeps-table tr[data-sweep="{sweep_id}"]')
    expect(listed).to_have_attribute("data-status", "SUCCEEDED")
    expect(listed).to_contain_text("4 of 4 trials")
    listed.get_by_role("link").click()

    # --- register the best model, then open the best graph in the editor ------------------------------
    expect(page.locator('.trials-table th[data-param="train.lr"]')).to_contain_text("Learning rate")
    page.locator('[data-action="register-best"]').click()
    expect(page.locator(".toast").filter(has_text="The best model is registered as")).to_be_visible()
    models = get_json(server_url, "/api/models")
    registered = next(model for model in models["data"] if model["task_id"] == best["task_id"])
    assert registered["name"] == f"{detail['name']} (best of sweep)"
    # Registered once: the button gives way to a link to the model.
    expect(page.locator('[data-action="register-best"]')).to_have_count(0)
    expect(page.locator('[data-action="registered-best"]')).to_have_attribute(
        "href", f"/models/{registered['id']}"
    )

    page.locator('[data-action="open-best"]').click()
    confirm = page.locator("dialog[open] [data-confirm]")
    if confirm.count():
        confirm.click()
    expect(page).to_have_url(re.compile(r"/editor$"))
    node(page, "train").wait_for()
    expect(page.get_by_label("Graph name")).to_have_value(
        f"{detail['name']} (best: trial {best['number'] + 1})"
    )
    select(page, "train")
    value = float(field(page, "lr").locator("input").first.input_value())
    assert value == pytest.approx(best["params"]["train.lr"], rel=1e-6)
    # The best graph is concrete: nothing is searched any more.
    expect(node(page, "train").locator(".dnode__tag--search")).to_have_count(0)
    page.screenshot(path=artifacts / "sweeps-05-best-in-editor.png")

    # --- the models page lists the registered best alone; the other trials' on asking ------------------
    # A trial whose task ran to its end leaves a model; a pruned one stopped before its end leaves
    # none (how many are pruned, and when, depends on the epochs' timing on a busy machine).
    trial_tasks = {t["task_id"] for t in trials}
    finished = [t for t in trials if t["task_status"] == "SUCCEEDED"]
    trial_models = [
        m for m in get_json(server_url, "/api/models?trials=true")["data"] if m["task_id"] in trial_tasks
    ]
    assert len(trial_models) == len(finished) >= 2
    hidden = len(trial_models) - 1  # all but the registered best
    page.goto("/models")
    page.locator(".models-table").wait_for()

    def row_of(model: dict[str, Any]) -> Any:
        return page.locator(f'.models-table tbody tr[data-model="{model["id"]}"]')

    for model in trial_models:
        expect(row_of(model)).to_have_count(1 if model["task_id"] == best["task_id"] else 0)
    toggle = page.locator(".models-trials")
    expect(toggle).to_have_text(f"Show {hidden} model{'' if hidden == 1 else 's'} of sweep trials")
    toggle.locator("input").check()
    for model in trial_models:
        expect(row_of(model)).to_have_count(1)
    expect(toggle).to_have_text("Showing the models of sweep trials")
    page.screenshot(path=artifacts / "sweeps-06-models.png")

    # --- the sweep page in Chinese ---------------------------------------------------------------------
    context = browser.new_context(viewport=VIEWPORT, base_url=server_url, locale="zh-CN")
    context.add_init_script("localStorage.setItem('dragdl.language', 'zh');")
    zh = context.new_page()
    try:
        zh.goto(f"/sweeps/{sweep_id}")
        zh.locator(".sweep-page .sweep-parallel canvas").wait_for()
        assert_chinese(zh, "the sweep page", user_data=(detail["name"],))
        zh.screenshot(path=artifacts / "sweeps-07-zh.png")
        zh.goto("/sweeps")
        zh.locator(".sweeps-table").wait_for()
        assert_chinese(zh, "the sweeps list", user_data=(detail["name"],))
    finally:
        context.close()
