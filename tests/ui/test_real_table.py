"""A table as people's tables are, from upload to predictions, with no step outside the web UI.

Issue 19 followed a new user through a public penguin-measurements table: text columns (island,
sex), "NA" for missing values and two rows without a target. This test makes a table with those
traits and takes it through the app, in English and in Chinese: upload it on the datasets page,
open a table template and put the upload in it with "Use in editor", choose the target from the
table's columns, insert the preparation validation asks for (fill missing, one-hot) with its one
button, train a classifier of species and a regressor of body mass, then predict a CSV batch that
has "NA" cells on the model page.

Screenshots of each step go to test-artifacts/ui/real-table-<language>-*.png.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .canvas import field, open_editor

pytestmark = [pytest.mark.ui, pytest.mark.slow]

TRAIN_TIMEOUT_MS = 240_000
COLUMNS = ["species", "island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
# Per species: its islands, and the means of bill length, bill depth, flipper length and mass.
SPECIES = {
    "Adelie": (["Torgersen", "Biscoe", "Dream"], (38.8, 18.3, 190.0, 3700.0)),
    "Chinstrap": (["Dream"], (48.8, 18.4, 196.0, 3730.0)),
    "Gentoo": (["Biscoe"], (47.5, 15.0, 217.0, 5080.0)),
}
# Templates per language: the classifier and the regressor the table goes into.
TEMPLATES = {
    "en": ("MLP (breast cancer)", "MLP regression (diabetes)"),
    "zh": ("多层感知机（乳腺癌）", "多层感知机回归（糖尿病）"),  # noqa: RUF001
}


def penguin_rows(count: int, seed: int) -> list[dict[str, str]]:
    """Penguin-like rows: measurements that tell the species apart, and a mass that follows the
    species and sex; a few "NA" cells in the features, as the public table has."""
    rng = np.random.default_rng(seed)
    rows = []
    names = list(SPECIES)
    for i in range(count):
        species = names[i % 3]
        islands, (bill, depth, flipper, mass) = SPECIES[species]
        sex = ("male", "female")[int(rng.integers(2))]
        heavier = 1 if sex == "male" else -1
        row = {
            "species": species,
            "island": islands[int(rng.integers(len(islands)))],
            "bill_length_mm": f"{bill + rng.normal(0, 2.5) + heavier:.1f}",
            "bill_depth_mm": f"{depth + rng.normal(0, 0.8) + 0.5 * heavier:.1f}",
            "flipper_length_mm": f"{flipper + rng.normal(0, 5) + 2 * heavier:.0f}",
            "body_mass_g": f"{mass + rng.normal(0, 250) + 300 * heavier:.0f}",
            "sex": sex,
        }
        if i % 17 == 5:
            row["sex"] = "NA"
        if i % 29 == 11:
            row["bill_depth_mm"] = "NA"
        rows.append(row)
    return rows


def write_table(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def penguins(path: Path) -> Path:
    """240 rows; two have no species (empty), two no body mass ("NA", like the public table's two
    unmeasured birds, whose measurements are all NA)."""
    rows = penguin_rows(240, seed=3)
    for i in (3, 130):
        rows[i]["species"] = ""
    for i in (40, 200):
        for name in ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"):
            rows[i][name] = "NA"
    return write_table(path, rows)


def upload(page: Any, path: Path, artifacts: Path, shot: str) -> None:
    from playwright.sync_api import expect

    page.goto("/datasets")
    page.set_input_files('input[data-input="dataset-files"]', str(path))
    page.locator('[data-action="upload"]').click()
    row = page.locator("tr", has=page.get_by_role("button", name=path.stem, exact=True))
    expect(row.locator("td.num").first).to_have_text("240", timeout=60_000)
    page.locator(".dataset-preview").wait_for(timeout=60_000)
    page.screenshot(path=artifacts / f"{shot}-01-uploaded.png", full_page=True)


def table_into_template(page: Any, template: str, dataset: str) -> None:
    """Open the template in the editor, then "Use in editor" on the upload: its Table node becomes
    the graph's dataset node."""
    from playwright.sync_api import expect

    open_editor(page)
    page.locator(".toolbar button").filter(has_text=re.compile("Templates|模板")).first.click()
    card = page.locator(".templates__card").filter(has=page.get_by_role("heading", name=template, exact=True))
    card.get_by_role("button").click()
    # A canvas that holds a graph asks before the template replaces it.
    confirm = page.locator("dialog[open] [data-confirm]")
    page.wait_for_function(
        "() => document.querySelector('dialog[open] [data-confirm]')"
        " || !document.querySelector('dialog[open] .templates__card')"
    )
    if confirm.count():
        confirm.click()
    page.locator("dialog").wait_for(state="detached")
    page.goto("/datasets")
    row = page.locator("tr", has=page.get_by_role("button", name=dataset, exact=True))
    row.locator('[data-action="use-in-editor"]').click()
    page.locator("dialog[open] button.btn--primary").last.click()
    expect(page).to_have_url(re.compile(r"/editor$"))
    expect(page.locator(".react-flow__node")).not_to_have_count(0)


def choose_target(page: Any, column: str, left_out: str) -> None:
    """Choose the target from the table's columns; the dataset summary names the rows without one."""
    from playwright.sync_api import expect

    data = page.locator('.react-flow__node[data-id^="dataset.table"], .react-flow__node[data-id="data"]')
    data.first.locator(".dnode__header").click()
    select = field(page, "target").locator('select[data-input="target-select"]')
    # The choices are the table's columns, read by validation.
    expect(select.locator("option", has_text="body_mass_g")).to_have_count(1, timeout=30_000)
    select.select_option(column)
    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    expect(page.locator(".props__dataset")).to_contain_text(left_out, timeout=30_000)


def prepare(page: Any) -> None:
    """The one-click preparation Problems offers for text columns and missing values."""
    from playwright.sync_api import expect

    expect(page.locator(".problems__message[data-code='text_feature']").first).to_be_attached(timeout=30_000)
    toggle = page.locator(".problems__toggle")
    if toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
    page.locator(".problems__fix button").click()
    expect(page.locator(".toolbar .status")).to_have_class(re.compile("status--good"), timeout=30_000)


def set_epochs(page: Any, epochs: int) -> None:
    train_node = page.locator('.react-flow__node[data-id="train"]')
    train_node.locator(".dnode__header").click()
    field(page, "epochs").locator("input").fill(str(epochs))
    field(page, "epochs").locator("input").press("Tab")


def train(page: Any) -> None:
    from playwright.sync_api import expect

    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    page.locator('[data-action="train"]').click()
    page.locator("dialog[open]").locator('[data-action="start-training"]').click()
    expect(page).to_have_url(re.compile(r"/tasks/[^/]+$"), timeout=60_000)
    expect(page.locator(".monitor")).to_have_attribute("data-status", "SUCCEEDED", timeout=TRAIN_TIMEOUT_MS)


def batch(page: Any, path: Path, name: str) -> list[str]:
    """Predict the CSV batch on the model page (the model named `name`); the answers."""
    from playwright.sync_api import expect

    page.locator('[data-action="predict"]').click()
    page.locator('form[data-form="row"]').wait_for()
    expect(page.locator("h1")).to_have_text(name)
    page.set_input_files('input[data-input="file"]', str(path))
    done = page.locator('[data-batch="done"]')
    done.wait_for(timeout=60_000)
    rows = done.locator('[data-table="predictions"] tbody tr')
    expect(rows).to_have_count(9)
    return [rows.nth(i).locator("td.is-answer").first.inner_text().strip() for i in range(9)]


def asked(path: Path, unknown: str) -> tuple[Path, list[dict[str, str]]]:
    """Nine new birds, three of each species, with "NA" cells; the `unknown` column left empty."""
    rows = penguin_rows(9, seed=11)
    for i in (0, 4):
        rows[i]["sex"] = "NA"
    rows[7]["bill_depth_mm"] = "NA"
    truth = [dict(row) for row in rows]
    for row in rows:
        row[unknown] = ""
    return write_table(path, rows), truth


@pytest.mark.parametrize(("page", "language"), [("en", "en"), ("zh", "zh")], indirect=["page"])
def test_a_penguin_table_from_upload_to_a_classifier_a_regressor_and_batch_predictions(
    page: Any, language: str, artifacts: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    shot = f"real-table-{language}"
    table = penguins(tmp_path / f"penguins_{language}.csv")
    upload(page, table, artifacts, shot)

    # --- the classifier of species -------------------------------------------------------------------
    classifier, regressor = TEMPLATES[language]
    table_into_template(page, classifier, table.stem)
    choose_target(page, "species", "4, 131")
    page.screenshot(path=artifacts / f"{shot}-02-target.png")
    prepare(page)
    set_epochs(page, 20)
    # The template's name names the table it now reads.
    expect(page.locator(".toolbar__name")).to_have_value(re.compile(rf"{table.stem}[)）]$"))  # noqa: RUF001
    page.screenshot(path=artifacts / f"{shot}-03-prepared.png")
    train(page)
    accuracy = float(page.locator('[data-kpi="test-accuracy"] .kpi__value').first.inner_text().rstrip("%"))
    assert accuracy >= 85, f"test accuracy {accuracy}%"
    page.screenshot(path=artifacts / f"{shot}-04-classifier.png")
    name = page.locator("h1").first.inner_text()
    assert table.stem in name, f"the task is named {name!r}"
    new_birds, truth = asked(tmp_path / "new-birds.csv", "species")
    labels = batch(page, new_birds, name)
    right = sum(label == row["species"] for label, row in zip(labels, truth, strict=True))
    assert right >= 7, f"{right} of 9 birds' species answered right: {labels}"
    page.screenshot(path=artifacts / f"{shot}-05-classifier-batch.png", full_page=True)

    # --- the regressor of body mass ------------------------------------------------------------------
    table_into_template(page, regressor, table.stem)
    choose_target(page, "body_mass_g", "41, 201")
    prepare(page)
    set_epochs(page, 60)
    page.screenshot(path=artifacts / f"{shot}-06-regressor-prepared.png")
    train(page)
    r2 = float(page.locator('[data-kpi="test-r2"] .kpi__value').first.inner_text())
    assert r2 >= 0.6, f"test R² {r2}"
    page.screenshot(path=artifacts / f"{shot}-07-regressor.png")
    name = page.locator("h1").first.inner_text()
    weighed, truth = asked(tmp_path / "birds-to-weigh.csv", "body_mass_g")
    masses = [float(mass) for mass in batch(page, weighed, name)]
    for mass, row in zip(masses, truth, strict=True):
        assert abs(mass - float(row["body_mass_g"])) < 900, f"predicted {mass} g for {row}"
    page.screenshot(path=artifacts / f"{shot}-08-regressor-batch.png", full_page=True)


@pytest.mark.parametrize(("page", "language"), [("en", "en"), ("zh", "zh")], indirect=["page"])
def test_use_in_editor_on_a_table_opens_a_graph_that_trains(
    page: Any, language: str, artifacts: Path, tmp_path: Path
) -> None:
    """Issue 19 review: "Use in editor" on an uploaded table, nothing open in the editor, placed the
    table node alone ("the graph needs a train node"). It opens a starter graph now: the table with
    its last column (sex, a category) as target, the preparation, Linear 64, ReLU, Linear auto and
    a classifier, valid and trained without a change."""
    from playwright.sync_api import expect

    shot = f"table-starter-{language}"
    table = penguins(tmp_path / f"starter_{language}.csv")
    upload(page, table, artifacts, shot)
    row = page.locator("tr", has=page.get_by_role("button", name=table.stem, exact=True))
    row.locator('[data-action="use-in-editor"]').click()
    expect(page).to_have_url(re.compile(r"/editor$"))
    nodes = page.locator(".react-flow__node")
    expect(nodes).to_have_count(8, timeout=30_000)
    kinds = [nodes.nth(i).get_attribute("data-id") for i in range(8)]
    assert kinds == [
        "table-1",
        "impute-1",
        "standardize-1",
        "onehot-1",
        "linear-1",
        "relu-1",
        "linear-2",
        "classifier-1",
    ], kinds
    expect(page.locator(".toolbar__name")).to_have_value(table.stem)
    expect(page.locator(".toolbar .status")).to_have_class(re.compile("status--good"), timeout=60_000)
    # Left to right, in one row.
    xs = [nodes.nth(i).bounding_box()["x"] for i in range(8)]
    assert xs == sorted(xs) and len(set(xs)) == 8, xs
    page.screenshot(path=artifacts / f"{shot}-02-editor.png")
    train(page)
    accuracy = float(page.locator('[data-kpi="test-accuracy"] .kpi__value').first.inner_text().rstrip("%"))
    assert accuracy > 50, f"test accuracy {accuracy}%"
    page.screenshot(path=artifacts / f"{shot}-03-trained.png")
