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
import signal
import socket
import subprocess
import sys
import time
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

USERNAME = "alice"
PASSWORD = "correct horse battery"
START_TIMEOUT_S = 90.0

Cli = Callable[..., Result]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    root = tmp_path_factory.mktemp("dragdl-server")
    log_path = root / "server.log"
    command = [sys.executable, "-c", "from dragdl.cli import app; app()", "serve"]
    command += ["--port", str(port), "--data-dir", str(root / "data")]
    env = {**os.environ, "DRAGDL_MAX_RUNNING_PER_USER": "2"}
    env.pop("DRAGDL_DATABASE_URL", None)
    env.pop("DRAGDL_RAY_ADDRESS", None)
    with log_path.open("w") as log:
        # Its own session: the embedded Ray's processes can be killed with the server if it hangs.
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                output = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
                pytest.fail(f"dragdl serve did not start within {START_TIMEOUT_S:.0f} s:\n{output}")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


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
