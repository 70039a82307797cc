"""A real `dragdl serve` (subprocess, free loopback port, temp data dir) with one signed-up user.

Fixtures:

- `server_url` (session): the server; it is stopped (and its embedded Ray with it) at the end.
- `account` (session): `alice`, signed up over HTTP; `token` (session): a personal API token of hers.
- `home`: a temporary HOME holding `~/.dragdl/credentials.json` with that token, for the CLI.
- `cli(*args, home=...)`: runs `dragdl` in-process (CliRunner) with that HOME, wide output and no
  `DRAGDL_TOKEN`/`DRAGDL_SERVER` from the outer environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import Result
from typer.testing import CliRunner

from dragdl.cli import app
from dragdl.client import save_token

from ..graphs import chain
from ..servers import dragdl_serve

USERNAME = "alice"
PASSWORD = "correct horse battery"

Cli = Callable[..., Result]


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("dragdl-server")
    env = {**os.environ, "DRAGDL_MAX_RUNNING_PER_USER": "2"}
    env.pop("DRAGDL_DATABASE_URL", None)
    env.pop("DRAGDL_RAY_ADDRESS", None)
    with dragdl_serve(root / "data", root / "server.log", env=env) as url:
        yield url


@pytest.fixture(scope="session")
def account(server_url: str) -> dict[str, Any]:
    answer = httpx.post(
        f"{server_url}/api/auth/signup", json={"username": USERNAME, "password": PASSWORD}, timeout=30
    )
    assert answer.status_code == 201, answer.text
    user: dict[str, Any] = answer.json()
    return user


@pytest.fixture(scope="session")
def token(server_url: str, account: dict[str, Any]) -> str:
    from dragdl.client import DragDLClient

    with DragDLClient(server_url, token="") as client:
        return client.login(USERNAME, PASSWORD, token_name="tests")


@pytest.fixture
def home(tmp_path: Path, server_url: str, token: str) -> Path:
    path = tmp_path / "home"
    save_token(server_url, token, USERNAME, path / ".dragdl" / "credentials.json")
    return path


@pytest.fixture
def cli() -> Cli:
    runner = CliRunner()

    def invoke(*args: str, home: Path, input: str | None = None) -> Result:
        env = {"HOME": str(home), "COLUMNS": "200", "DRAGDL_TOKEN": None, "DRAGDL_SERVER": None}
        return runner.invoke(app, list(args), env=env, input=input)

    return invoke


def digits_graph(epochs: int = 2, name: str = "Digits") -> dict[str, Any]:
    """The built-in 8x8 digits through a normalisation into one dense layer: trains in a second."""
    nodes = [
        ("data", "dataset.builtin", {"name": "digits"}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("flatten", "layer.Flatten", {}),
        ("dense", "layer.Linear", {"out_features": "auto"}),
        ("train", "train.Classifier", {"epochs": epochs, "batch_size": 128, "lr": 0.01, "device": "cpu"}),
    ]
    return chain(name, nodes)
