"""Point cloud models over the real app: POST /predict takes .ply, .off, .xyz and .npy files and
answers per cloud as the bundle does in-process; hostile files (a .ply declaring 10^9 vertices, a
binary .ply shorter than its header says, a truncated .off, a pickled .npy) are a 400 naming the file;
another user's model is a 404."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from tests.engine.bundle.test_point_bundle import clouds, off_file, ply_file, pointnet_graph, xyz_text

from dragdl.db.models import Model
from dragdl.server.settings import Settings


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


@pytest.fixture(scope="module")
def points_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small PointNet on the built-in shapes, one epoch, trained once for the module."""
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    root = tmp_path_factory.mktemp("points")
    ctx = DataContext(data_dir=root, allow_download=False)
    result = run_graph(pointnet_graph(), ctx, root / "run", ListReporter())
    assert result.status == "succeeded", result
    return root / "run"


@pytest.fixture
def model_id(points_bundle: Path, settings: Settings, user_client: TestClient, db_session: Session) -> str:
    from dragdl.engine.data.point_builtin import SHAPES

    shutil.copytree(points_bundle, settings.artifacts_dir / "task-1")
    row = Model(
        owner_id=user_client.user["id"],  # type: ignore[attr-defined]
        name="Shapes",
        path="artifacts/task-1",
        classes=list(SHAPES),
        metrics={"test": {"test_accuracy": 0.5}},
        input_spec={"network_input": [64, 3]},
    )
    db_session.add(row)
    db_session.commit()
    return row.id


def predict(client: TestClient, model_id: str, files: list[tuple[str, bytes]]) -> Any:
    parts = [("files", (name, data, "application/octet-stream")) for name, data in files]
    return client.post(f"/api/models/{model_id}/predict", files=parts, data={"top_k": "2"})


def test_point_files_answer_per_cloud_as_the_bundle_does(
    user_client: TestClient, model_id: str, settings: Settings
) -> None:
    from dragdl.engine.bundle import load_bundle

    group = clouds(4)
    npy = io.BytesIO()
    np.save(npy, group[:2])
    files = [
        ("two.npy", npy.getvalue()),
        ("one.ply", ply_file(group[2], "binary_little_endian")),
        ("one.off", off_file(group[3])),
        ("one.xyz", xyz_text(group[0])),
    ]
    response = predict(user_client, model_id, files)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["task"] == "classification"
    places = [(p["filename"], p["sample"]) for p in body["predictions"]]
    assert places == [("two.npy", 1), ("two.npy", 2), ("one.ply", 1), ("one.off", 1), ("one.xyz", 1)]
    bundle = load_bundle(settings.artifacts_dir / "task-1")
    expected = [bundle.predict_samples(bundle.decode_file(name, data), top_k=2) for name, data in files]
    for got, want in zip(body["predictions"], [a for answers in expected for a in answers], strict=True):
        assert got["answer"]["label"] == want["label"] and len(got["answer"]["top_k"]) == 2
        assert np.allclose(got["answer"]["probabilities"], want["probabilities"], atol=1e-5)


def test_hostile_point_files_are_a_400_naming_the_file(user_client: TestClient, model_id: str) -> None:
    huge = b"ply\nformat ascii 1.0\nelement vertex 1000000000\n"
    huge += b"property float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n"
    short = ply_file(clouds(1)[0], "binary_big_endian")[:-300]
    cut = b"\n".join(off_file(clouds(1)[0]).splitlines()[:50])
    pickled = io.BytesIO()
    np.save(pickled, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    for name, data, words in (
        ("huge.ply", huge, "1,000,000,000 vertex entries is over the limit"),
        ("short.ply", short, "shorter than its header says"),
        ("cut.off", cut, "truncated"),
        ("evil.npy", pickled.getvalue(), "pickled"),
        ("photo.png", b"\x89PNG not really", "not a point cloud file"),
    ):
        response = predict(user_client, model_id, [(name, data)])
        assert response.status_code == 400, (name, response.text)
        detail = response.json()["detail"]
        assert detail.startswith(name) and words in detail, detail


def test_another_users_point_model_is_not_found(other_client: TestClient, model_id: str) -> None:
    npy = io.BytesIO()
    np.save(npy, clouds(1))
    assert predict(other_client, model_id, [("one.npy", npy.getvalue())]).status_code == 404
