"""Tables in the web UI, against a real `dragdl serve --no-auth` and headless Chromium.

From a shipped template to a prediction: open the linear-regression template on scikit-learn's
diabetes table, see its table shapes on the edges and the table's summary, train it, read R² on the
monitor and its predicted-vs-actual scatter and residual histogram, then predict one row typed into
the form generated from the model's columns and a CSV of rows (results table and download). The
iris logistic regression does the same for a classifier: the confusion matrix, then a row whose
class the form answers.

Screenshots of each step go to test-artifacts/ui/tabular-*.png.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.ui, pytest.mark.slow]

VIEWPORT = {"width": 1440, "height": 900}
TRAIN_TIMEOUT_MS = 240_000


@pytest.fixture
def page(browser: Any, server_url: str, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT, base_url=server_url, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    problems: list[str] = []

    def on_console(message: Any) -> None:
        # A refused prediction is an answer the page shows (checked below), not a page error.
        if message.type == "error" and "status of 400" not in message.text:
            problems.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        page.screenshot(path=artifacts / f"failed-{request.node.name}.png")
    context.close()
    assert not problems, f"the browser console reported errors: {problems}"


def open_template(page: Any, name: str) -> None:
    from playwright.sync_api import expect

    page.goto("/editor")
    expect(page.locator(".palette__group")).to_have_count(5, timeout=60_000)
    page.get_by_role("button", name="Templates").first.click()
    card = page.locator(".templates__card").filter(has=page.locator("h3", has_text=name))
    card.get_by_role("button").click()
    # A canvas that holds a graph asks before the template replaces it.
    page.wait_for_timeout(300)
    confirm = page.locator("dialog[open] button.btn--primary, dialog[open] button.btn--danger-solid")
    if confirm.count():
        confirm.last.click()
    expect(page.locator(".toolbar .status")).to_have_text("Valid", timeout=30_000)


def train(page: Any) -> None:
    from playwright.sync_api import expect

    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    page.locator('[data-action="train"]').click()
    dialog = page.locator("dialog[open]")
    dialog.locator('[data-action="start-training"]').click()
    expect(page).to_have_url(re.compile(r"/tasks/[^/]+$"), timeout=60_000)
    expect(page.locator(".monitor")).to_have_attribute("data-status", "SUCCEEDED", timeout=TRAIN_TIMEOUT_MS)


def chart_points(page: Any, chart: str) -> int:
    return int(page.locator(f'[data-chart="{chart}"] .echart').get_attribute("data-points") or 0)


def kpi(page: Any, name: str) -> str:
    return str(page.locator(f'[data-kpi="{name}"] .kpi__value').first.inner_text())


def diabetes_csv(path: Path, rows: int) -> list[dict[str, str]]:
    """The first rows of scikit-learn's diabetes table without its target, as a user's CSV."""
    from sklearn.datasets import load_diabetes

    frame = load_diabetes(as_frame=True).frame.drop(columns=["target"]).head(rows)
    frame.to_csv(path, index=False)
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_linear_regression_from_the_template_to_predicted_rows(
    page: Any, artifacts: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    open_template(page, "Linear regression (diabetes)")
    # Table shapes on the edges, and the table's summary with its numeric target.
    expect(page.locator(".dedge__label").filter(has_text="10 features").first).to_be_visible()
    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    summary = page.locator(".props__dataset")
    expect(summary).to_contain_text("442 rows · 10 columns (10 numbers, 0 categories)")
    expect(summary).to_contain_text("Target: progression (a number per row)")
    page.screenshot(path=artifacts / "tabular-01-template.png")

    train(page)
    # The regression curves replace accuracy: MAE, RMSE and R², train and validation.
    for chart in ("loss", "mae", "rmse", "r2"):
        assert chart_points(page, chart) > 0, f"no points on the {chart} chart"
    expect(page.locator('[data-chart="accuracy"]')).to_have_count(0)
    r2 = float(kpi(page, "test-r2"))
    # Issue 10's goal for this template on a held-out 20%: R² >= 0.38.
    assert r2 >= 0.38, f"test R² {r2}"
    page.screenshot(path=artifacts / "tabular-02-curves.png")

    page.get_by_role("tab", name="Results").click()
    page.locator('[data-chart="scatter"] canvas').first.wait_for()
    page.locator('[data-chart="residuals"] canvas').first.wait_for()
    assert chart_points(page, "scatter") > 0
    assert float(kpi(page, "test-r2")) == pytest.approx(r2, abs=1e-3)
    assert float(kpi(page, "test-mae")) > 0
    page.screenshot(path=artifacts / "tabular-03-results.png")

    # --- one row from the form, then a CSV of rows ---------------------------------------------------
    page.locator('[data-action="predict"]').click()
    form = page.locator('form[data-form="row"]')
    form.wait_for()
    expect(form.locator(".field")).to_have_count(10)
    rows = diabetes_csv(tmp_path / "diabetes.csv", 120)
    form.locator('[data-column="bmi"] input').fill("fat")
    form.locator('[data-action="predict-row"]').click()
    expect(form.locator('[data-column="bmi"] .field__error')).to_be_visible()
    for name, value in rows[0].items():
        form.locator(f'[data-column="{name}"] input').fill(value)
    form.locator('[data-action="predict-row"]').click()
    answer = page.locator('[data-answer="value"] .answer__value')
    answer.wait_for()
    single = float(answer.get_attribute("data-value") or "nan")
    # Diabetes progression runs from 25 to 346; a fitted linear model stays near that range.
    assert math.isfinite(single) and 0 < single < 400, f"predicted {single}"
    page.screenshot(path=artifacts / "tabular-04-predict-row.png")

    page.set_input_files('input[data-input="file"]', str(tmp_path / "diabetes.csv"))
    batch = page.locator('[data-batch="done"]')
    batch.wait_for(timeout=60_000)
    expect(batch.locator('[data-rows="120"]')).to_be_visible()
    expect(batch.locator('[data-table="predictions"] tbody tr')).to_have_count(100)
    # The file's first row is the row typed in: the same answer.
    first = batch.locator('[data-table="predictions"] tbody tr').first.locator("td.is-answer").first
    assert float(first.inner_text()) == pytest.approx(single, rel=1e-3)
    batch.screenshot(path=artifacts / "tabular-05-predict-csv.png")
    with page.expect_download() as download:
        batch.locator('[data-action="download-predictions"]').click()
    saved = tmp_path / "predictions.csv"
    download.value.save_as(saved)
    with saved.open(newline="") as handle:
        written = list(csv.DictReader(handle))
    assert len(written) == 120
    assert written[0]["bmi"] == rows[0]["bmi"]
    assert float(written[0]["predicted_progression"]) == pytest.approx(single, rel=1e-3)


def test_logistic_regression_confusion_matrix_and_a_predicted_class(page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    open_template(page, "Logistic regression (iris)")
    expect(page.locator(".dedge__label").filter(has_text="4 features").first).to_be_visible()
    train(page)
    assert chart_points(page, "accuracy") > 0
    assert kpi(page, "test-accuracy").endswith("%")
    page.get_by_role("tab", name="Results").click()
    page.locator('[data-chart="confusion"] canvas').first.wait_for()
    expect(page.locator(".per-class tbody tr")).to_have_count(3)
    page.screenshot(path=artifacts / "tabular-06-iris-results.png")

    page.locator('[data-action="predict"]').click()
    form = page.locator('form[data-form="row"]')
    form.wait_for()
    # A textbook setosa: short, narrow petals.
    values = {
        "sepal length (cm)": "5.1",
        "sepal width (cm)": "3.5",
        "petal length (cm)": "1.4",
        "petal width (cm)": "0.2",
    }
    for name, value in values.items():
        form.locator(f'[data-column="{name}"] input').fill(value)
    form.locator('[data-action="predict-row"]').click()
    label = page.locator('[data-answer="class"] .answer__value')
    label.wait_for()
    assert label.get_attribute("data-label") == "setosa"
    page.screenshot(path=artifacts / "tabular-07-iris-predict.png")
