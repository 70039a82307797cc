"""Service latencies and throughput of a real `dragdl serve`: task start, live metrics, prediction, reads.

    .venv/bin/python benchmarks/bench_service.py
    .venv/bin/python benchmarks/bench_service.py --tasks 10 --epochs 2 --json out.json

Starts `dragdl serve` on a free loopback port with a temporary data dir (signs up a user, then sends
an API token), and measures:

(a) submit -> RUNNING and submit -> first metric, over `--tasks` tiny tasks (digits, Flatten, Linear,
    1 epoch on the CPU) submitted one after another, each once the previous has finished. One more
    task runs first and is not counted: it starts Ray. t0 is the client's clock just before
    `POST /api/tasks`; the RUNNING moment and the first metric's moment are the server's own times
    of those events (the `time` of each server-sent event, the moment the row was written), read
    from the task's event stream. Client and server share the machine, so one clock.
(b) metric -> SSE client: while each task of (a), and the sketcher training of (c), run, a client
    follows `GET /api/tasks/{id}/events`; for every metric event written after the stream opened
    (replayed history is skipped), latency = the client's clock when the event's blank line arrived
    minus the event's `time`. The server reads a task's new events every 0.5 s (one watcher per
    task, shared by its streams), so about 0.25 s on average is expected from the poll alone.
(c) prediction: two models are trained through the server, which registers them: the sketcher CNN
    (examples/sketcher_cnn.json, 28x28 PNGs) and the EfficientNet-Lite0 transfer model
    (examples/transfer_efficientnet_lite0_digits.json: frozen ImageNet features, 8x8 PNGs resized
    to 64x64), each for `--epochs` epochs on the CPU. Then `POST /api/models/{id}/predict` with one
    PNG per request, at concurrency 1, 8 and 32 (keep-alive connections of the lean asyncio client
    in http_load.py, which leaves the CPUs to the server): p50/p99 latency and requests/s.
    Micro-batching on (the default) on a freshly started server, then on one started with
    `DRAGDL_PREDICT_BATCHING=0` on the same data dir. Last, the server's own answering code runs
    in-process on one image and on 32 at once: the part of a request that batching can share out.
(d) reads: `GET /api/tasks/{id}` and `GET /api/tasks/{id}/metrics` of the sketcher task, requests/s
    at concurrency 8.

Targets: submit -> RUNNING p50 < 2 s; metric -> SSE p50 < 1 s; predict p50 < 30 ms at concurrency 1
(sketcher CNN); batched >= 2x the unbatched throughput at concurrency 32 (each model). Exit status 1
when a target fails. Figures are wall-clock times: run it on an otherwise idle machine if you can.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import httpx
from PIL import Image
from rich.console import Console
from rich.table import Table

import http_load

ROOT = Path(__file__).resolve().parents[1]
SKETCHER = ROOT / "src" / "dragdl" / "examples" / "sketcher_cnn.json"
LITE0 = ROOT / "src" / "dragdl" / "examples" / "transfer_efficientnet_lite0_digits.json"
PASSWORD = "benchmark password"
TASK_TIMEOUT_S = 600.0
CONCURRENCY = (1, 8, 32)

TINY_GRAPH: dict[str, Any] = {
    "version": 1,
    "name": "bench tiny",
    "nodes": [
        {"id": "data", "type": "dataset.builtin", "params": {"name": "digits"}},
        {"id": "flat", "type": "layer.Flatten"},
        {"id": "fc", "type": "layer.Linear", "params": {"out_features": "auto"}},
        {"id": "train", "type": "train.Classifier", "params": {"epochs": 1, "device": "cpu", "seed": 0}},
    ],
    "edges": [{"source": a, "target": b} for a, b in pairwise(["data", "flat", "fc", "train"])],
}

console = Console()


# --- statistics -----------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.1f} ms"


# --- the server -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def dragdl_command() -> list[str]:
    script = Path(sys.executable).with_name("dragdl")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from dragdl.cli import app; app()"]


@dataclass(frozen=True)
class Server:
    url: str
    pid: int

    def cpu_s(self) -> float:
        """CPU seconds the server process has used so far (user + system; NaN off Linux)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def serve(data_dir: Path, log_path: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    """`dragdl serve` on a free loopback port in its own process group."""
    port = free_port()
    command = [
        *dragdl_command(),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
    ]
    environment = {**os.environ, **(env or {})}
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=environment, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"dragdl serve exited with {process.returncode}; see {log_path}")
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"dragdl serve did not answer within 120 s; see {log_path}")
            time.sleep(0.2)
        yield Server(url, process.pid)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT (uvicorn's graceful stop, which shuts the embedded Ray down), then SIGKILL the group."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=90)
    with suppress(ProcessLookupError):  # whatever the server started and left behind (Ray's processes)
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def sign_in(url: str, token: str | None) -> tuple[httpx.Client, str]:
    """A client authenticated with an API token; signs the benchmark user up on first use."""
    if token is None:
        with httpx.Client(base_url=url, timeout=60) as browser:
            signup = browser.post("/api/auth/signup", json={"username": "bench", "password": PASSWORD})
            signup.raise_for_status()
            created = browser.post(
                "/api/auth/tokens", json={"name": "bench"}, headers={"X-Requested-With": "x"}
            )
            created.raise_for_status()
            token = str(created.json()["token"])
    client = httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {token}"})
    return client, token


# --- server-sent events ---------------------------------------------------------------------------


@dataclass
class Received:
    kind: str
    data: dict[str, Any]
    server_time: float
    """The event's `time` (seconds since the epoch): when the server wrote it."""
    client_time: float
    """When the client had the whole event."""


def server_time(value: str) -> float:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:  # servers before the UTC fix sent naive UTC times
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@dataclass
class EventFollower:
    """Follows a task's event stream in a thread until the stream ends (after the final status)."""

    client: httpx.Client
    task_id: str
    events: list[Received] = field(default_factory=list)
    opened_at: float = 0.0
    error: str | None = None
    _thread: threading.Thread | None = None
    _opened: threading.Event = field(default_factory=threading.Event)

    def start(self) -> EventFollower:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._opened.wait(30)
        return self

    def _run(self) -> None:
        try:
            with self.client.stream(
                "GET", f"/api/tasks/{self.task_id}/events", timeout=TASK_TIMEOUT_S
            ) as stream:
                stream.raise_for_status()
                self.opened_at = time.time()
                self._opened.set()
                kind, data = "", ""
                for line in stream.iter_lines():
                    if line.startswith("event:"):
                        kind = line[6:].strip()
                    elif line.startswith("data:"):
                        data += line[5:].strip()
                    elif not line and data:
                        now = time.time()
                        payload = json.loads(data)
                        self.events.append(Received(kind, payload, server_time(payload["time"]), now))
                        kind, data = "", ""
        except Exception as exc:  # reported with the results, not raised from a thread
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._opened.set()

    def join(self, timeout: float = TASK_TIMEOUT_S) -> None:
        assert self._thread is not None
        self._thread.join(timeout)
        if self._thread.is_alive():
            self.error = self.error or f"the event stream did not end within {timeout:.0f} s"

    def live_metric_latencies(self) -> list[float]:
        """Receive time minus write time, for metric events written after the stream opened."""
        return [
            e.client_time - e.server_time
            for e in self.events
            if e.kind == "metric" and e.server_time >= self.opened_at
        ]

    def first(self, predicate: Callable[[Received], bool]) -> Received | None:
        return next((e for e in self.events if predicate(e)), None)

    def final_status(self) -> str | None:
        statuses = [e.data.get("status") for e in self.events if e.kind == "status"]
        return statuses[-1] if statuses else None


# --- (a) and (b): task start and live metrics -----------------------------------------------------


@dataclass
class TaskTiming:
    task_id: str
    status: str | None
    to_running_s: float | None
    to_first_metric_s: float | None
    sse_latencies_s: list[float]
    error: str | None


def run_task(client: httpx.Client, graph: dict[str, Any]) -> TaskTiming:
    """Submit, follow the events until the task ends, and read the timings off them."""
    t0 = time.time()
    response = client.post("/api/tasks", json={"graph": graph})
    response.raise_for_status()
    task_id = str(response.json()["id"])
    follower = EventFollower(client, task_id).start()
    follower.join()
    running = follower.first(lambda e: e.kind == "status" and e.data.get("status") == "RUNNING")
    metric = follower.first(lambda e: e.kind == "metric")
    return TaskTiming(
        task_id=task_id,
        status=follower.final_status(),
        to_running_s=running.server_time - t0 if running else None,
        to_first_metric_s=metric.server_time - t0 if metric else None,
        sse_latencies_s=follower.live_metric_latencies(),
        error=follower.error,
    )


def task_starts(client: httpx.Client, count: int) -> tuple[TaskTiming, list[TaskTiming]]:
    with console.status("warm-up task (starts Ray)..."):
        warmup = run_task(client, TINY_GRAPH)
    console.log(f"warm-up task {warmup.task_id}: {warmup.status}, RUNNING after {_s(warmup.to_running_s)}")
    timings = []
    for index in range(count):
        with console.status(f"tiny task {index + 1}/{count}..."):
            timing = run_task(client, TINY_GRAPH)
        console.log(
            f"task {timing.task_id}: {timing.status}, RUNNING {_s(timing.to_running_s)}, "
            f"first metric {_s(timing.to_first_metric_s)}"
            + (f" [red]{timing.error}[/]" if timing.error else "")
        )
        timings.append(timing)
    return warmup, timings


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


# --- (c) prediction -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServedModel:
    """A model the benchmark trains through the server, then sends prediction requests to."""

    name: str
    example: Path
    image_size: int
    """Side of the square PNGs sent (the size the model's dataset has)."""


SKETCHER_MODEL = ServedModel("sketcher CNN", SKETCHER, 28)
LITE0_MODEL = ServedModel("Lite0 transfer", LITE0, 8)
MODELS = (SKETCHER_MODEL, LITE0_MODEL)


def example_graph(model: ServedModel, epochs: int) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads(model.example.read_text(encoding="utf-8"))
    for node in graph["nodes"]:
        if node["type"] == "train.Classifier":
            node["params"] = {**node["params"], "epochs": epochs, "device": "cpu"}
    return graph


def train_model(client: httpx.Client, model: ServedModel, epochs: int) -> tuple[str, str, TaskTiming]:
    with console.status(f"training the {model.name} ({epochs} epochs)..."):
        timing = run_task(client, example_graph(model, epochs))
    if timing.status != "SUCCEEDED":
        why = timing.error or "see the server log"
        raise RuntimeError(f"the {model.name} task ended {timing.status}: {why}")
    models = client.get("/api/models").json()["data"]
    found = next(m for m in models if m["task_id"] == timing.task_id)
    console.log(f"{model.name}: task {timing.task_id} trained model {found['id']}")
    return timing.task_id, str(found["id"]), timing


def sample_pngs(count: int, size: int = 28, seed: int = 0) -> list[bytes]:
    """Grayscale `size` x `size` PNGs of a few random strokes."""
    rng = random.Random(seed)
    images = []
    for _ in range(count):
        image = Image.new("L", (size, size), 0)
        pixels = image.load()
        assert pixels is not None
        for _ in range(60 * size * size // 784 + 4):
            x, y = rng.randrange(size), rng.randrange(size)
            for dx in range(max(1, size // 9)):
                pixels[min(size - 1, x + dx), y] = 255
        out = io.BytesIO()
        image.save(out, format="PNG")
        images.append(out.getvalue())
    return images


@dataclass
class LoadResult:
    concurrency: int
    requests: int
    p50_s: float
    p99_s: float
    per_s: float
    server_cpu_s: float
    """Server process CPU time per request (user + system): what the server spends, whatever the load."""
    errors: int
    batched: bool | None = None


def load(
    server: Server, requests: list[bytes], concurrency: int, count: int
) -> tuple[LoadResult, bytes | None]:
    """`count` requests, `concurrency` keep-alive connections at a time (see http_load)."""
    cpu = server.cpu_s()
    result = http_load.run(server.url, requests, concurrency, count)
    latencies = [reply.seconds for reply in result.replies]
    return LoadResult(
        concurrency,
        count,
        percentile(latencies, 50),
        percentile(latencies, 99),
        count / result.wall_s,
        (server.cpu_s() - cpu) / count,
        sum(reply.status != 200 for reply in result.replies),
    ), result.sample_ok_body


def predictions(
    server: Server, token: str, model: ServedModel, model_id: str, requests: int
) -> list[LoadResult]:
    auth = {"Authorization": f"Bearer {token}"}
    prepared = [
        http_load.multipart_request(
            server.url,
            f"/api/models/{model_id}/predict",
            auth,
            [("images", f"{index}.png", png, "image/png")],
            {"top_k": "3"},
        )
        for index, png in enumerate(sample_pngs(32, model.image_size))
    ]
    load(server, prepared, 1, 10)  # loads the model into the server's cache
    results = []
    for concurrency in CONCURRENCY:
        count = max(requests, 8 * concurrency)
        with console.status(f"{model.name}: {count} predictions at concurrency {concurrency}..."):
            result, body = load(server, prepared, concurrency, count)
        result.batched = bool(json.loads(body)["batched"]) if body else None
        results.append(result)
    return results


@dataclass
class AnsweringCost:
    alone_s: float
    """One image per request, per image: decoding, preprocessing, forward pass and ranking."""
    batched_s: float
    """32 one-image requests answered together, per image."""


def answering_cost(bundle_dir: Path, image_size: int) -> AnsweringCost:
    """What answering costs in this process with the server's code and torch thread count: the part
    of a request that micro-batching can share out."""
    import torch

    from dragdl.engine.bundle import load_bundle
    from dragdl.server.services.prediction import MAX_IMAGE_PIXELS, Request, answer

    cpus = len(os.sched_getaffinity(0))
    torch.set_num_threads(max(1, cpus // min(4, cpus)))
    bundle = load_bundle(bundle_dir)
    requests = [Request([(f"{i}.png", png)], 3) for i, png in enumerate(sample_pngs(32, image_size))]

    def median_s(batch: list[Request], rounds: int) -> float:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            answer(bundle, batch, MAX_IMAGE_PIXELS)
            times.append(time.perf_counter() - start)
        return percentile(times, 50) / len(batch)

    median_s(requests, 3)  # warm-up
    alone = percentile([median_s([request], 1) for request in requests * 4], 50)
    return AnsweringCost(alone, median_s(requests, 20))


def reads(server: Server, token: str, task_id: str, requests: int) -> dict[str, LoadResult]:
    found = {}
    auth = {"Authorization": f"Bearer {token}"}
    for name, path in (
        ("GET /api/tasks/{id}", f"/api/tasks/{task_id}"),
        ("GET .../metrics", f"/api/tasks/{task_id}/metrics"),
    ):
        prepared = [http_load.get_request(server.url, path, auth)]
        load(server, prepared, 8, 16)
        with console.status(f"{name}: {requests} requests at concurrency 8..."):
            found[name] = load(server, prepared, 8, requests)[0]
    return found


# --- report ---------------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    figure: str
    goal: str
    ok: bool | None


def verdict(ok: bool | None) -> str:
    return "[yellow]n/a[/]" if ok is None else "[green]PASS[/]" if ok else "[red]FAIL[/]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10, help="Tiny tasks measured after the warm-up one.")
    parser.add_argument("--epochs", type=int, default=2, help="Epochs of the sketcher CNN training.")
    parser.add_argument(
        "--requests", type=int, default=200, help="Prediction requests per concurrency level."
    )
    parser.add_argument("--reads", type=int, default=400, help="Requests per read endpoint.")
    parser.add_argument("--data-dir", type=Path, help="Keep the server's data here (default: a temp dir).")
    parser.add_argument("--json", type=Path, help="Also write the figures to this file.")
    args = parser.parse_args()

    temp = None if args.data_dir else tempfile.mkdtemp(prefix="dragdl-bench-")
    data_dir = args.data_dir or Path(temp or "")
    log_path = data_dir.parent / f"{data_dir.name}-server.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    console.log(f"data dir {data_dir}, server log {log_path}")
    results: dict[str, Any] = {}
    try:
        with serve(data_dir, log_path) as server:
            client, token = sign_in(server.url, None)
            with client:
                warmup, timings = task_starts(client, args.tasks)
                trained = {model: train_model(client, model, args.epochs) for model in MODELS}
        # Both prediction servers start fresh: the one that trained runs Ray's driver threads, which
        # would tax its requests and not the other's.
        with serve(data_dir, log_path) as server:
            batched = {
                model: predictions(server, token, model, model_id, args.requests)
                for model, (_, model_id, _) in trained.items()
            }
            read = reads(server, token, trained[SKETCHER_MODEL][0], args.reads)
        with serve(data_dir, log_path, {"DRAGDL_PREDICT_BATCHING": "0"}) as server:
            unbatched = {
                model: predictions(server, token, model, model_id, args.requests)
                for model, (_, model_id, _) in trained.items()
            }
        costs = {}
        for model, (task_id, _, _) in trained.items():
            with console.status(f"{model.name}: answering in-process..."):
                costs[model] = answering_cost(data_dir / "artifacts" / task_id, model.image_size)
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)

    running = [t.to_running_s for t in timings if t.to_running_s is not None]
    first_metric = [t.to_first_metric_s for t in timings if t.to_first_metric_s is not None]
    followed = [*timings, *(timing for _, _, timing in trained.values())]
    sse = [latency for t in followed for latency in t.sse_latencies_s]
    failed = [t for t in timings if t.status != "SUCCEEDED"]

    table = Table(title="(a, b) tasks: submit -> RUNNING / first metric; metric -> SSE client")
    for column in ("measure", "n", "p50", "p95", "max"):
        table.add_column(column, justify="right" if column != "measure" else "left")
    for name, values in (
        ("submit -> RUNNING", running),
        ("submit -> first metric", first_metric),
        ("metric -> SSE client", sse),
    ):
        table.add_row(
            name,
            str(len(values)),
            ms(percentile(values, 50)),
            ms(percentile(values, 95)),
            ms(max(values, default=float("nan"))),
        )
    console.print(table)
    if failed:
        console.print(
            f"[red]{len(failed)} tiny task(s) did not succeed:[/] "
            + ", ".join(f"{t.task_id} {t.status} {t.error or ''}" for t in failed)
        )

    table = Table(title="(c) POST /api/models/{id}/predict, one PNG per request")
    columns = ("model", "batching", "clients", "requests", "p50", "p99", "requests/s", "server CPU/req")
    for column in (*columns, "errors"):
        table.add_column(column, justify="right" if column != "model" else "left")
    for model in MODELS:
        for label, rows in (("on", batched[model]), ("off", unbatched[model])):
            for row in rows:
                table.add_row(
                    model.name,
                    label,
                    str(row.concurrency),
                    str(row.requests),
                    ms(row.p50_s),
                    ms(row.p99_s),
                    f"{row.per_s:.1f}",
                    ms(row.server_cpu_s),
                    str(row.errors),
                )
    console.print(table)

    table = Table(title="(d) reads at concurrency 8")
    for column in ("endpoint", "requests", "p50", "p99", "requests/s", "server CPU/req", "errors"):
        table.add_column(column, justify="right" if column != "endpoint" else "left")
    for name, row in read.items():
        table.add_row(
            name,
            str(row.requests),
            ms(row.p50_s),
            ms(row.p99_s),
            f"{row.per_s:.1f}",
            ms(row.server_cpu_s),
            str(row.errors),
        )
    console.print(table)

    p50_running = percentile(running, 50)
    p50_sse = percentile(sse, 50)
    predict_c1 = batched[SKETCHER_MODEL][0].p50_s
    ratios = {}
    for model in MODELS:
        on, off = batched[model][-1], unbatched[model][-1]
        ratios[model] = on.per_s / off.per_s if off.per_s else float("nan")
        # What batching can share out is the answering; the rest of a request (HTTP, multipart, auth,
        # the model lookup, the response) is paid per request whatever the batch.
        cost = costs[model]
        console.print(
            f"{model.name}: answering in-process {ms(cost.alone_s)}/image alone, {ms(cost.batched_s)}/image "
            f"in batches of 32 (x{cost.alone_s / cost.batched_s:.2f}); server CPU per request at 32 "
            f"clients {ms(off.server_cpu_s)} unbatched, {ms(on.server_cpu_s)} batched."
        )
    targets = [
        Target("submit -> RUNNING p50", _s(p50_running), "< 2 s", p50_running < 2.0 if running else None),
        Target("metric -> SSE p50", _s(p50_sse), "< 1 s", p50_sse < 1.0 if sse else None),
        Target("predict p50, sketcher CNN, concurrency 1", ms(predict_c1), "< 30 ms", predict_c1 < 0.030),
        *(
            Target(f"batched / unbatched, {model.name}, c=32", f"{ratio:.2f}x", ">= 2x", ratio >= 2.0)
            for model, ratio in ratios.items()
        ),
    ]
    table = Table(title="targets")
    for column in ("target", "figure", "goal", "verdict"):
        table.add_column(column)
    for target in targets:
        table.add_row(target.name, target.figure, target.goal, verdict(target.ok))
    console.print(table)
    reported = [(row.batched, True) for rows in batched.values() for row in rows] + [
        (row.batched, False) for rows in unbatched.values() for row in rows
    ]
    if any(said is not asked for said, asked in reported):
        console.print("[red]the servers did not report the batching asked for[/]")

    results = {
        "warmup": asdict(warmup),
        "tasks": [asdict(t) for t in timings],
        "trained": {model.name: asdict(timing) for model, (_, _, timing) in trained.items()},
        "submit_to_running_s": {"p50": p50_running, "p95": percentile(running, 95)},
        "submit_to_first_metric_s": {
            "p50": percentile(first_metric, 50),
            "p95": percentile(first_metric, 95),
        },
        "metric_to_sse_s": {"p50": p50_sse, "p95": percentile(sse, 95), "n": len(sse)},
        "predict": {
            model.name: {
                "batched": [asdict(r) for r in batched[model]],
                "unbatched": [asdict(r) for r in unbatched[model]],
                "answering_in_process": asdict(costs[model]),
            }
            for model in MODELS
        },
        "reads": {name: asdict(row) for name, row in read.items()},
        "targets": [asdict(t) for t in targets],
        "machine": {"cpus": os.cpu_count()},
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    sys.exit(0 if all(t.ok is not False for t in targets) and not failed else 1)


if __name__ == "__main__":
    main()
