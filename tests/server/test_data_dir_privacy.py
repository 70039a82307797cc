"""The data dir is the owner's alone: `dragdl serve` tightens an existing 0755 data dir and 0644
database, and everything it and its Ray workers create (database, WAL, datasets, artifacts, logs) has
no group or other permission bits."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import httpx
import pytest

from dragdl.client import DragDLClient

from ..graphs import chain
from ..servers import dragdl_serve
from .hostile.corpus import make_zip, png

PASSWORD = "correct horse battery"


def opened_up(root: Path) -> list[str]:
    """Every path under `root` (itself included) that a group or other user could read or enter."""
    found = []
    for base, dirs, files in os.walk(root):
        for path in [Path(base), *(Path(base) / name for name in dirs + files)]:
            mode = path.lstat().st_mode
            if mode & 0o077 and not stat.S_ISLNK(mode):
                found.append(f"{path.relative_to(root)} {stat.filemode(mode)}")
    return sorted(set(found))


@pytest.mark.slow
def test_serve_keeps_the_data_dir_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    (data / "dragdl.db").touch()
    os.chmod(data / "dragdl.db", 0o644)
    archive = tmp_path / "pets.zip"
    labels = ("cat", "dog")
    archive.write_bytes(
        make_zip(
            {
                f"{label}/{i}.png": png(8, 8, value=40 + 150 * k)
                for k, label in enumerate(labels)
                for i in range(10)
            }
        )
    )
    env = {key: value for key, value in os.environ.items() if key != "DRAGDL_DATABASE_URL"}
    with dragdl_serve(data, tmp_path / "server.log", env=env) as url:
        signup = httpx.post(f"{url}/api/auth/signup", json={"username": "alice", "password": PASSWORD})
        assert signup.status_code == 201, signup.text
        client = DragDLClient(url, token="-")
        client.login("alice", PASSWORD)
        dataset = client.upload_dataset(archive)
        graph = chain(
            "Private",
            [
                ("data", "dataset.uploaded", {"dataset_id": dataset.id}),
                ("flatten", "layer.Flatten", {}),
                ("dense", "layer.Linear", {"out_features": "auto"}),
                ("train", "train.Classifier", {"epochs": 1, "device": "cpu"}),
            ],
        )
        task = client.submit(graph)
        finished = client.wait(task.id)
        assert finished.status == "SUCCEEDED", finished
        assert any((data / "artifacts").rglob("model.safetensors"))
        assert opened_up(data) == []


def test_the_sqlite_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    from dragdl.db.session import make_engine

    previous = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.db"
        old = tmp_path / "old.db"
        old.touch()
        assert stat.S_IMODE(old.stat().st_mode) == 0o644
        for path in (old, fresh):
            engine = make_engine(f"sqlite:///{path}")
            with engine.begin() as connection:
                connection.exec_driver_sql("CREATE TABLE t (x INTEGER)")
                assert opened_up(tmp_path) == []  # the WAL and shared-memory files too, while open
            engine.dispose()
    finally:
        os.umask(previous)
    assert {path.name for path in tmp_path.iterdir()} >= {"fresh.db", "old.db"}
