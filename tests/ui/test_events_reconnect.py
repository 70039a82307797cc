"""The monitor's event stream in a real browser when the account has all its streams open: the server
answers 429, the page shows it is reconnecting, and once a stream closes it goes live on its own.

The server allows one stream per user and runs no task (running quota 0), so the task stays queued
and its stream stays open; the test holds that one stream itself while the page asks for another.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..graphs import chain
from ..servers import dragdl_serve

pytestmark = pytest.mark.ui

GRAPH = chain(
    "Queued",
    [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": 1, "device": "cpu"}),
    ],
)


def test_the_monitor_reconnects_when_a_stream_slot_frees(
    browser: Any, tmp_path: Path, artifacts: Path
) -> None:
    env = {**os.environ, "DRAGDL_MAX_EVENT_STREAMS_PER_USER": "1", "DRAGDL_MAX_RUNNING_PER_USER": "0"}
    with (
        dragdl_serve(tmp_path / "data", tmp_path / "server.log", "--no-auth", env=env) as url,
        httpx.Client(base_url=url, timeout=30, headers={"X-Requested-With": "dragdl-test"}) as api,
    ):
        created = api.post("/api/tasks", json={"graph": GRAPH})
        assert created.status_code == 201, created.text
        path = f"/tasks/{created.json()['id']}"
        with api.stream("GET", f"/api{path}/events") as held:  # the account's one stream
            assert held.status_code == 200
            context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=url)
            try:
                page = context.new_page()
                page.set_default_timeout(60_000)
                page.goto(path)
                page.locator('.monitor [data-connection="reconnecting"]').wait_for()
                refused = api.get(f"/api{path}/events")
                assert refused.status_code == 429 and "1 of the 1" in refused.json()["detail"]
                page.screenshot(path=artifacts / "monitor-stream-refused.png")
                held.close()  # the slot frees: the page's next attempt gets it
                page.locator('.monitor [data-connection="live"]').wait_for()
                page.locator('.monitor[data-status="QUEUED"]').wait_for()
            finally:
                context.close()
