"""One user attacks a live `dragdl serve` while another trains and predicts (issue 23's soak).

    .venv/bin/python benchmarks/bench_abuse.py
    .venv/bin/python benchmarks/bench_abuse.py --epochs 60 --json out.json

Starts `dragdl serve` on a free loopback port with a temporary data dir and signs up two users.
`victim` trains the iris logistic regression (examples/logistic_regression_iris.json, `--epochs` on
the CPU), polls `GET /api/health` every 50 ms the whole time from a process of its own (in this one,
the attacker's client building hundreds of megabytes of bodies would delay its measurements by the
GIL), and predicts rows with its model once the task ended. Meanwhile `attacker` (after training a
tiny model of its own, which finding 13 needs) sends, one after another and each a bounded number of
times:

1. a Parquet file whose one cell is a list of 2 x 10^7 zeros, and one whose dictionary-encoded text
   decodes to 3 GB (10^6 rows of one 3,000-character value);
2. a grid sweep of 10^12 points (three params of 10^4 steps);
3. a grid sweep whose values rounded to lr = 0.0 before the fix (1e-13 steps; it now trains: one
   trial of one epoch), stopped at once;
9. a CSV with a 100 MB cell, and one with 10^6 categories;
10. a settled sweep of 1,000 trials (written into the server's database: no API runs 1,000 trials
    in a benchmark), whose detail it polls 20 times;
13. a `predict/rows` CSV of 10^6 columns x 10 rows on its own model.

Prints each attack's answers (status, seconds), the victim's health p50/p99 (target p99 < 250 ms),
its task's end state (target SUCCEEDED) and the server's resident memory above its idle size
(the peak VmRSS of the API process and its CPU pool's workers together, sampled every 50 ms;
target < 2 GB). Each phase's health checks are printed too: those that overlapped each attack's
requests, and those between attacks. Exit status 1 when a target
fails. Loopback only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_service import PASSWORD, Server, percentile, serve

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "dragdl" / "examples"
TARGET_HEALTH_P99_S = 0.25
TARGET_RSS_BYTES = 2 * 1024**3
FINAL = ("SUCCEEDED", "FAILED", "STOPPED")


def iris(epochs: int, search: dict[str, Any] | None = None) -> dict[str, Any]:
    graph: dict[str, Any] = json.loads((EXAMPLES / "logistic_regression_iris.json").read_text())
    train = next(n for n in graph["nodes"] if n["id"] == "train")
    train["params"].update(epochs=epochs, device="cpu", early_stopping=False)
    if search:
        graph["search"] = search
    return graph


def user(url: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=300, headers={"X-Requested-With": "bench"})
    client.post("/api/auth/signup", json={"username": name, "password": PASSWORD}).raise_for_status()
    return client


def rss(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0  # the process is gone
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def server_rss(pid: int) -> int:
    """The API process's resident memory and its CPU pool's workers' (multiprocessing children that
    read uploads and compute importance for it; Ray's processes are not counted)."""
    total = rss(pid)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and b"multiprocessing" in command:
            total += rss(int(entry.name))
    return total


class Sampler(threading.Thread):
    """Calls `probe` every `every_s` until stopped, keeping what it returns and when it was called."""

    def __init__(self, probe: Callable[[], float], every_s: float) -> None:
        super().__init__(daemon=True)
        self.probe, self.every_s = probe, every_s
        self.values: list[float] = []
        self.times: list[float] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.every_s):
            started = time.monotonic()
            self.values.append(self.probe())
            self.times.append(started)


def probe_health(url: str, cookies: dict[str, str], every_s: float, ready: Any, stop: Any, out: Any) -> None:
    """The victim's health checks, in a process of their own: GET /api/health every `every_s` until
    `stop` is set, then (the monotonic time each was sent, its latency; inf for no answer) to `out`."""
    client = httpx.Client(base_url=url, cookies=cookies, timeout=30, headers={"X-Requested-With": "bench"})
    times: list[float] = []
    values: list[float] = []
    ready.set()
    while not stop.wait(every_s):
        started = time.monotonic()
        try:
            client.get("/api/health")
            values.append(time.monotonic() - started)
        except httpx.HTTPError:
            values.append(float("inf"))  # no answer counts as the worst latency
        times.append(started)
    out.send((times, values))


class HealthProbe:
    """`probe_health` in a spawned process; `finish()` stops it and keeps what it measured."""

    def __init__(self, url: str, cookies: dict[str, str], every_s: float) -> None:
        context = multiprocessing.get_context("spawn")
        self.ready, self.stop = context.Event(), context.Event()
        self._results, sending = context.Pipe(duplex=False)
        args = (url, cookies, every_s, self.ready, self.stop, sending)
        self.process = context.Process(target=probe_health, args=args, daemon=True)
        self.times: list[float] = []
        self.values: list[float] = []

    def start(self) -> None:
        self.process.start()
        if not self.ready.wait(120):
            raise RuntimeError("the health probe's process did not start")

    def finish(self) -> None:
        self.stop.set()
        self.times, self.values = self._results.recv()
        self.process.join(30)


Window = tuple[str, float, float]
"""An attack's name and the monotonic times its request was sent and answered."""


def by_phase(probe: HealthProbe, windows: list[Window]) -> list[tuple[str, list[float]]]:
    """The checks whose call overlapped each attack's request (one phase per attack name, in the
    order first sent), then those that overlapped none ("between attacks")."""
    phases: dict[str, list[float]] = {}
    quiet: list[float] = []
    for started, value in zip(probe.times, probe.values, strict=True):
        ended = started + (value if value != float("inf") else 30.0)
        names = [name for name, begin, end in windows if started < end and ended > begin]
        for name in dict.fromkeys(names):
            phases.setdefault(name, []).append(value)
        if not names:
            quiet.append(value)
    for name, _, _ in windows:
        phases.setdefault(name, [])
    return [*phases.items(), ("between attacks", quiet)]


def wait_task(client: httpx.Client, task_id: str, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = str(client.get(f"/api/tasks/{task_id}").json()["status"])
        if status in FINAL:
            return status
        time.sleep(0.5)
    return "TIMEOUT"


def model_of(client: httpx.Client, task_id: str) -> str:
    models = client.get("/api/models").json()["data"]
    return str(next(m["id"] for m in models if m["task_id"] == task_id))


def parquet(table: Any) -> bytes:
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(table, out, compression="zstd")
    return out.getvalue()


def attacks(
    client: httpx.Client, server: Server, data_dir: Path, model_id: str, windows: list[Window]
) -> list[tuple[str, int, float]]:
    import numpy as np
    import pyarrow as pa

    answers: list[tuple[str, int, float]] = []

    def send(name: str, call: Callable[[], httpx.Response]) -> httpx.Response:
        started, begin = time.perf_counter(), time.monotonic()
        response = call()
        answers.append((name, response.status_code, time.perf_counter() - started))
        windows.append((name, begin, time.monotonic()))
        print(
            f"  {name:32s} {response.status_code}  {answers[-1][2]:7.2f} s  {response.text[:120]}", flush=True
        )
        return response

    def upload(name: str, filename: str, data: bytes) -> None:
        send(name, lambda: client.post("/api/datasets", files=[("files", (filename, data))]))

    zeros = pa.array([np.zeros(20_000_000, dtype=np.int64)], type=pa.list_(pa.int64()))
    upload("1 parquet list cell", "zeros.parquet", parquet(pa.table({"id": [1], "zeros": zeros})))
    del zeros
    rows = 1_000_000
    text = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, dtype=np.int32)), pa.array(["x" * 3000]))
    upload("1 parquet dictionary 3 GB", "wide.parquet", parquet(pa.table({"n": np.arange(rows), "t": text})))
    steps = {"type": "float", "low": 0.0, "high": 0.999, "step": 0.0001}  # 10^4 values each, all valid
    huge = iris(1, {"train": {"momentum": steps, "weight_decay": steps, "lr": {**steps, "low": 0.0001}}})
    send("2 grid of 10^12", lambda: client.post("/api/sweeps", json={"graph": huge, "sampler": "grid"}))
    tiny = iris(1, {"train": {"lr": {"type": "float", "low": 1e-13, "high": 1e-12, "step": 1e-13}}})
    body = {"graph": tiny, "sampler": "grid", "trials": 1, "parallel": 1, "pruner": "none"}
    created = send("3 grid rounding to lr=0", lambda: client.post("/api/sweeps", json=body))
    if created.status_code == 201:
        sweep_id = created.json()["id"]
        send("11 stop that sweep", lambda: client.post(f"/api/sweeps/{sweep_id}/stop"))
    upload("9 CSV of a 100 MB cell", "cell.csv", b"x,note\n1," + b"A" * 100_000_000 + b"\n")
    upload(
        "9 CSV of 10^6 categories",
        "ids.csv",
        b"x,key\n" + b"".join(b"1,id%d\n" % i for i in range(1_000_000)),
    )
    sweep_id = settled_sweep(data_dir, client, trials=1000)
    for _ in range(20):
        send("10 detail of 1,000 trials", lambda: client.get(f"/api/sweeps/{sweep_id}"))
    header = ",".join(f"c{i}" for i in range(1_000_000)).encode()
    line = b",".join(b"0" for _ in range(1_000_000))
    wide = header + b"\n" + b"\n".join([line] * 10) + b"\n"
    send(
        "13 predict/rows 10^6 x 10",
        lambda: client.post(f"/api/models/{model_id}/predict/rows", files=[("file", ("wide.csv", wide))]),
    )
    return answers


def settled_sweep(data_dir: Path, client: httpx.Client, trials: int) -> str:
    """A finished sweep of `trials` complete trials of the attacker, written into the database."""
    from dragdl.db.models import Sweep, SweepStatus, SweepTrial
    from dragdl.db.session import make_engine, make_session_factory

    owner = client.get("/api/users/me").json()["user"]["id"]
    engine = make_engine(f"sqlite:///{data_dir / 'dragdl.db'}")
    try:
        with make_session_factory(engine)() as db:
            search = {
                "train": {
                    "lr": {"type": "float", "low": 0.01, "high": 0.3},
                    "momentum": {"type": "float", "low": 0.0, "high": 0.9},
                }
            }
            sweep = Sweep(
                owner_id=owner,
                name="settled",
                base_graph=iris(1, search),
                status=SweepStatus.SUCCEEDED,
                trials=trials,
                parallel=1,
                objective="val_accuracy",
                direction="maximize",
                sampler="random",
                pruner="none",
                resources={},
            )
            db.add(sweep)
            db.flush()
            db.add_all(
                SweepTrial(
                    sweep_id=sweep.id,
                    number=n,
                    params={"train.lr": 0.01 + (n % 29) / 100, "train.momentum": (n % 7) / 10},
                    state="COMPLETE",
                    value=0.5 + 0.4 * ((n * 7919) % 101) / 101,
                    intermediate={},
                    system_attrs={},
                    last_event_id=0,
                )
                for n in range(trials)
            )
            db.commit()
            return str(sweep.id)
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=60, help="The victim's training epochs.")
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    parser.add_argument("--log", type=Path, help="Keep the server's log here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dragdl-abuse-") as tmp:
        data_dir = Path(tmp) / "data"
        with serve(data_dir, args.log or Path(tmp) / "server.log") as server:
            victim, attacker = user(server.url, "victim"), user(server.url, "attacker")
            own = attacker.post("/api/tasks", json={"graph": iris(2)}).json()["id"]
            assert wait_task(attacker, own, 300) == "SUCCEEDED", "the attacker's own model did not train"
            model_id = model_of(attacker, own)
            time.sleep(2)
            idle = server_rss(server.pid)
            memory = Sampler(lambda: float(server_rss(server.pid)), 0.05)
            latencies = HealthProbe(server.url, dict(victim.cookies), 0.05)
            latencies.start()
            memory.start()
            task_id = victim.post("/api/tasks", json={"graph": iris(args.epochs)}).json()["id"]
            windows: list[Window] = []
            answers = attacks(attacker, server, data_dir, model_id, windows)
            status = wait_task(victim, task_id, 900)
            predicted = None
            if status == "SUCCEEDED":
                rows = [
                    {
                        "sepal length (cm)": 5.1,
                        "sepal width (cm)": 3.5,
                        "petal length (cm)": 1.4,
                        "petal width (cm)": 0.2,
                    }
                ]
                victim_model = model_of(victim, task_id)
                predicted = victim.post(
                    f"/api/models/{victim_model}/predict/rows", json={"rows": rows}
                ).status_code
            latencies.finish()
            memory.stop.set()
            memory.join()
    p50, p99 = percentile(latencies.values, 50), percentile(latencies.values, 99)
    above = max(memory.values, default=idle) - idle
    print(
        f"victim health: {len(latencies.values)} checks, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms "
        f"(target < {TARGET_HEALTH_P99_S * 1000:.0f} ms)"
    )
    for name, values in by_phase(latencies, windows):
        worst = max(values, default=float("nan"))
        print(
            f"  health during {name:32s} {len(values):4d} checks, "
            f"p99 {percentile(values, 99) * 1000:7.1f} ms, max {worst * 1000:7.1f} ms"
        )
    print(f"victim task: {status} (target SUCCEEDED); its prediction answered {predicted}")
    print(
        f"server memory: idle {idle / 1024**2:.0f} MB, peak {above / 1024**2:.0f} MB above idle "
        f"(target < {TARGET_RSS_BYTES / 1024**3:.0f} GB)"
    )
    figures = {
        "answers": answers,
        "health_p50_s": p50,
        "health_p99_s": p99,
        "victim_status": status,
        "victim_prediction_status": predicted,
        "idle_rss_bytes": idle,
        "peak_rss_above_idle_bytes": above,
    }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    failed = p99 >= TARGET_HEALTH_P99_S or status != "SUCCEEDED" or above >= TARGET_RSS_BYTES
    any_500 = [name for name, code, _ in answers if code >= 500]
    if any_500:
        print(f"answered 5xx: {', '.join(any_500)}")
    raise SystemExit(1 if failed or any_500 else 0)


if __name__ == "__main__":
    main()
