"""Ray processes a killed server left behind, found and ended at the next start.

An embedded Ray belongs to the server that started it. A SIGKILLed server cannot shut it down, and
some of its helpers (agents, log monitor, idle workers) outlive it. So the server records the Ray
processes it started (pid and kernel start time, so that a reused pid is never mistaken for one of
them) in its data dir; the next server with that data dir ends those that still run, with their
children, before it starts its own Ray. A Ray cluster the server joined is never recorded or touched.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
from pathlib import Path

log = logging.getLogger(__name__)

RECORD = Path("runner") / "ray-processes.json"


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc; empty elsewhere), children first."""
    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/pid/stat); None if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[19])


def _is_ray(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"ray" in command


def record_ray_processes(data_dir: Path) -> int:
    """Write down the Ray processes this process started; returns how many."""
    found = [
        {"pid": pid, "start": start}
        for pid in descendants(os.getpid())
        if _is_ray(pid) and (start := start_time(pid)) is not None
    ]
    path = data_dir / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"server_pid": os.getpid(), "processes": found}), encoding="utf-8")
    os.replace(tmp, path)
    return len(found)


def forget_ray_processes(data_dir: Path) -> None:
    """The server shut its Ray down itself: nothing is left to end."""
    (data_dir / RECORD).unlink(missing_ok=True)


def end_leftover_ray(data_dir: Path) -> list[int]:
    """SIGKILL the recorded Ray processes that still run (and their children); returns their pids."""
    path = data_dir / RECORD
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    targets: list[int] = []
    for entry in recorded.get("processes", []):
        pid, start = entry.get("pid"), entry.get("start")
        if isinstance(pid, int) and start is not None and start_time(pid) == start:
            targets += [pid, *descendants(pid)]
    for pid in dict.fromkeys(targets):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if targets:
        log.warning("ended %d Ray processes left behind by a server that was killed", len(set(targets)))
    path.unlink(missing_ok=True)
    return targets
