"""What a first-time user met in the browser, checked in a real one: an upload in dark ink on white
paper for a model trained on light strokes on black is inverted (and says so, with Undo); the
drawing is predicted while it is drawn; compared runs, a one-epoch run and sub-second times read
well on the monitor; dataset uploads have a drop zone; the sign-in page logs no console error and
single-user mode shows no Sign out.

Screenshots go to test-artifacts/ui/.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from ..graphs import chain
from .test_monitor_predict import VIEWPORT, api, digit_png, digits_graph, page_factory  # noqa: F401

pytestmark = pytest.mark.ui

TRAIN_TIMEOUT_S = 180


def linear_graph() -> dict[str, Any]:
    """Digits through one linear layer in large batches: an epoch well under a second."""
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        (
            "train",
            "train.Classifier",
            {"epochs": 1, "batch_size": 256, "lr": 0.05, "seed": 0, "device": "cpu"},
        ),
    ]
    return chain("UI quick", nodes)


def submit(base: str, name: str, epochs: int, graph: dict[str, Any] | None = None) -> str:
    graph = graph or digits_graph()
    graph["name"] = name
    next(n for n in graph["nodes"] if n["id"] == "train")["params"]["epochs"] = epochs
    task: dict[str, Any] = api(base, "POST", "/api/tasks", {"graph": graph, "name": name})
    return str(task["id"])


def wait_succeeded(base: str, task_id: str) -> None:
    deadline = time.monotonic() + TRAIN_TIMEOUT_S
    while (status := api(base, "GET", f"/api/tasks/{task_id}")["status"]) != "SUCCEEDED":
        assert status not in ("FAILED", "STOPPED"), f"task {task_id} ended {status}"
        assert time.monotonic() < deadline, f"task {task_id} did not finish in time"
        time.sleep(0.2)


def draw_seven(page: Any, nudge: float = 0.0) -> None:
    pad = page.locator(".sketch__pad").bounding_box()
    assert pad is not None
    x, y, size = pad["x"], pad["y"], pad["width"]
    page.mouse.move(x + (0.25 + nudge) * size, y + 0.2 * size)
    page.mouse.down()
    page.mouse.move(x + 0.75 * size, y + 0.2 * size, steps=15)
    page.mouse.move(x + (0.45 + nudge) * size, y + 0.85 * size, steps=15)
    page.mouse.up()


def test_dark_ink_uploads_are_inverted_and_drawings_predicted_while_drawn(
    page_factory: Any,  # noqa: F811
    server_url: str,
    artifacts: Path,
    tmp_path: Path,
) -> None:
    task_id = submit(server_url, "UI polarity", epochs=2)
    wait_succeeded(server_url, task_id)
    model = next(m for m in api(server_url, "GET", "/api/models")["data"] if m["task_id"] == task_id)
    page = page_factory()
    predict_posts: list[str] = []
    page.on(
        "request", lambda r: r.method == "POST" and r.url.endswith("/predict") and predict_posts.append(r.url)
    )
    page.goto(f"/models/{model['id']}")
    page.locator(".predict").wait_for()

    # The digits were trained as light strokes on black; this one is dark ink on white paper.
    label = digit_png(tmp_path / "digit.png", 7)
    light = 255 - np.asarray(Image.open(tmp_path / "digit.png"))
    Image.fromarray(light).save(tmp_path / "ink-on-paper.png")
    page.set_input_files('input[data-input="images"]', str(tmp_path / "ink-on-paper.png"))
    view = page.locator('.prediction[data-input="ink-on-paper.png"]')
    view.locator('[data-chart="pie"] canvas').first.wait_for()
    hint = view.locator('.inversion[data-inverted="true"]')
    hint.wait_for()
    assert "Inverted to match the training images (light ink on dark)" in hint.inner_text()
    assert view.locator(".prediction__label").get_attribute("data-label") == str(label)
    page.screenshot(path=artifacts / "predict-inverted.png")
    page.get_by_role("button", name="中文").click()
    page.get_by_text("已反色以匹配训练图像", exact=False).wait_for()
    page.screenshot(path=artifacts / "predict-inverted-zh.png")
    page.get_by_role("button", name="EN").click()
    view.locator('[data-action="undo-invert"]').click()
    view.locator('.inversion[data-inverted="false"] [data-action="invert"]').wait_for()
    view.locator('[data-chart="pie"] canvas').first.wait_for()

    # Drawing: a prediction appears without pressing the button, and follows the drawing.
    draw_seven(page)
    live = page.locator('.prediction[data-input="sketch-live.png"]')
    live.locator('[data-chart="pie"] canvas').first.wait_for()
    assert live.locator(".prediction__label").get_attribute("data-label")
    assert page.locator(".input-chip", has_text="Drawing (live)").count() == 1
    page.screenshot(path=artifacts / "predict-live-server.png")

    # With the model in the browser, the drawing is predicted there: no request per stroke.
    page.locator('[data-action="browser-inference"]').click()
    page.locator('[data-browser-status="ready"]').wait_for(timeout=90_000)
    sent = len(predict_posts)
    page.get_by_role("button", name="Clear").click()
    page.locator(".input-chip", has_text="Drawing (live)").wait_for(state="detached")
    draw_seven(page, nudge=0.05)
    page.locator('.prediction[data-input="sketch-live.png"] [data-chart="pie"] canvas').first.wait_for()
    # Waits take a function: Playwright evals a bare expression again on each poll,
    # which the page's Content-Security-Policy refuses.
    page.wait_for_function(
        "() => document.querySelector('.prediction[data-input=\"sketch-live.png\"] .prediction__label')"
        "?.dataset.label"
    )
    assert len(predict_posts) == sent, (
        "the live drawing went to the server although the browser model is ready"
    )
    assert page.locator(".input-chip", has_text="Drawing (live)").count() == 1
    page.screenshot(path=artifacts / "predict-live-browser.png")


def test_compared_runs_one_epoch_and_short_times_read_well(
    page_factory: Any,  # noqa: F811
    server_url: str,
    artifacts: Path,
) -> None:
    one = submit(server_url, "UI one epoch", epochs=1, graph=linear_graph())
    two = submit(server_url, "UI two epochs", epochs=2)
    wait_succeeded(server_url, one)
    wait_succeeded(server_url, two)
    page = page_factory()
    page.goto(f"/tasks/{one}")
    page.locator(".monitor[data-status='SUCCEEDED']").wait_for()
    page.wait_for_function(
        "() => document.querySelector('[data-chart=\"accuracy\"] .echart').dataset.points > 0"
    )
    page.screenshot(path=artifacts / "monitor-one-epoch.png")
    page.locator(".curves__grid--small").screenshot(path=artifacts / "monitor-one-epoch-small.png")

    before = int(page.locator('[data-chart="loss"] .echart').get_attribute("data-points") or 0)
    page.get_by_role("button", name="Compare with…").click()
    page.locator(".compare__item", has_text="UI two epochs").locator("input").check()
    page.get_by_role("button", name="Compare with…").click()
    page.wait_for_function(
        "n => Number(document.querySelector('[data-chart=\"loss\"] .echart').dataset.points) > n", arg=before
    )
    page.locator('[data-chart="loss"]').screenshot(path=artifacts / "monitor-compare-loss.png")
    page.screenshot(path=artifacts / "monitor-compare.png")

    page.get_by_role("tab", name="Results").click()
    train_time = page.locator(".kpi", has_text="Training time").locator(".kpi__value")
    train_time.wait_for()
    # A quick run: under a second reads in milliseconds ("0.0 s" before).
    assert re.fullmatch(r"\d+ ms|[1-9][\d.]* s", train_time.inner_text()), train_time.inner_text()
    page.screenshot(path=artifacts / "monitor-results-time.png")


def test_dataset_uploads_have_a_drop_zone(page_factory: Any, artifacts: Path) -> None:  # noqa: F811
    page = page_factory()
    page.goto("/datasets")
    zone = page.locator('[data-dropzone="dataset-files"]')
    zone.wait_for()
    zone.dispatch_event("dragover", {"dataTransfer": page.evaluate_handle("() => new DataTransfer()")})
    page.locator('[data-dropzone="dataset-files"].is-over').wait_for()
    page.screenshot(path=artifacts / "datasets-drop-over.png")
    dropped = page.evaluate_handle(
        "() => { const dt = new DataTransfer();"
        " dt.items.add(new File(['x'], 'shapes.zip', {type: 'application/zip'})); return dt; }"
    )
    zone.dispatch_event("drop", {"dataTransfer": dropped})
    page.locator(".upload__files", has_text="shapes.zip").wait_for()
    assert "is-over" not in (zone.get_attribute("class") or "")
    # The keyboard's way in: the button opens the file chooser.
    button = zone.locator("button", has_text="Choose files")
    button.focus()
    assert page.evaluate("document.activeElement.textContent") == "Choose files"
    with page.expect_file_chooser() as chooser:
        button.press("Enter")  # focuses the button again if a re-render moved the focus, then Enter
    assert chooser.value.is_multiple()
    page.screenshot(path=artifacts / "datasets-drop-zone.png")


def test_single_user_mode_shows_no_sign_out(page_factory: Any, artifacts: Path) -> None:  # noqa: F811
    page = page_factory()
    page.goto("/tasks")
    page.locator(".topbar__username").wait_for()
    assert page.get_by_role("button", name="Sign out").count() == 0
    page.locator(".topbar").screenshot(path=artifacts / "topbar-single-user.png")


def test_the_sign_in_page_logs_no_console_error(browser: Any, auth_server_url: str, artifacts: Path) -> None:
    context = browser.new_context(viewport=VIEWPORT, base_url=auth_server_url)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: message.type == "error" and errors.append(message.text))
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto("/")
        page.locator(".signin__submit").wait_for()
        page.screenshot(path=artifacts / "sign-in.png")
        assert errors == [], f"the sign-in page logged errors: {errors}"
    finally:
        context.close()
