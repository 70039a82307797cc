"""Logins under load: does a burst of sign-ins slow down everyone else?

    .venv/bin/python benchmarks/bench_logins.py
    .venv/bin/python benchmarks/bench_logins.py --logins 40

Starts `dragdl serve` (production argon2 cost) with a temporary data dir, signs up `--logins` users,
then sends all their logins at once while one signed-in client keeps calling `GET /api/auth/me` (a
route that takes a thread-pool worker and a database session, like most). Prints the time the burst
took and the latency of the other client's requests during it, next to the same requests at rest.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench_service import serve

PASSWORD = "correct horse battery"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=40, help="Logins sent at once.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp) / "data", Path(tmp) / "server.log") as server:
        url = server.url
        for i in range(args.logins):
            answer = httpx.post(
                f"{url}/api/auth/signup", json={"username": f"user{i}", "password": PASSWORD}, timeout=60
            )
            answer.raise_for_status()
        cookies = httpx.post(
            f"{url}/api/auth/login", json={"username": "user0", "password": PASSWORD}
        ).cookies

        def me_latencies(stop: threading.Event | None, count: int = 0) -> list[float]:
            out: list[float] = []
            with httpx.Client(cookies=cookies, timeout=60) as client:
                while (stop is not None and not stop.is_set()) or len(out) < count:
                    start = time.perf_counter()
                    client.get(f"{url}/api/auth/me").raise_for_status()
                    out.append((time.perf_counter() - start) * 1000)
            return out

        def login(i: int) -> int:
            body = {"username": f"user{i}", "password": PASSWORD}
            return httpx.post(f"{url}/api/auth/login", json=body, timeout=300).status_code

        at_rest = me_latencies(None, count=100)
        stop = threading.Event()
        with ThreadPoolExecutor(args.logins + 1) as pool:
            during = pool.submit(me_latencies, stop)
            start = time.perf_counter()
            statuses = list(pool.map(login, range(args.logins)))
            burst_s = time.perf_counter() - start
            stop.set()
            busy = during.result()
    print(f"{args.logins} logins at once: answers {sorted(set(statuses))}, all answered in {burst_s:.2f} s")
    print(
        f"GET /api/auth/me at rest:        p50 {statistics.median(at_rest):7.1f} ms  "
        f"p99 {percentile(at_rest, 0.99):7.1f} ms"
    )
    print(
        f"GET /api/auth/me during logins:  p50 {statistics.median(busy):7.1f} ms  "
        f"p99 {percentile(busy, 0.99):7.1f} ms  max {max(busy):7.1f} ms  ({len(busy)} requests)"
    )


if __name__ == "__main__":
    main()
