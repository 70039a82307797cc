"""Truncated images are refused when they are uploaded, naming the file: a dataset whose image ends
early would otherwise be accepted and fail the task that reads it; a prediction would answer 500."""

from __future__ import annotations

import io

import numpy as np
from fastapi.testclient import TestClient
from PIL import Image

from dragdl.server.settings import Settings

from .hostile.corpus import make_zip, png
from .test_models import db_url, model_id, predict, trained_bundle  # noqa: F401 (fixtures)


def truncated_png() -> bytes:
    """A noisy PNG (so its pixel data is most of the file) cut off in the middle of that data."""
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(noise).save(out, format="PNG")
    whole = out.getvalue()
    return whole[: len(whole) * 2 // 3]


def test_a_dataset_with_a_truncated_image_is_refused_naming_it(
    user_client: TestClient, settings: Settings
) -> None:
    archive = make_zip({"cat/a.png": png(32, 32), "cat/b.png": png(32, 32), "dog/c.png": truncated_png()})
    response = user_client.post("/api/datasets", files=[("files", ("pets.zip", archive))])
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert "dog/c.png" in detail and "truncated" in detail
    assert str(settings.data_dir) not in detail
    assert user_client.get("/api/datasets").json()["count"] == 0


def test_a_truncated_prediction_image_is_refused_naming_it(user_client: TestClient, model_id: str) -> None:  # noqa: F811
    response = predict(user_client, model_id, [png(8, 8), truncated_png()])
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith("digit1.png: ")
    assert "truncated" in response.json()["detail"]
