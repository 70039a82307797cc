"""A real `dragdl serve` in a subprocess on a free loopback port, for tests that need one over HTTP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest


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
