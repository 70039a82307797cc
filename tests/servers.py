"""Real servers for tests that need one over HTTP: `dragdl serve` in a subprocess, or an app under
uvicorn in a thread (with `IdleRunner` in place of Ray when nothing must train)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI

from dragdl.runner.base import Resources, Runner


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def dragdl_serve(
    data_dir: Path,
    log_path: Path,
    *extra: str,
    env: Mapping[str, str] | None = None,
    start_timeout_s: float = 90.0,
) -> Iterator[str]:
    """The server's URL once `/api/health` answers; it is stopped (its embedded Ray with it) on exit.

    The server runs in its own process session, so that whatever it started can be killed with it if
    it hangs on the way out. A server that exits or does not answer in time fails the test with the
    end of its log.
    """
    port = free_port()
    command = [sys.executable, "-c", "from dragdl.cli import app; app()", "serve"]
    command += ["--port", str(port), "--data-dir", str(data_dir), *extra]
    url = f"http://127.0.0.1:{port}"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            deadline = time.monotonic() + start_timeout_s
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    output = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
                    pytest.fail(f"dragdl serve did not start within {start_timeout_s:.0f} s:\n{output}")
                time.sleep(0.3)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


class IdleRunner(Runner):
    """Takes the place of the Ray runner: tasks stay queued, nothing is launched."""

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def wake(self) -> None:
        pass

    def kill(self, task_id: str, timeout_s: float = 30.0) -> bool:
        return True

    def capacity(self) -> Resources | None:
        return None


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """The app behind a real uvicorn server on a free loopback port, in a thread; yields its URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
