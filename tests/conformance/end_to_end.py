"""The conformance run: a new input type and a new task kind, each one module plus one registration
line, taken end to end through DragDL's own code paths.

Run as `python -m tests.conformance.end_to_end <workdir>` (tests/test_conformance.py does, in a
process of its own: the registrations last for the process, and the catalog's tests walk every
registered node). It prints one JSON line of what it saw; the test judges it.

For the new type (`vector`, tests/conformance/vectors.py) and the new kind (`margin`,
tests/conformance/margin.py), alone and with the built-in ones:
- validation over REST: shapes worded by the type, the dataset summary, errors worded by the kind;
- training (`run_graph`), the report's metrics as the kind declares them;
- the bundle: its input type and kind, an ONNX export checked against PyTorch;
- prediction over REST from an uploaded file, through a model row made as the worker makes it;
- the exported training script, run for real.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
from fastapi.testclient import TestClient
from tests.conformance.margin import Margin
from tests.conformance.vectors import VECTORS, make_vectors, vec_file

from dragdl.engine.inputs.registry import register_input_type
from dragdl.engine.tasks.registry import register_task_kind

register_input_type(VECTORS)  # the one line the input type adds
register_task_kind(Margin())  # the one line the task kind adds

CSRF = {"X-Requested-With": "XMLHttpRequest"}


Node = tuple[str, dict[str, Any]]


def graph(name: str, dataset: Node, layers: list[Node], train: Node) -> dict[str, Any]:
    """A chain: the dataset node, the layers in order, the train node."""
    nodes = [("data", *dataset)]
    nodes += [(f"l{i}", kind, params) for i, (kind, params) in enumerate(layers)]
    nodes.append(("train", *train))
    return {
        "version": 1,
        "name": name,
        "nodes": [{"id": i, "type": t, "params": p} for i, t, p in nodes],
        "edges": [{"source": a[0], "target": b[0]} for a, b in itertools.pairwise(nodes)],
    }


MLP = [
    ("layer.Linear", {"out_features": 32}),
    ("layer.ReLU", {}),
    ("layer.Linear", {"out_features": "auto"}),
]
FAST = {"epochs": 4, "batch_size": 32, "lr": 0.01, "device": "cpu", "seed": 3}
VECTOR_DATA = ("dataset.vectors", {"count": 600, "dim": 8, "seed": 5})
WAVES = ("dataset.sequence", {"name": "waves"})
WAVE_LAYERS = [
    ("op.StandardizeFeatures", {}),
    ("layer.Conv1d", {"out_channels": 16, "kernel_size": 5}),
    ("layer.ReLU", {}),
    ("layer.GlobalPoolTime", {}),
    ("layer.Linear", {"out_features": "auto"}),
]


def signed_in(app: Any) -> TestClient:
    client = TestClient(app)
    client.headers.update(CSRF)
    account = {"username": "ada", "password": "correct horse battery"}
    assert client.post("/api/auth/signup", json=account).status_code == 201
    assert client.post("/api/auth/login", json=account).status_code == 200
    return client


def validate(client: TestClient, g: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/graphs/validate", json=g)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def train(g: dict[str, Any], out: Path, data_dir: Path) -> dict[str, Any]:
    from dragdl.engine.data.base import DataContext
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    result = run_graph(g, DataContext(data_dir=data_dir, allow_download=False), out, ListReporter())
    assert result.status == "succeeded", result
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    return report


def model_row(app: Any, client: TestClient, bundle: Path, name: str) -> str:
    """A model row over the bundle, as the worker makes one (`runner.worker.model_fields`)."""
    import shutil

    from dragdl.db.models import Model
    from dragdl.runner.worker import model_fields

    settings = app.state.settings
    folder = settings.artifacts_dir / name
    shutil.copytree(bundle, folder)
    me = client.get("/api/auth/me").json()
    with app.state.sessions() as db:
        row = Model(owner_id=me["id"], name=name, path=f"artifacts/{name}", **model_fields(folder))
        db.add(row)
        db.commit()
        return row.id


def run_script(g: dict[str, Any], data_dir: Path, folder: Path) -> dict[str, Any]:
    """The exported script, written and run for its epochs: what it printed of its test."""
    from dragdl.engine.compile.codegen import generate_script
    from dragdl.engine.data.base import DataContext

    script = generate_script(g, DataContext(data_dir=data_dir, allow_download=False))
    folder.mkdir(parents=True)
    (folder / "train.py").write_text(script)
    done = subprocess.run(
        [sys.executable, "train.py", "--out", "w.safetensors"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    tests = [line for line in done.stdout.splitlines() if line.startswith("test accuracy:")]
    return {"test_line": tests[-1] if tests else None, "weights": (folder / "w.safetensors").exists()}


def main(work: Path) -> dict[str, Any]:
    from dragdl.engine.bundle.bundle import load_bundle
    from dragdl.engine.bundle.export import export_bundle
    from dragdl.server.app import create_app
    from dragdl.server.settings import Settings

    seen: dict[str, Any] = {}
    data_dir = work / "data"
    app = create_app(Settings(data_dir=data_dir, database_url=f"sqlite:///{work / 'dragdl.db'}"))
    with TestClient(app):
        client = signed_in(app)

        # The catalog serves the new node types and the new kind with its presentation.
        catalog = client.get("/api/catalog").json()
        types = {node["type"] for node in catalog["nodes"]}
        seen["catalog_nodes"] = sorted(types & {"dataset.vectors", "train.Margin"})
        kinds = {kind["name"]: kind for kind in catalog["task_kinds"]}
        seen["catalog_kind"] = {
            k: kinds["margin"][k] for k in ("title", "headline", "ranks_classes", "answer_schema")
        }
        seen["catalog_kind_metrics"] = [m["key"] for m in kinds["margin"]["metrics"]]
        seen["catalog_zh_ok"] = client.get("/api/catalog", params={"lang": "zh"}).status_code == 200

        # 1. The new type with the new kind.
        both = graph("vectors by margin", VECTOR_DATA, MLP, ("train.Margin", {**FAST, "margin": 1.0}))
        checked = validate(client, both)
        seen["valid"] = checked["ok"]
        seen["shapes"] = {k: checked["shapes"][k] for k in ("data", "l0", "l2")}
        seen["summary"] = {k: checked["dataset"][k] for k in ("input_type", "classes", "count")}
        seen["task"] = checked["task"]
        wrong = json.loads(json.dumps(both))
        wrong["nodes"][3]["params"]["out_features"] = 5
        refused = validate(client, wrong)
        seen["wrong_width"] = [(e["code"], e["node_id"]) for e in refused["errors"]]

        report = train(both, work / "runs" / "both", data_dir)
        seen["report_task"] = report.get("task")
        seen["test_metrics"] = sorted(report["test"])
        seen["test_accuracy"] = report["test"]["test_accuracy"]
        seen["test_margin"] = report["test"]["test_margin"]
        seen["report_details"] = sorted(k for k in report if k == "confusion_matrix" or k == "test_details")

        bundle = load_bundle(work / "runs" / "both")
        seen["bundle"] = [bundle.input_type.name, bundle.task.name]
        onnx = export_bundle(work / "runs" / "both", "onnx")
        seen["onnx"] = {
            "file": onnx.name,
            "max_abs_diff": load_bundle(work / "runs" / "both").manifest.exports["onnx"].max_abs_diff,
        }

        # Prediction over REST from a .vec file, and in process: the same answers.
        values, labels = make_vectors(600, 8, 5)
        model_id = model_row(app, client, work / "runs" / "both", "both")
        listed = client.get(f"/api/models/{model_id}").json()
        seen["model_row"] = [listed["input_type"], listed["task"], listed["classes"]]
        sample = values[:20]
        response = client.post(
            f"/api/models/{model_id}/predict", files=[("files", ("points.vec", vec_file(sample)))]
        )
        assert response.status_code == 200, response.text
        answers = response.json()["predictions"]
        for answer in answers:
            jsonschema.validate(answer["answer"], Margin.answer_schema)
        local = bundle.predict_samples(bundle.decode_file("points.vec", vec_file(sample)))
        seen["rest_answers"] = len(answers)
        seen["rest_first"] = {k: answers[0][k] for k in ("filename", "sample", "summary")}
        seen["rest_summary_is_the_kinds"] = answers[0]["summary"] == Margin().summarize(answers[0]["answer"])
        seen["rest_matches_bundle"] = [a["answer"] for a in answers] == local
        seen["rest_correct"] = sum(
            a["answer"]["label"] == ("red", "green", "blue")[y]
            for a, y in zip(answers, labels[:20], strict=True)
        )
        bad = client.post(f"/api/models/{model_id}/predict", files=[("files", ("bad.vec", b"[[1, 2], [3]]"))])
        seen["bad_file"] = [bad.status_code, bad.json().get("detail") if bad.status_code < 500 else None]

        seen["script_both"] = run_script(both, data_dir, work / "scripts" / "both")

        # 2. The new type with a built-in kind, and a built-in type with the new kind.
        classifier = graph("vectors", VECTOR_DATA, MLP, ("train.Classifier", FAST))
        seen["classifier_valid"] = validate(client, classifier)["ok"]
        seen["classifier_accuracy"] = train(classifier, work / "runs" / "cls", data_dir)["test"][
            "test_accuracy"
        ]
        seen["script_classifier"] = run_script(classifier, data_dir, work / "scripts" / "cls")

        waves = graph("waves by margin", WAVES, WAVE_LAYERS, ("train.Margin", {**FAST, "batch_size": 64}))
        checked = validate(client, waves)
        seen["waves_valid"] = checked["ok"]
        seen["waves_shapes"] = {k: checked["shapes"][k] for k in ("data", "l3")}
        seen["waves_accuracy"] = train(waves, work / "runs" / "waves", data_dir)["test"]["test_accuracy"]
        seen["script_waves"] = run_script(waves, data_dir, work / "scripts" / "waves")
    return seen


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
