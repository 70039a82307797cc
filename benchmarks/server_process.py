"""A `dragdl serve` process for the benchmarks that drive the web UI: a free loopback port, a start
that waits for /api/health, and a stop that ends the process however it goes."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    command: list[str],
    url: str,
    log_path: Path,
    start_timeout_s: float,
    poll_s: float,
    stop_timeout_s: float,
    new_session: bool = False,
) -> Iterator[str]:
    """Run `command` (a server answering at `url`) with its output in `log_path`; yields `url` once
    /api/health answers, and exits the benchmark with the log's tail if it never does."""
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=new_session
        )
        try:
            deadline = time.monotonic() + start_timeout_s
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/api/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"dragdl serve did not start:\n{log_path.read_text()[-3000:]}")
                time.sleep(poll_s)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=stop_timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
