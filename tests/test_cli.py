"""The `dragdl` command line: clear errors by node, never a traceback; a real training run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dragdl import cli_progress
from dragdl.cli import app
from dragdl.engine.train.events import Event, MetricEvent, StartEvent, StatusEvent
from dragdl.engine.train.reporter import JsonlReporter, Reporter, read_events, summarize_epoch, summarize_test

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
runner = CliRunner()


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    return data


def write(path: Path, graph: dict[str, Any]) -> Path:
    path.write_text(json.dumps(graph))
    return path


def dragdl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real console script in a subprocess, as a user would."""
    exe = Path(sys.executable).parent / "dragdl"
    return subprocess.run(
        [str(exe), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"COLUMNS": "200", "PATH": ""},
    )


def test_validate_prints_shapes_for_a_valid_graph(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["validate", str(EXAMPLES / "sketcher_cnn.json"), "--data-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "16x28x28" in result.output and "576" in result.output


def test_validate_json_output(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(EXAMPLES / "sketcher_cnn.json"), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["ok"] is True and data["shapes"]["pool3"] == "64x3x3"


def test_invalid_graph_lists_errors_by_node_without_traceback(tmp_path: Path) -> None:
    graph = example("sketcher_cnn")
    graph["nodes"][2]["params"]["out_channels"] = "many"
    graph["edges"].append({"source": "conv1", "target": "norm"})
    path = write(tmp_path / "bad.json", graph)
    for command in ("validate", "run"):
        result = dragdl(command, str(path), cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stdout + result.stderr
        assert "conv1" in result.stderr and "out_channels" in result.stderr
        assert "port_type_mismatch" in result.stderr or "too_many_inputs" in result.stderr
    assert not (tmp_path / "runs").exists()  # an invalid graph leaves no run folder (nor log.txt)


def test_malformed_json_names_the_position(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"version": 1, "nodes": [\n  {"id": "a",, }\n]}')
    result = dragdl("validate", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert "line 2" in result.stderr and "Traceback" not in result.stderr
    missing = dragdl("run", str(tmp_path / "nope.json"), cwd=tmp_path)
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_catalog_and_schema_are_json() -> None:
    catalog = runner.invoke(app, ["catalog", "--json"])
    assert catalog.exit_code == 0
    assert any(entry["type"] == "layer.Conv2d" for entry in json.loads(catalog.output))
    table = runner.invoke(app, ["catalog"])
    assert table.exit_code == 0 and "op.RandomAffine" in table.output
    schema = runner.invoke(app, ["schema"])
    assert schema.exit_code == 0 and "nodes" in json.loads(schema.output)["properties"]


@pytest.mark.slow
def test_run_trains_then_resume_extends_the_run(tmp_path: Path) -> None:
    graph = example("sketcher_cnn")
    graph["nodes"][0]["params"]["name"] = "digits"
    graph["nodes"] = [n for n in graph["nodes"] if n["id"] not in ("pool3", "conv3", "relu3")]
    graph["edges"] = [e for e in graph["edges"] if e["source"] not in ("pool2", "conv3", "relu3", "pool3")]
    graph["edges"].append({"source": "pool2", "target": "flatten"})
    path = write(tmp_path / "digits.json", graph)
    out = tmp_path / "run"
    first = dragdl(
        "run", str(path), "--epochs", "2", "--out", str(out), "--data-dir", str(tmp_path), cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr + first.stdout
    assert "test accuracy" in first.stdout and "Per class" in first.stdout
    report = json.loads((out / "report.json").read_text())
    # The terminal says what the run trains in and why, as the report records it.
    chosen = report["fast_path"]
    layout = chosen["memory_format"].replace("_", " ")
    assert f"trains in {chosen['precision']}, {layout} ({chosen['reason']})" in " ".join(first.stdout.split())
    assert report["epochs_completed"] == 2 and report["test"]["test_accuracy"] > 0.5
    assert (out / "model.safetensors").exists() and (out / "graph.json").exists()
    first_log = (out / "log.txt").read_text()
    first_events = (out / "events.jsonl").read_text()
    metrics = [e for e in read_events(out / "events.jsonl") if isinstance(e, MetricEvent)]
    assert [e.epoch for e in metrics if e.scope == "epoch"] == [1, 2]
    for event in metrics:
        # The log and the terminal word the values recorded in events.jsonl the same way.
        if event.scope == "epoch":
            line = f"epoch {event.epoch}/2  {summarize_epoch(event.values)}"
            assert line in first_log and line in first.stdout
        if event.scope == "test":
            assert summarize_test(event.values) in first_log
            assert event.values["test_accuracy"] == report["test"]["test_accuracy"]
    assert first_log.count("training on ") == 1 and "training finished" in first_log
    second = dragdl(
        "run",
        str(path),
        "--epochs",
        "3",
        "--out",
        str(out),
        "--resume",
        "--data-dir",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert second.returncode == 0, second.stderr + second.stdout
    assert "resuming in epoch 3" in second.stdout
    assert json.loads((out / "report.json").read_text())["epochs_completed"] == 3
    log = (out / "log.txt").read_text()
    assert log.startswith(first_log) and (out / "events.jsonl").read_text().startswith(first_events)
    resumed = log[len(first_log) :]
    assert "resuming epoch 3" in resumed and "epoch 3/3  train loss" in resumed
    assert "epoch 1/" not in resumed  # the replayed epochs are in the first attempt's lines already

    # The script exported like the run trains in what the run chose; a run of another graph is refused.
    chosen = json.loads((out / "report.json").read_text())["fast_path"]
    script = tmp_path / "train.py"
    exported = dragdl("export-code", str(path), "-o", str(script), "--like-run", str(out), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    text = script.read_text()
    assert f'PRECISION = "{chosen["precision"]}"' in text
    assert f'MEMORY_FORMAT = "{chosen["memory_format"]}"' in text
    other = write(tmp_path / "iris.json", example("logistic_regression_iris"))
    refused = dragdl("export-code", str(other), "--like-run", str(out), cwd=tmp_path)
    assert refused.returncode == 2
    assert "is a run of another graph" in " ".join(refused.stderr.split())


class _Closes(JsonlReporter):
    closed: list[Path] = []

    def close(self) -> None:
        super().close()
        self.closed.append(self.log_path)


def _interrupted_run(error: BaseException) -> Any:
    def run_graph(raw: Any, ctx: Any, out_dir: Path, reporter: Reporter, **kwargs: Any) -> Any:
        start = StartEvent(2, 10, 100, 20, 20, "cpu", 1000, 1000, batch_size=10)
        events: list[Event] = [StatusEvent("running"), start]
        events.append(MetricEvent("epoch", 1, 10, {"loss": 0.5, "accuracy": 0.8, "epoch_time_s": 1.0}))
        for event in events:
            reporter.emit(event)
        raise error

    return run_graph


@pytest.mark.parametrize(
    ("error", "exit_code", "logged"),
    [
        (KeyboardInterrupt(), 130, "WARNING interrupted; continue with: dragdl run "),
        (RuntimeError("disk full"), 1, "ERROR   training failed (train_failed): RuntimeError: disk full"),
    ],
)
def test_run_logs_and_closes_its_files_when_it_stops_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException, exit_code: int, logged: str
) -> None:
    monkeypatch.setattr("dragdl.engine.run.run_graph", _interrupted_run(error))
    monkeypatch.setattr(cli_progress, "JsonlReporter", _Closes)
    _Closes.closed.clear()
    out = tmp_path / "run"
    path = write(tmp_path / "g.json", example("sketcher_cnn"))
    result = runner.invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == exit_code, result.output
    log = (out / "log.txt").read_text()
    assert "epoch 1/2  train loss 0.5000 acc 80.00%  1.0 s" in log and logged in log
    assert "epoch 1/2  train loss 0.5000 acc 80.00%  1.0 s" in result.stdout
    assert len(read_events(out / "events.jsonl")) == 4  # the run's three, and why it ended
    assert _Closes.closed == [out / "log.txt"]


def test_server_commands_ask_the_server_of_the_last_login(tmp_path: Path) -> None:
    """Issue 19: `dragdl tasks` asked 127.0.0.1:8000 whatever server the user had logged in to."""
    from dragdl.client import save_token

    credentials = tmp_path / ".dragdl" / "credentials.json"
    save_token("http://127.0.0.1:9", "dgl_first", "alice", credentials)  # port 9: nothing listens
    save_token("http://127.0.0.1:7", "dgl_last", "alice", credentials)
    env = {"HOME": str(tmp_path), "COLUMNS": "200", "DRAGDL_SERVER": "", "DRAGDL_TOKEN": ""}
    result = runner.invoke(app, ["tasks"], env=env)
    assert result.exit_code == 1
    assert "server: http://127.0.0.1:7 (your last login" in result.output
    assert "127.0.0.1:8000" not in result.output and "127.0.0.1:9" not in result.output
    named = runner.invoke(app, ["tasks", "--server", "http://127.0.0.1:9"], env=env)
    assert "127.0.0.1:9" in named.output and "your last login" not in named.output


def test_run_of_a_graph_on_a_server_dataset_says_how_to_train_it(tmp_path: Path) -> None:
    graph = {
        "version": 1,
        "name": "penguins",
        "nodes": [
            {
                "id": "data",
                "type": "dataset.table",
                "params": {"source": "uploaded", "dataset_id": "ds-0f3a"},
            },
            {"id": "fc", "type": "layer.Linear", "params": {"out_features": "auto"}},
            {"id": "train", "type": "train.Classifier", "params": {"epochs": 1}},
        ],
        "edges": [{"source": "data", "target": "fc"}, {"source": "fc", "target": "train"}],
    }
    path = write(tmp_path / "penguins.json", graph)
    result = runner.invoke(app, ["run", str(path), "--data-dir", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    said = " ".join(result.output.split())  # the console wraps long lines
    assert "dataset ds-0f3a not found" in said
    assert "reads the dataset ds-0f3a uploaded to a DragDL server" in said
    assert "Train it on that server: dragdl submit" in said and "penguins.json --wait" in said
