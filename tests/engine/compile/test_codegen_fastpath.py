"""The exported script trains in the precision and memory format its run chose."""

from __future__ import annotations

import json
from pathlib import Path

from dragdl.engine.compile.codegen import generate_script
from dragdl.engine.run import run_graph
from dragdl.engine.train.reporter import ListReporter

from .test_codegen import ctx_for, digits_graph, run_script


def test_a_run_s_choice_replaces_auto_in_the_script(tmp_path: Path) -> None:
    graph = digits_graph(device="cpu")
    probe = [{"candidate": "fp32 contiguous"}, {"candidate": "bf16 channels_last"}]
    chosen = {"precision": "bf16", "memory_format": "channels_last", "measurements": probe}
    script = generate_script(graph, ctx_for(tmp_path), fast_path=chosen)
    assert 'PRECISION = "bf16"  # measured by the DragDL run of this graph' in script
    assert 'MEMORY_FORMAT = "channels_last"  # measured by the DragDL run of this graph' in script
    # A run too small to probe chose without measuring: the script does not claim a measurement.
    unmeasured = {"precision": "fp32", "memory_format": "contiguous", "measurements": []}
    small = generate_script(graph, ctx_for(tmp_path), fast_path=unmeasured)
    assert 'PRECISION = "fp32"  # what the DragDL run of this graph chose' in small
    assert "measured" not in small.split("PRECISION")[1].splitlines()[0]
    # Without a run, "auto" stays and the script resolves it as the engine does without measuring.
    plain = generate_script(graph, ctx_for(tmp_path))
    assert 'PRECISION = "auto"' in plain and 'MEMORY_FORMAT = "auto"' in plain
    # A setting of the train node is never replaced.
    fixed = generate_script(digits_graph(device="cpu", precision="fp32"), ctx_for(tmp_path), fast_path=chosen)
    assert 'PRECISION = "fp32"' in fixed and 'MEMORY_FORMAT = "channels_last"' in fixed


def test_the_script_in_bf16_channels_last_trains_to_the_engine_s_result(tmp_path: Path) -> None:
    graph = digits_graph(device="cpu", precision="bf16", memory_format="channels_last")
    result = run_graph(graph, ctx_for(tmp_path), tmp_path / "run", ListReporter(), overrides={"epochs": 1})
    assert result.test is not None
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert (report["fast_path"]["precision"], report["fast_path"]["memory_format"]) == (
        "bf16",
        "channels_last",
    )
    path = tmp_path / "train.py"
    path.write_text(
        generate_script(graph, ctx_for(tmp_path), fast_path=report["fast_path"]), encoding="utf-8"
    )
    accuracy, _, _ = run_script(path, epochs=1)
    assert abs(accuracy - result.test["test_accuracy"]) <= 0.02, (accuracy, result.test["test_accuracy"])
