"""Sequences in the web UI, against a real `dragdl serve --no-auth` and headless Chromium.

Two uploaded .ts files go from the datasets page to a prediction: equal-length univariate series
(sine against square waves) and unequal-length multivariate series (rising against falling traces
of three sensors). Each is previewed (small line plots per class), put into the 1-D CNN template in
the editor (its edges read 'T x F seq'), trained from the canvas (curves, test accuracy, confusion
matrix), and predicted from the model page with a .ts file: each sequence's series plotted beside
its answer. The second set runs in Chinese.

Screenshots of each step go to test-artifacts/ui/sequences-*.png.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ..engine.data.sequence_samples import write_ts

pytestmark = [pytest.mark.ui, pytest.mark.slow]

VIEWPORT = {"width": 1440, "height": 900}
TRAIN_TIMEOUT_MS = 240_000
TIMES = "\N{MULTIPLICATION SIGN}"
"""How the canvas joins the dimensions of a shape (prettyShape in the web UI)."""


def waves(count: int, length: int, seed: int) -> tuple[list[np.ndarray], list[str]]:
    """Univariate sine and square waves of random frequency and phase, with noise: (T, 1) each."""
    rng = np.random.default_rng(seed)
    series, labels = [], []
    for i in range(count):
        label = ("sine", "square")[i % 2]
        t = np.arange(length) / length
        phase = np.sin(2 * np.pi * rng.uniform(2, 4) * t + rng.uniform(0, 2 * np.pi))
        wave = phase if label == "sine" else np.sign(phase)
        series.append(np.round(wave + rng.normal(0, 0.1, length), 4).astype(np.float32)[:, None])
        labels.append(label)
    return series, labels


def traces(count: int, seed: int) -> tuple[list[np.ndarray], list[str]]:
    """Three noisy sensors rising or falling together, 24 to 60 steps each: (T_i, 3)."""
    rng = np.random.default_rng(seed)
    series, labels = [], []
    for i in range(count):
        label = ("up", "down")[i % 2]
        length = int(rng.integers(24, 61))
        slope = (1 if label == "up" else -1) * np.linspace(0, 2, length)
        sensors = [slope * rng.uniform(0.5, 1.5) + rng.normal(0, 0.3, length) for _ in range(3)]
        series.append(np.round(np.stack(sensors, axis=1), 4).astype(np.float32))
        labels.append(label)
    return series, labels


def upload(page: Any, path: Path, count: int, classes: list[str]) -> None:
    """Upload the file on the datasets page and see its preview: one plot per class."""
    from playwright.sync_api import expect

    page.goto("/datasets")
    page.set_input_files('input[data-input="dataset-files"]', str(path))
    page.locator('[data-action="upload"]').click()
    preview = page.locator('.dataset-preview[data-input-type="sequence"]')
    preview.wait_for(timeout=60_000)
    expect(preview.locator("h2")).to_have_text(path.stem)
    plots = preview.locator('[data-chart="sequence-samples"]')
    expect(plots).to_have_count(len(classes))
    for name in classes:
        plot = preview.locator(f'[data-chart="sequence-samples"][data-group="{name}"]')
        plot.locator("canvas").first.wait_for()
        assert int(plot.locator(".echart").get_attribute("data-points") or 0) > 0
    row = page.locator("tr", has=page.get_by_role("button", name=path.stem, exact=True))
    expect(row.locator("td.num").first).to_have_text(str(count))
    # The count column is titled by the types listed (other tests' datasets may be listed too).
    expect(page.locator(".datasets-table thead th").nth(2)).to_contain_text(re.compile("Sequences|序列数"))
    counted = re.compile(f"^{count} (sequences|个序列)$")
    expect(row.locator("td.num").first).to_have_attribute("title", counted)


def use_in_the_template(page: Any, name: str) -> None:
    """Open the 1-D CNN template, then put the uploaded set in place of its built-in waves."""
    from playwright.sync_api import expect

    page.goto("/editor")
    expect(page.locator(".palette__group")).to_have_count(5, timeout=60_000)
    page.locator(".toolbar button").filter(has_text=re.compile("Templates|模板")).first.click()
    title = page.locator("h3", has_text=re.compile(r"1-D CNN|一维卷积"))
    card = page.locator(".templates__card").filter(has=title)
    card.first.get_by_role("button").click()
    page.wait_for_timeout(300)
    confirm = page.locator("dialog[open] button.btn--primary, dialog[open] button.btn--danger-solid")
    if confirm.count():
        confirm.last.click()
    page.goto("/datasets")
    row = page.locator("tr", has=page.get_by_role("button", name=name, exact=True))
    row.locator('[data-action="use-in-editor"]').click()
    dialog = page.locator("dialog[open]")
    dialog.locator("button.btn--primary").last.click()
    expect(page).to_have_url(re.compile(r"/editor$"))


def train(page: Any) -> None:
    from playwright.sync_api import expect

    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    page.locator('[data-action="train"]').click()
    page.locator("dialog[open]").locator('[data-action="start-training"]').click()
    expect(page).to_have_url(re.compile(r"/tasks/[^/]+$"), timeout=60_000)
    expect(page.locator(".monitor")).to_have_attribute("data-status", "SUCCEEDED", timeout=TRAIN_TIMEOUT_MS)


def predict(page: Any, path: Path, labels: list[str]) -> None:
    """From the monitor to the model page: the file's sequences, each plotted beside its answer."""
    from playwright.sync_api import expect

    page.locator('[data-action="predict"]').click()
    section = page.locator('.predict[data-input="sequence"]')
    section.wait_for()
    page.set_input_files('input[data-input="sequence-files"]', str(path))
    chips = page.locator(".seq-inputs .input-chip")
    expect(chips).to_have_count(len(labels), timeout=60_000)
    result = page.locator(f'.seq-prediction[data-input="{path.name}"]')
    result.locator('[data-chart="input-series"] canvas').first.wait_for()
    result.locator('[data-answer="class"]').wait_for(timeout=60_000)
    result.locator('[data-chart="pie"] canvas').first.wait_for()
    right = 0
    for i, label in enumerate(labels):
        chips.nth(i).click()
        expect(result).to_have_attribute("data-sequence-index", str(i))
        answer = result.locator('[data-answer="class"] .prediction__label')
        answer.wait_for()
        right += answer.get_attribute("data-label") == label
    assert right >= len(labels) - 1, f"{right} of {len(labels)} sequences answered right"


def test_equal_length_univariate_ts_from_upload_to_prediction(
    page: Any, artifacts: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    series, labels = waves(120, 48, seed=1)
    path = write_ts(tmp_path / "WaveShapes.ts", series, labels, ["sine", "square"])
    upload(page, path, 120, ["sine", "square"])
    expect(page.locator(".dataset-preview")).to_contain_text("48")
    page.screenshot(path=artifacts / "sequences-01-preview.png")

    use_in_the_template(page, "WaveShapes")
    expect(page.locator(".toolbar .status")).to_have_text("Valid", timeout=30_000)
    expect(page.locator(".dedge__label").filter(has_text=f"48 {TIMES} 1 seq").first).to_be_visible()
    facts = page.locator('.props__dataset[data-dataset="sequence"] p')
    show_graph_panel(page, facts)
    expect(facts).to_have_text(f"120 sequences · 2 classes · 48 steps {TIMES} 1 feature")
    page.screenshot(path=artifacts / "sequences-02-editor.png")

    train(page)
    assert int(page.locator('[data-chart="accuracy"] .echart').get_attribute("data-points") or 0) > 0
    accuracy = float(page.locator('[data-kpi="test-accuracy"] .kpi__value').first.inner_text().rstrip("%"))
    assert accuracy >= 80, f"test accuracy {accuracy}%"
    page.screenshot(path=artifacts / "sequences-03-curves.png")
    page.get_by_role("tab", name="Results").click()
    page.locator('[data-chart="confusion"] canvas').first.wait_for()
    page.screenshot(path=artifacts / "sequences-04-results.png")

    asked, truth = waves(6, 48, seed=7)
    query = write_ts(tmp_path / "new-waves.ts", asked, truth, ["sine", "square"])
    predict(page, query, truth)
    page.screenshot(path=artifacts / "sequences-05-predict.png")


@pytest.mark.parametrize("page", ["zh"], indirect=True)
def test_unequal_length_multivariate_ts_in_chinese(page: Any, artifacts: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    series, labels = traces(120, seed=2)
    path = write_ts(tmp_path / "Sensors.ts", series, labels, ["down", "up"])
    upload(page, path, 120, ["down", "up"])
    expect(page.locator(".dataset-preview")).to_contain_text("不等长")
    page.screenshot(path=artifacts / "sequences-zh-01-preview.png")

    use_in_the_template(page, "Sensors")
    expect(page.locator(".toolbar .status")).to_have_text(re.compile("有效|Valid"), timeout=30_000)
    expect(page.locator(".dedge__label").filter(has_text=f"? {TIMES} 3 序列").first).to_be_visible()
    facts = page.locator('.props__dataset[data-dataset="sequence"] p')
    show_graph_panel(page, facts)
    expect(facts).to_have_text(f"120 个序列 · 2 个类别 · ? 步 {TIMES} 3 个特征")
    page.screenshot(path=artifacts / "sequences-zh-02-editor.png")

    train(page)
    accuracy = float(page.locator('[data-kpi="test-accuracy"] .kpi__value').first.inner_text().rstrip("%"))
    assert accuracy >= 80, f"test accuracy {accuracy}%"
    page.screenshot(path=artifacts / "sequences-zh-03-curves.png")

    asked, truth = traces(5, seed=9)
    query = write_ts(tmp_path / "new-sensors.ts", asked, truth, ["down", "up"])
    predict(page, query, truth)
    page.screenshot(path=artifacts / "sequences-zh-04-predict.png")


@pytest.mark.parametrize("page", ["en", "zh"], indirect=True)
def test_the_lstm_templates_port_labels_read_whole(page: Any, artifacts: Path, request: Any) -> None:
    """Every port label of the LSTM template's cards fits its 180 px card: the LSTM's input, which
    takes a sequence or a sequence layer's tensor, reads as its port's word ('sequence' read
    'sequence | ten…'), and the dataset facts read as sequences."""
    from playwright.sync_api import expect

    from .canvas import node, open_editor

    open_editor(page)
    page.locator(".toolbar button").filter(has_text=re.compile("Templates|模板")).first.click()
    title = page.locator("h3", has_text=re.compile(r"LSTM"))
    page.locator(".templates__card").filter(has=title).first.get_by_role("button").click()
    page.locator("dialog").wait_for(state="detached")
    expect(page.locator(".toolbar .status")).to_have_text(re.compile("Valid|有效"), timeout=60_000)
    ports = page.locator(".dnode__port")
    expect(ports.first).to_be_visible()
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.dnode__port')]
            .filter((el) => el.scrollWidth > el.clientWidth)
            .map((el) => el.textContent)"""
    )
    assert ports.count() >= 8 and cut == [], f"port labels cut short: {cut}"
    english = request.node.callspec.params["page"] == "en"
    lstm_port = node(page, "lstm").locator(".dnode__port--in")
    expect(lstm_port).to_have_text("sequence" if english else "序列 | 张量")
    facts = page.locator('.props__dataset[data-dataset="sequence"] p')
    show_graph_panel(page, facts)
    expected = f"5,000 sequences · 10 classes · 28 steps {TIMES} 28 features"
    expect(facts).to_have_text(expected if english else f"5,000 个序列 · 10 个类别 · 28 步 {TIMES} 28 个特征")
    page.screenshot(path=artifacts / f"sequences-lstm-ports-{'en' if english else 'zh'}.png")


def test_a_csv_recording_uploaded_with_its_window_trains_from_the_canvas(
    page: Any, artifacts: Path, tmp_path: Path
) -> None:
    """A CSV of sensor rows uploaded with its label column, window and stride is a sequence set of
    windows: previewed as one, put into the 1-D CNN template with its window and stride on the node,
    and trained from the canvas."""
    from playwright.sync_api import expect

    rng = np.random.default_rng(4)
    lines = ["ax,ay,az,activity"]
    for row in range(1200):
        activity = "walk" if (row // 100) % 2 == 0 else "run"
        speed = 0.2 if activity == "walk" else 1.5
        values = np.sin(speed * row + np.arange(3)) + rng.normal(0, 0.05, 3)
        lines.append(",".join(f"{v:.4f}" for v in values) + f",{activity}")
    path = tmp_path / "Gait.csv"
    path.write_text("\n".join(lines) + "\n")

    page.goto("/datasets")
    page.set_input_files('input[data-input="dataset-files"]', str(path))
    options = page.locator("details[data-recording]")
    options.locator("summary").click()
    options.locator('[data-field="label_column"]').fill("activity")
    options.locator('[data-field="window"]').fill("32")
    options.locator('[data-field="stride"]').fill("16")
    page.screenshot(path=artifacts / "sequences-recording-01-form.png")
    page.locator('[data-action="upload"]').click()
    preview = page.locator('.dataset-preview[data-input-type="sequence"]')
    preview.wait_for(timeout=60_000)
    expect(preview.locator('[data-chart="sequence-samples"]')).to_have_count(2)
    row = page.locator("tr", has=page.get_by_role("button", name="Gait", exact=True))
    expect(row.locator("td.num").first).to_have_text(str((1200 - 32) // 16 + 1))
    page.screenshot(path=artifacts / "sequences-recording-02-preview.png")

    use_in_the_template(page, "Gait")
    expect(page.locator(".toolbar .status")).to_have_text("Valid", timeout=30_000)
    expect(page.locator(".dedge__label").filter(has_text=f"32 {TIMES} 3 seq").first).to_be_visible()
    page.screenshot(path=artifacts / "sequences-recording-03-editor.png")
    train(page)
    accuracy = float(page.locator('[data-kpi="test-accuracy"] .kpi__value').first.inner_text().rstrip("%"))
    assert accuracy >= 80, f"test accuracy {accuracy}%"
    page.screenshot(path=artifacts / "sequences-recording-04-curves.png")


def show_graph_panel(page: Any, facts: Any) -> None:
    """Click the empty canvas until the graph's own panel (with the dataset facts) shows: an opened
    graph selects its dataset node once its cards are measured, which may come after a first click."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(5):
        page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
        try:
            facts.wait_for(state="visible", timeout=3_000)
            return
        except PlaywrightTimeout:
            continue
