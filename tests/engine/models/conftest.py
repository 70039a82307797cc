"""Every test here runs offline against empty caches, with Lite0's converted weights shared."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dragdl.engine.models import weights


@pytest.fixture(scope="session")
def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One data dir for the session so Lite0's weights are converted once, not per test.
    return tmp_path_factory.mktemp("dragdl-data")


@pytest.fixture(autouse=True)
def offline_env(tmp_path: Path, shared_data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("DRAGDL_DATA_DIR", str(shared_data_dir))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("DRAGDL_OFFLINE", "1")
    weights._probe_results.clear()
    yield
    weights._probe_results.clear()
