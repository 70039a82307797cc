"""The task monitor and prediction pages in a real browser against a real server: a tiny digits
graph submitted over the API trains while its monitor is open (metric points arrive on the chart
over server-sent events), its results show a confusion matrix, and its model classifies an
uploaded digit and a drawn one, on the server and in the browser (ONNX Runtime Web), with the two
agreeing to 1e-3. Also the task center and a dataset upload (progress, refusal, preview).

Screenshots go to test-artifacts/ui/.
"""

from __future__ import annotations

import io
import json
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from ..graphs import chain

pytestmark = pytest.mark.ui

VIEWPORT = {"width": 1280, "height": 800}
TRAIN_TIMEOUT_MS = 180_000


def digits_graph() -> dict[str, Any]:
    """Digits through one small convolution, two epochs in small batches: a few seconds of training,
    long enough to watch the points arrive."""
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("resize", "op.Resize", {"height": 16}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("conv", "layer.Conv2d", {"out_channels": 8, "kernel_size": 3, "padding": "same"}),
        ("relu", "layer.ReLU", {}),
        ("pool", "layer.MaxPool2d", {"kernel_size": 2}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        (
            "train",
            "train.Classifier",
            {"epochs": 2, "batch_size": 4, "lr": 0.003, "seed": 0, "device": "cpu"},
        ),
    ]
    return chain("UI digits", nodes)


def api(base: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    request.add_header("X-Requested-With", "dragdl-test")
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    return json.loads(text) if text else None


def digit_png(path: Path, index: int) -> int:
    """An 8x8 digit from scikit-learn's set as the dataset stores it; returns its label."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    pixels = np.clip(np.rint(digits.images[index] * (255 / 16)), 0, 255).astype(np.uint8)
    Image.fromarray(pixels, mode="L").save(path)
    return int(digits.target[index])


@pytest.fixture
def page_factory(
    browser: Any, server_url: str, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[Any]:
    """New pages on the test's server; fails the test on console errors other than `allowed`."""
    contexts: list[Any] = []
    problems: list[str] = []

    def make(allowed: tuple[str, ...] = ()) -> Any:
        context = browser.new_context(viewport=VIEWPORT, base_url=server_url)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(30_000)

        def on_console(message: Any) -> None:
            if message.type == "error" and not any(text in message.text for text in allowed):
                problems.append(message.text)

        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
        return page

    yield make
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed and contexts:
        for page in contexts[-1].pages:
            page.screenshot(path=artifacts / f"failed-{request.node.name}.png")
    for context in contexts:
        context.close()
    assert not problems, f"the browser console reported errors: {problems}"


def chart_points(page: Any, chart: str) -> int:
    value = page.locator(f'[data-chart="{chart}"] .echart').get_attribute("data-points")
    return int(value or 0)


def test_monitor_results_and_prediction_in_server_and_browser(
    page_factory: Any, server_url: str, artifacts: Path, tmp_path: Path
) -> None:
    task = api(server_url, "POST", "/api/tasks", {"graph": digits_graph(), "name": "UI digits"})
    page = page_factory()

    # --- the monitor follows the run live ---------------------------------------------------------
    page.goto(f"/tasks/{task['id']}")
    monitor = page.locator(".monitor")
    monitor.wait_for()
    first_status = monitor.get_attribute("data-status")
    assert first_status in ("", "QUEUED", "RUNNING"), (
        f"the task ended before the monitor opened ({first_status})"
    )
    seen: list[int] = []
    live_shot = False
    deadline = time.monotonic() + TRAIN_TIMEOUT_MS / 1000
    while monitor.get_attribute("data-status") != "SUCCEEDED":
        assert time.monotonic() < deadline, "training did not finish in time"
        status = monitor.get_attribute("data-status")
        assert status not in ("FAILED", "STOPPED"), page.locator(".monitor__error").inner_text()
        points = chart_points(page, "loss")
        if not seen or points != seen[-1]:
            seen.append(points)
        if points and status == "RUNNING" and not live_shot:
            page.screenshot(path=artifacts / "monitor-live.png")
            live_shot = True
        page.wait_for_timeout(100)
    page.wait_for_function("() => document.querySelector('[data-chart=\"loss\"] .echart').dataset.points > 0")
    seen.append(chart_points(page, "loss"))
    assert seen == sorted(seen) and seen[-1] > seen[0], f"no points arrived while watching: {seen}"
    assert chart_points(page, "accuracy") > 0 and chart_points(page, "memory") == 2
    page.locator(".live[data-connection='ended']").wait_for()
    assert page.locator('[data-kpi="test-accuracy"] .kpi__value').inner_text().endswith("%")
    page.screenshot(path=artifacts / "monitor-curves.png")

    # --- results: per-class scores and the confusion matrix ----------------------------------------
    page.get_by_role("tab", name="Results").click()
    page.locator('[data-chart="confusion"] canvas').first.wait_for()
    assert page.locator(".per-class tbody tr").count() == 10
    page.get_by_role("button", name="Row %").click()
    page.screenshot(path=artifacts / "monitor-results.png")
    page.get_by_role("tab", name="Graph").click()
    page.locator('.graph-view .react-flow__node[data-id="conv"]').wait_for()
    # The settings as run: what "auto" decided, as the report records it.
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Settings").click()
    chosen = api(server_url, "GET", f"/api/tasks/{task['id']}/report")["fast_path"]
    layout = {"contiguous": "contiguous", "channels_last": "channels last"}[chosen["memory_format"]]
    expect(page.locator('[data-setting="precision"] dd')).to_have_text(f"Automatic → {chosen['precision']}")
    expect(page.locator('[data-setting="memory_format"] dd')).to_have_text(f"Automatic → {layout}")
    page.get_by_role("tab", name="Log").click()
    page.locator(".log__text").wait_for()

    # --- the task center lists it -------------------------------------------------------------------
    page.get_by_role("link", name="Tasks", exact=True).first.click()
    row = page.locator(f'tr[data-task="{task["id"]}"]')
    row.wait_for()
    assert row.get_attribute("data-status") == "SUCCEEDED"
    assert "Succeeded" in row.locator(".badge").inner_text()
    page.screenshot(path=artifacts / "tasks.png")

    # --- its model classifies an upload and a drawing ----------------------------------------------
    page.goto("/models")
    models = api(server_url, "GET", "/api/models")["data"]
    model = next(m for m in models if m["task_id"] == task["id"])
    page.locator(f'tr[data-model="{model["id"]}"]').get_by_role("link", name="Predict: UI digits").click()
    page.locator(".predict").wait_for()
    label = digit_png(tmp_path / "digit.png", 7)
    page.set_input_files('input[data-input="images"]', str(tmp_path / "digit.png"))
    page.locator('.prediction[data-input="digit.png"] [data-chart="pie"] canvas').first.wait_for()
    predicted = page.locator(".prediction__label").get_attribute("data-label")
    assert predicted == str(label), f"digit {label} was classified as {predicted}"

    pad = page.locator(".sketch__pad").bounding_box()
    assert pad is not None
    x, y, size = pad["x"], pad["y"], pad["width"]
    page.mouse.move(x + 0.25 * size, y + 0.2 * size)  # a 7: the bar, then the stem
    page.mouse.down()
    page.mouse.move(x + 0.75 * size, y + 0.2 * size, steps=15)
    page.mouse.move(x + 0.45 * size, y + 0.85 * size, steps=15)
    page.mouse.up()
    page.locator('[data-action="classify-sketch"]').click()
    page.locator('.prediction[data-input="sketch-1.png"] [data-chart="pie"] canvas').first.wait_for()
    page.screenshot(path=artifacts / "predict-server.png")

    # --- the same model in the browser agrees with the server --------------------------------------
    page.locator('[data-action="browser-inference"]').click()
    page.locator('[data-browser-status="ready"]').wait_for(timeout=90_000)
    for name in ("sketch-1.png", "digit.png"):
        page.locator(".input-chip", has_text=name[:6]).first.click()
        diff = page.locator(f'.prediction[data-input="{name}"] .agreement__value')
        diff.wait_for()
        value = float(diff.get_attribute("data-diff") or "inf")
        assert value <= 1e-3, f"{name}: browser and server differ by {value}"
        assert "agree" in diff.inner_text()
    page.screenshot(path=artifacts / "predict-browser.png")

    # --- in Chinese --------------------------------------------------------------------------------
    page.get_by_role("button", name="中文").click()
    page.get_by_text("浏览器与服务器一致").wait_for()
    page.screenshot(path=artifacts / "predict-zh.png")
    page.get_by_role("button", name="EN").click()


def test_dataset_upload_shows_progress_refusals_and_a_preview(
    page_factory: Any, artifacts: Path, tmp_path: Path
) -> None:
    from sklearn.datasets import load_digits

    digits = load_digits()
    archive = tmp_path / "digits-0-2.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for label, name in enumerate(("zero", "one", "two")):
            for k, i in enumerate(np.where(digits.target == label)[0][: 30 + 10 * label]):
                pixels = np.clip(np.rint(digits.images[i] * (255 / 16)), 0, 255).astype(np.uint8)
                buffer = io.BytesIO()
                Image.fromarray(pixels, mode="L").save(buffer, format="PNG")
                zf.writestr(f"digits/{name}/{k}.png", buffer.getvalue())
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip at all")

    # The browser logs the refused upload's 400 itself; the page shows the server's message.
    page = page_factory(allowed=("status of 400",))
    page.goto("/datasets")
    page.set_input_files('input[data-input="dataset-files"]', str(broken))
    page.locator('[data-action="upload"]').click()
    error = page.locator("[data-upload-error]")
    error.wait_for()
    assert "broken.zip" in error.inner_text() and "zip" in error.inner_text().lower()

    page.set_input_files('input[data-input="dataset-files"]', str(archive))
    page.get_by_label("Name (optional)").fill("UI digits 0-2")
    page.locator('[data-action="upload"]').click()
    preview = page.locator(".dataset-preview")
    preview.locator('[data-chart="class-counts"] canvas').first.wait_for()
    assert preview.locator(".samples__class").count() == 3
    assert "120" in page.locator(".datasets-table").inner_text()
    page.screenshot(path=artifacts / "datasets.png")

    # "Use in editor": the dataset becomes the graph's dataset node, chosen by name in its properties.
    dataset_id = page.locator("tr", has_text="UI digits 0-2").get_attribute("data-dataset")
    page.get_by_role("button", name="Use in editor: UI digits 0-2").click()
    page.locator('.react-flow__node[data-id="uploaded-1"]').wait_for(timeout=60_000)
    assert "UI digits 0-2" in page.locator('.react-flow__node[data-id="uploaded-1"]').inner_text()
    choice = page.locator('.props__node[data-node="uploaded-1"] select[data-input="dataset-select"]')
    page.wait_for_function(
        "id => document.querySelector('select[data-input=\"dataset-select\"]')?.value === id", arg=dataset_id
    )
    assert "UI digits 0-2" in choice.inner_text()
    assert "120 images · 3 classes" in page.locator("[data-dataset-summary]").inner_text()
    page.locator(".toolbar .status", has_text="1 problem").wait_for()  # valid data, no train node yet
    page.screenshot(path=artifacts / "dataset-in-editor.png")
    page.get_by_role("link", name="Upload or preview datasets").click()

    row = page.locator("tr", has_text="UI digits 0-2")
    row.get_by_role("button", name="Delete: UI digits 0-2").click()
    page.locator("dialog [data-confirm]").click()
    row.wait_for(state="detached")
