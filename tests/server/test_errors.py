"""Error payloads: server paths are rewritten for users who are not administrators."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragdl.engine.graph.errors import GraphError
from dragdl.paths import hide_server_paths
from dragdl.server.errors import public_graph_errors

DATA = Path("/srv/dragdl-data")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Looked in: /root/.cache/torch/hub/r18.pth. Set x", "Looked in: a server file. Set x"),
        (
            "cannot read '/srv/dragdl-data/datasets/d1/data/cat/1.png': bad",
            "cannot read 'datasets/d1/data/cat/1.png': bad",
        ),
        ("folder /srv/dragdl-data does not exist", "folder the data folder does not exist"),
        ("cache ~/.cache/huggingface (hub)", "cache a server file (hub)"),
        ("(/etc/passwd)", "(a server file)"),
        # Not paths: formulas, URLs, relative paths.
        ("clamp(x, 0, 1)/2 and x/255", "clamp(x, 0, 1)/2 and x/255"),
        ("https://download.pytorch.org/models/r18.pth", "https://download.pytorch.org/models/r18.pth"),
        ("images/a/5.png: truncated", "images/a/5.png: truncated"),
    ],
)
def test_server_paths_become_relative_to_the_data_dir_or_go(text: str, shown: str) -> None:
    assert hide_server_paths(text, DATA) == shown


def test_graph_errors_are_rewritten_in_message_and_details_for_users_only() -> None:
    error = GraphError(
        code="weights_unavailable",
        message="Looked in: /srv/dragdl-data/cache/weights/a.safetensors",
        details={"looked": ["/srv/dragdl-data/cache/weights/a.safetensors", "/opt/hub/a.pth"], "n": 2},
    )
    [shown] = public_graph_errors([error], DATA, is_admin=False)
    assert shown.message == "Looked in: cache/weights/a.safetensors"
    assert shown.details == {"looked": ["cache/weights/a.safetensors", "a server file"], "n": 2}
    assert public_graph_errors([error], DATA, is_admin=True) == [error]


def test_a_request_problems_input_is_quoted_only_while_short() -> None:
    from dragdl.server.errors import MAX_QUOTED_INPUT, _bounded_input

    assert _bounded_input({"a": [1, "x"]}) == {"a": [1, "x"]}
    assert _bounded_input(b"\xff") == "\ufffd"
    big: object
    for big in ("x" * 10**6, [{}] * 10**6, {str(i): i for i in range(10**5)}, b"y" * 10**6, 10**5000):
        shown = _bounded_input(big)
        assert isinstance(shown, str) and len(shown) <= MAX_QUOTED_INPUT + 1
    assert _bounded_input([{}] * 10**6).startswith("[{}, {}, {}")
    assert _bounded_input({"k": "v" * 300}).startswith("{'k': 'vvv")
