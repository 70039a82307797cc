"""Live events for 100 viewers of one running task, while `GET /api/health` must stay fast.

    .venv/bin/python benchmarks/bench_events.py
    .venv/bin/python benchmarks/bench_events.py --viewers 100 --events 300 --databases sqlite

For each database (SQLite, then PostgreSQL on `--postgres`, in a throw-away database dropped at the
end) it starts the server (this file run with `--serve`: the DragDL app under uvicorn like
`dragdl serve`, with an idle task runner in place of Ray, so no training competes for the CPUs) and:

1. signs up enough accounts for `--viewers` streams within the per-user stream cap (the first is
   the administrator who submits the task; the others are made administrators so that they may
   watch it), and submits a task;
2. opens `--viewers` server-sent event streams of that task (lean asyncio clients, raw HTTP/1.1),
   all answered before anything is written;
3. plays the task's worker from this process: starts its attempt, then writes `--events` events
   (log lines and step metrics) through the worker's own `DBReporter` at `--rate` per second, and
   ends the task SUCCEEDED, which ends every stream;
4. meanwhile samples `GET /api/health` (and the database-backed `GET /api/tasks/{id}`) every
   `--every-ms` on keep-alive connections of their own.

Prints per database: viewers, the events each received against those written (every viewer must
have every event exactly once, in order), and the latency percentiles of both sampled requests.
Target: every viewer complete and health p99 < 100 ms; exit status 1 otherwise. The figures are
wall-clock times on a machine the server shares with this client: note the load average printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

import http_load
from bench_service import free_port, ms, percentile

PASSWORD = "benchmark password"
HEALTH_TARGET_S = 0.100
GRAPH: dict[str, Any] = {
    "version": 1,
    "name": "bench events",
    "nodes": [
        {"id": "data", "type": "dataset.builtin", "params": {"name": "digits"}},
        {"id": "flat", "type": "layer.Flatten"},
        {"id": "fc", "type": "layer.Linear", "params": {"out_features": "auto"}},
        {"id": "train", "type": "train.Classifier", "params": {"epochs": 1, "device": "cpu"}},
    ],
    "edges": [
        {"source": "data", "target": "flat"},
        {"source": "flat", "target": "fc"},
        {"source": "fc", "target": "train"},
    ],
}

console = Console(width=150)  # the table is wide; a pipe would fold it to 80 columns


# --- the server -----------------------------------------------------------------------------------


def serve_idle(data_dir: Path, port: int) -> None:
    """The server process (`--serve`): the app as `dragdl serve` runs it, without a task runner."""
    import uvicorn

    from dragdl.runner.base import Resources, Runner
    from dragdl.server import app as app_module
    from dragdl.server.settings import Settings

    class IdleRunner(Runner):
        def start(self) -> None: ...
        def shutdown(self) -> None: ...
        def wake(self) -> None: ...
        def kill(self, task_id: str, timeout_s: float = 30.0) -> bool:
            return True

        def capacity(self) -> Resources | None:
            return None

    app_module.create_runner = lambda settings, sessions: IdleRunner()  # type: ignore[assignment]
    app = app_module.create_app(Settings.from_env(data_dir))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


@contextmanager
def server(data_dir: Path, database_url: str, log_path: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, __file__, "--serve", str(data_dir), "--port", str(port)]
    env = {**os.environ, "DRAGDL_DATABASE_URL": database_url}
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}; see {log_path}")
            with suppress(httpx.HTTPError):
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer within 120 s; see {log_path}")
            time.sleep(0.2)
        yield url
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


@contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    """A new empty database on the server of `admin_url`, dropped on exit."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"dragdl_bench_{secrets.token_hex(4)}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def accounts(url: str, viewers: int, per_user: int) -> list[str]:
    """API tokens of enough administrators to hold `viewers` streams; the first signed up first."""
    tokens: list[str] = []
    first: httpx.Client | None = None
    for index in range(max(1, -(-viewers // per_user))):
        with httpx.Client(base_url=url, timeout=60) as browser:
            signup = browser.post(
                "/api/auth/signup", json={"username": f"viewer{index}", "password": PASSWORD}
            )
            signup.raise_for_status()
            created = browser.post(
                "/api/auth/tokens", json={"name": "bench"}, headers={"X-Requested-With": "x"}
            )
            created.raise_for_status()
            tokens.append(str(created.json()["token"]))
        if first is None:
            first = httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {tokens[0]}"})
        else:
            first.patch(f"/api/users/{signup.json()['id']}", json={"is_admin": True}).raise_for_status()
    if first is not None:
        first.close()
    return tokens


# --- the worker -----------------------------------------------------------------------------------


class Worker:
    """Writes the task's events as its worker would: `DBReporter`, guarded by the attempt's worker_ref."""

    def __init__(self, database_url: str, data_dir: Path, task_id: str) -> None:
        from dragdl.db.models import Task
        from dragdl.db.session import make_engine, make_session_factory
        from dragdl.runner.reporter import DBReporter
        from dragdl.runner.transitions import start_attempt

        self.engine = make_engine(database_url)
        self.sessions = make_session_factory(self.engine)
        self.task_id = task_id
        with self.sessions() as db:
            ref = start_attempt(db, db.get_one(Task, task_id), "attempt 1 started")
        if ref is None:
            raise RuntimeError(f"task {task_id} could not be started")
        self.worker_ref = ref
        self.reporter = DBReporter(self.sessions, task_id, ref, data_dir, min_interval_s=0)

    def run(self, events: int, rate: float) -> None:
        from dragdl.db.models import TaskStatus
        from dragdl.engine.train.events import LogEvent, MetricEvent
        from dragdl.runner.transitions import finish

        started = time.monotonic()
        for index in range(events):
            if index % 2:
                self.reporter.emit(LogEvent(level="info", message=f"step {index}"))
            else:
                self.reporter.emit(
                    MetricEvent(scope="step", epoch=1, step=index, values={"loss": 1 / (1 + index)})
                )
            pause = started + (index + 1) / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # the pace of a training run, not a wait for a condition
        with self.sessions() as db:
            finish(db, self.task_id, TaskStatus.SUCCEEDED, "done", worker_ref=self.worker_ref)

    def event_ids(self) -> list[int]:
        from sqlalchemy import select

        from dragdl.db.models import TaskEvent

        with self.sessions() as db:
            query = select(TaskEvent.id).where(TaskEvent.task_id == self.task_id).order_by(TaskEvent.id)
            return list(db.scalars(query))

    def close(self) -> None:
        self.engine.dispose()


# --- the viewers and the samplers -------------------------------------------------------------------


@dataclass
class Viewer:
    status: int = 0
    ids: list[int] | None = None
    error: str | None = None


async def view(url: str, path: str, token: str, opened: asyncio.Event, viewer: Viewer) -> None:
    """One SSE client over a raw connection: the answer's head, then chunked text until the end."""
    host, port = url.removeprefix("http://").split(":")
    try:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(http_load.get_request(url, path, {"Authorization": f"Bearer {token}"}))
        head = await reader.readuntil(b"\r\n\r\n")
        viewer.status = int(head.split(b" ", 2)[1])
        opened.set()
        body = bytearray()
        while True:  # Transfer-Encoding: chunked
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            if size == 0:
                break
            body += await reader.readexactly(size + 2)
            del body[-2:]
        writer.close()
        viewer.ids = [int(line[4:]) for line in body.decode().split("\n") if line.startswith("id: ")]
    except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
        viewer.error = f"{type(exc).__name__}: {exc}"
        opened.set()


@dataclass(frozen=True)
class Sample:
    at: float
    """perf_counter() when the request was sent."""
    seconds: float
    """Until the whole answer was read; infinite for an answer other than 200."""


async def sample(url: str, path: str, token: str, every_s: float, until: asyncio.Event) -> list[Sample]:
    """Latencies of `path`, one request every `every_s` on one keep-alive connection, until `until`."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    request = http_load.get_request(url, path, {"Authorization": f"Bearer {token}"})
    samples: list[Sample] = []
    try:
        while not until.is_set():
            start = time.perf_counter()
            writer.write(request)
            status, _ = await http_load._read_response(reader)
            samples.append(Sample(start, time.perf_counter() - start if status == 200 else float("inf")))
            await asyncio.sleep(max(0.0, every_s - (time.perf_counter() - start)))
    finally:
        writer.close()
    return samples


@dataclass
class Result:
    database: str
    viewers: int
    opened: int
    written: int
    complete: int
    """Viewers that received exactly the events written, in order."""
    received: list[int]
    health: list[Sample]
    task_reads: list[Sample]
    all_open_at: float
    """When every viewer had its answer's head: the samples before it are taken while they connect."""
    load: tuple[float, float, float]

    def seconds(self, samples: list[Sample], phase: str = "all") -> list[float]:
        if phase == "connecting":
            return [s.seconds for s in samples if s.at < self.all_open_at]
        if phase == "streaming":
            return [s.seconds for s in samples if s.at >= self.all_open_at]
        return [s.seconds for s in samples]


async def measure(name: str, url: str, database_url: str, data_dir: Path, args: argparse.Namespace) -> Result:
    tokens = accounts(url, args.viewers, args.per_user)
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {tokens[0]}"}) as owner:
        created = owner.post("/api/tasks", json={"graph": GRAPH})
        created.raise_for_status()
        task_id = str(created.json()["id"])
    path = f"/api/tasks/{task_id}/events"
    done = asyncio.Event()
    health = asyncio.create_task(sample(url, "/api/health", tokens[0], args.every_ms / 1000, done))
    reads = asyncio.create_task(sample(url, f"/api/tasks/{task_id}", tokens[0], args.every_ms / 1000, done))
    viewers = [Viewer() for _ in range(args.viewers)]
    opened = [asyncio.Event() for _ in viewers]
    streams = [
        asyncio.create_task(view(url, path, tokens[index // args.per_user], opened[index], viewer))
        for index, viewer in enumerate(viewers)
    ]
    await asyncio.wait_for(asyncio.gather(*(event.wait() for event in opened)), 120)
    all_open_at = time.perf_counter()
    worker = Worker(database_url, data_dir, task_id)
    try:
        with console.status(f"{name}: {args.events} events to {args.viewers} viewers..."):
            await asyncio.to_thread(worker.run, args.events, args.rate)
            await asyncio.wait_for(asyncio.gather(*streams), 120)
        written = worker.event_ids()
    finally:
        worker.close()
        done.set()
    return Result(
        name,
        args.viewers,
        sum(viewer.status == 200 for viewer in viewers),
        len(written),
        sum(viewer.ids == written for viewer in viewers),
        [len(viewer.ids or []) for viewer in viewers],
        await health,
        await reads,
        all_open_at,
        os.getloadavg(),
    )


def run_database(name: str, database_url: str, args: argparse.Namespace) -> Result:
    temp = Path(tempfile.mkdtemp(prefix="dragdl-bench-events-"))
    database_url = database_url or f"sqlite:///{temp / 'data' / 'dragdl.db'}"
    try:
        with server(temp / "data", database_url, temp / "server.log") as url:
            return asyncio.run(measure(name, url, database_url, temp / "data", args))
    except Exception:
        log = temp / "server.log"
        if log.exists():
            console.print(log.read_text(errors="replace")[-3000:])
        raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def report(results: list[Result]) -> bool:
    table = Table(title="live events: one running task, its viewers, and the other requests meanwhile")
    columns = ("database", "viewers", "answered 200", "events written", "viewers with all, in order")
    columns += (
        "received min/max",
        "health n",
        "health p50",
        "p95",
        "p99",
        "p99 < 100 ms",
        "GET task p50/p99",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "database" else "right")
    ok = True
    for r in results:
        health = r.seconds(r.health)
        p99 = percentile(health, 99)
        passed = r.complete == r.viewers and p99 < HEALTH_TARGET_S
        ok = ok and passed
        reads = r.seconds(r.task_reads)
        table.add_row(
            r.database,
            str(r.viewers),
            str(r.opened),
            str(r.written),
            str(r.complete),
            f"{min(r.received)}/{max(r.received)}",
            str(len(health)),
            ms(percentile(health, 50)),
            ms(percentile(health, 95)),
            ms(p99),
            "[green]yes[/]" if p99 < HEALTH_TARGET_S else "[red]no[/]",
            f"{ms(percentile(reads, 50))} / {ms(percentile(reads, 99))}",
        )
    console.print(table)
    for r in results:
        phases = []
        for phase in ("connecting", "streaming"):
            values = r.seconds(r.health, phase)
            p50, p99 = ms(percentile(values, 50)), ms(percentile(values, 99))
            phases.append(f"while the viewers are {phase}: n={len(values)}, p50 {p50}, p99 {p99}")
        load = " ".join(f"{value:.2f}" for value in r.load)
        console.print(f"{r.database} health {'; '.join(phases)}; load average at the end {load}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--events", type=int, default=300, help="Events the worker writes.")
    parser.add_argument("--rate", type=float, default=30.0, help="Events written per second.")
    parser.add_argument("--every-ms", type=float, default=20.0, help="Interval of the health samples.")
    parser.add_argument("--per-user", type=int, default=20, help="The server's streams per user.")
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument(
        "--postgres",
        default=os.environ.get(
            "DRAGDL_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
        ),
        help="A PostgreSQL server URL whose user may create databases.",
    )
    args = parser.parse_args()
    if args.serve is not None:
        serve_idle(args.serve, args.port)
        return
    os.environ["DRAGDL_MAX_EVENT_STREAMS_PER_USER"] = str(args.per_user)
    console.log(f"load average before: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    results = []
    for name in args.databases.split(","):
        if name == "sqlite":
            results.append(run_database(name, "", args))
        elif name == "postgresql":
            with postgres_database(args.postgres) as url:
                results.append(run_database(name, url, args))
        else:
            parser.error(f"--databases: unknown database {name!r} (sqlite, postgresql)")
    if not report(results):
        sys.exit(1)


if __name__ == "__main__":
    main()
