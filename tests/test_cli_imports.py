"""`dragdl run` trains locally: its process imports no web server, database, Ray or ONNX module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# A local run has no use for these; each costs start-up time (the server stack, Ray and ONNX
# take seconds to import) and would tie the command line to the server's dependencies.
FORBIDDEN_PACKAGES = frozenset(
    {
        "fastapi",
        "starlette",
        "uvicorn",
        "sqlalchemy",
        "alembic",
        "psycopg",
        "ray",
        "onnx",
        "onnxruntime",
        "httpx",
    }
)
FORBIDDEN_DRAGDL = ("dragdl.server", "dragdl.runner", "dragdl.client")

# The console script's own entry, then every module the process holds once the run has ended.
PROBE = """
import json, sys
from dragdl.cli import main
sys.argv = ["dragdl", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print("MODULES " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def small_digits_graph() -> dict[str, object]:
    """The sketcher template on the built-in 8x8 digits, two conv blocks: seconds on a CPU."""
    graph: dict[str, list[dict[str, object]]] = json.loads((EXAMPLES / "sketcher_cnn.json").read_text())
    graph["nodes"][0]["params"] = {"name": "digits"}
    graph["nodes"] = [n for n in graph["nodes"] if n["id"] not in ("pool3", "conv3", "relu3")]
    graph["edges"] = [e for e in graph["edges"] if e["source"] not in ("pool2", "conv3", "relu3", "pool3")]
    graph["edges"].append({"source": "pool2", "target": "flatten"})
    return dict(graph)


def test_dragdl_run_imports_no_server_ray_or_onnx_module(tmp_path: Path) -> None:
    graph = tmp_path / "digits.json"
    graph.write_text(json.dumps(small_digits_graph()))
    out = tmp_path / "run"
    command = [sys.executable, "-c", PROBE, "run", str(graph), "--epochs", "1"]
    command += ["--out", str(out), "--data-dir", str(tmp_path / "data")]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("MODULES ")]
    assert lines, done.stderr[-3000:] + done.stdout[-3000:]
    found = json.loads(lines[-1].removeprefix("MODULES "))
    assert found["code"] == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert (out / "model.safetensors").is_file() and (out / "report.json").is_file()
    modules: list[str] = found["modules"]
    assert "dragdl.engine.run" in modules and "torch" in modules  # the probe saw the real run
    unwanted = [
        name
        for name in modules
        if name.split(".")[0] in FORBIDDEN_PACKAGES or name.startswith(FORBIDDEN_DRAGDL)
    ]
    assert unwanted == [], (
        f"`dragdl run` imported {len(unwanted)} module(s) it has no use for: {unwanted[:20]}"
    )


def test_the_bundle_package_imports_prediction_and_exports_on_first_use() -> None:
    """`dragdl run` writes a bundle through `bundle.writer`; `dragdl predict` still finds every name."""
    code = (
        "import sys, json\n"
        "import dragdl.engine.bundle.writer\n"
        "before = sorted(m for m in sys.modules if m.startswith('dragdl.engine.bundle'))\n"
        "from dragdl.engine.bundle import export_bundle, load_bundle, Bundle, ImageError, Manifest\n"
        "print(json.dumps([before, load_bundle.__module__, export_bundle.__module__]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    before, load_home, export_home = json.loads(done.stdout.strip().splitlines()[-1])
    assert "dragdl.engine.bundle.export" not in before and "dragdl.engine.bundle.bundle" not in before
    assert (load_home, export_home) == ("dragdl.engine.bundle.bundle", "dragdl.engine.bundle.export")
