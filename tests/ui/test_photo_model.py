"""A two-class photo model's prediction page (issue 19, finding 13), against a real server.

Face/non-face photos trained a model whose page offered a sketch pad (a drawing means nothing to
it), ranked its two classes under 'Top 5', cut the answer 'not_face' to 'not_fac' in the list of
inputs, and clipped long class names beside the confusion matrix. Here a small set of colour
pictures of two classes, 'face' and 'not_face', is uploaded and trained over the API; its results
and its prediction page are checked in English and Chinese.

Screenshots go to test-artifacts/ui/photo-model-<language>-*.png.
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from ..graphs import chain
from .test_monitor_predict import api

pytestmark = [pytest.mark.ui, pytest.mark.slow]

SIDE = 32
TRAIN_TIMEOUT_S = 180


def picture(face: bool, rng: np.random.Generator) -> Image.Image:
    """A colour picture: a skin-toned disc on a background (a 'face'), or coloured noise."""
    pixels = rng.integers(0, 256, (SIDE, SIDE, 3)).astype(np.float64)
    if face:
        y, x = np.mgrid[:SIDE, :SIDE]
        disc = (y - SIDE / 2) ** 2 + (x - SIDE / 2) ** 2 < (SIDE / 3) ** 2
        pixels = pixels * 0.2 + 40
        pixels[disc] = np.array([224, 172, 140]) + rng.normal(0, 8, (int(disc.sum()), 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="RGB")


def photo_zip(rng: np.random.Generator) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in ("face", "not_face"):
            for k in range(24):
                image = io.BytesIO()
                picture(name == "face", rng).save(image, format="PNG")
                zf.writestr(f"faces/{name}/{k}.png", image.getvalue())
    return out.getvalue()


def photo_graph(dataset_id: str) -> dict[str, Any]:
    nodes = [
        ("data", "dataset.uploaded", {"dataset_id": dataset_id}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("conv", "layer.Conv2d", {"out_channels": 4, "kernel_size": 3, "padding": "same"}),
        ("relu", "layer.ReLU", {}),
        ("pool", "layer.MaxPool2d", {"kernel_size": 4}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 3, "batch_size": 8, "lr": 0.01, "seed": 0, "device": "cpu"}),
    ]
    return chain("Faces", nodes)


@pytest.mark.parametrize(("page", "language"), [("en", "en"), ("zh", "zh")], indirect=["page"])
def test_a_two_class_photo_model_offers_no_sketch_pad_and_shows_its_labels_whole(
    page: Any, language: str, server_url: str, artifacts: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    shot = f"photo-model-{language}"
    rng = np.random.default_rng(5)
    upload = page.request.post(
        f"{server_url}/api/datasets",
        headers={"X-Requested-With": "dragdl-web"},
        multipart={
            "name": f"faces {language}",
            "files": {"name": "faces.zip", "mimeType": "application/zip", "buffer": photo_zip(rng)},
        },
    )
    assert upload.ok, upload.text()
    dataset = upload.json()
    task = api(server_url, "POST", "/api/tasks", {"graph": photo_graph(dataset["id"]), "name": "Faces"})
    deadline = time.monotonic() + TRAIN_TIMEOUT_S
    while (status := api(server_url, "GET", f"/api/tasks/{task['id']}")["status"]) != "SUCCEEDED":
        assert status not in ("FAILED", "STOPPED"), f"the task {status}"
        assert time.monotonic() < deadline, "training did not finish in time"
        page.wait_for_timeout(500)

    # --- the confusion matrix keeps 'not_face' and the axis name apart --------------------------------
    page.goto(f"/tasks/{task['id']}")
    page.get_by_role("tab", name=re.compile("Results|结果")).click()
    page.locator('[data-chart="confusion"] canvas').first.wait_for()
    page.locator('[data-chart="confusion"]').screenshot(path=artifacts / f"{shot}-01-confusion.png")

    # --- the prediction page --------------------------------------------------------------------------
    models = api(server_url, "GET", "/api/models")["data"]
    model = next(m for m in models if m["task_id"] == task["id"])
    page.goto(f"/models/{model['id']}")
    page.locator(".predict").wait_for()
    expect(page.locator(".sketch__pad")).to_have_count(0)
    paths = []
    for k, face in enumerate((True, False, False)):
        path = tmp_path / f"photo-{k}.png"
        picture(face, rng).save(path)
        paths.append(str(path))
    page.set_input_files('input[data-input="images"]', paths)
    page.locator('.prediction [data-chart="pie"] canvas').first.wait_for(timeout=60_000)
    labels = page.locator(".input-chip__label")
    expect(labels).to_have_count(3)
    expect(labels.filter(has_text="…")).to_have_count(0, timeout=30_000)
    # Each answer is drawn whole inside its chip, not cut at the list's edge.
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.input-chip__label')].filter((label) => {
            const chip = label.closest('.input-chip').getBoundingClientRect();
            const list = label.closest('.inputs').getBoundingClientRect();
            const box = label.getBoundingClientRect();
            return label.scrollWidth > label.clientWidth + 1 || box.right > chip.right
                || box.right > list.right;
        }).map((label) => label.textContent)"""
    )
    assert cut == [], f"answers cut in the list of inputs: {cut}"
    heading = page.locator(".prediction .chart-card h4")
    expect(heading).to_have_text("Every class" if language == "en" else "全部类别")
    expect(page.locator(".prediction .top5 tbody tr")).to_have_count(2)
    page.screenshot(path=artifacts / f"{shot}-02-predict.png", full_page=True)
