"""Server shutdown: ask a running attempt to checkpoint now and hand its task back for the next start.

The request is a file named after the attempt's `worker_ref` under the data dir (which every node of
a cluster shares): the worker's monitor looks for it at each heartbeat, so no database column or Ray
call is needed while the server is on its way out. A `worker_ref` names one attempt only, so a request
left behind by a killed server can never touch a later attempt; `clear_requests` tidies them up.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

SUSPEND_DIR = Path("runner") / "suspend"


def suspend_path(data_dir: Path, worker_ref: str) -> Path:
    return data_dir / SUSPEND_DIR / worker_ref


def request_suspend(data_dir: Path, worker_ref: str) -> None:
    path = suspend_path(data_dir, worker_ref)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def suspend_requested(data_dir: Path, worker_ref: str) -> bool:
    return suspend_path(data_dir, worker_ref).exists()


def clear_requests(data_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(data_dir / SUSPEND_DIR)
