"""dataset.sequence: built-in sets described without generating them, files on the server with errors
on the field concerned, and sequence graphs that validate, train through run_graph and resume."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors.torch
from tests.engine.data.sequence_samples import write_csv, write_ts
from tests.graphs import chain

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data import sequence_builtin
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.batch import LENGTHS
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.nodes.sequence_datasets import SequenceParams
from dragdl.engine.run import prepare, run_graph
from dragdl.engine.train.events import Event, ProgressEvent
from dragdl.engine.train.reporter import ListReporter
from dragdl.engine.train.trainer import TIMING_KEYS

NODE = get_node_type("dataset.sequence")


def waves(count: int, lengths: list[int] | int, seed: int = 0) -> tuple[list[np.ndarray], list[str]]:
    """Two learnable classes of 2-feature series: slow waves ('slow') and fast ones ('fast')."""
    rng = np.random.default_rng(seed)
    sizes = [lengths] * count if isinstance(lengths, int) else lengths
    series, labels = [], []
    for i, steps in enumerate(sizes):
        fast = i % 2
        time = np.arange(steps) / 8.0 * (4.0 if fast else 1.0) + rng.uniform(0, 6)
        values = np.stack([np.sin(time), np.cos(time)], axis=1) + rng.normal(0, 0.1, (steps, 2))
        series.append(np.round(values, 4).astype(np.float32))
        labels.append("fast" if fast else "slow")
    return series, labels


def ts_file(root: Path, name: str, lengths: list[int] | int, count: int = 48) -> Path:
    series, labels = waves(count, lengths)
    return write_ts(root / name, series, labels, ["fast", "slow"])


def gru_graph(path: str, *ops: tuple[str, str, dict[str, Any]], **train: Any) -> dict[str, Any]:
    return chain(
        "sequences",
        [
            ("data", "dataset.sequence", {"source": "file", "path": path}),
            *ops,
            ("gru", "layer.GRU", {"hidden_size": 8}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            (
                "train",
                "train.Classifier",
                {"epochs": 1, "batch_size": 8, "device": "cpu", "lr": 0.01, **train},
            ),
        ],
    )


@pytest.fixture
def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


def test_a_built_in_set_is_described_without_generating_it(ctx: DataContext) -> None:
    sequence_builtin._waves.cache_clear()
    info = NODE.describe(SequenceParams(name="waves"), ctx)
    assert sequence_builtin._waves.cache_info().currsize == 0
    assert (info.classes, info.count, info.shape) == (("sine", "square", "sawtooth"), 1500, (64, 1))
    assert NODE.open(SequenceParams(name="waves"), ctx).info == info
    assert NODE.describe(SequenceParams(name="seq-mnist"), ctx).shape == (28, 28)
    assert NODE.describe(SequenceParams(name="waves-frequency"), ctx).classes == ()


def test_a_gru_graph_on_the_built_in_waves_validates_with_sequence_edges(ctx: DataContext) -> None:
    graph = chain(
        "waves",
        [
            ("data", "dataset.sequence", {"name": "waves"}),
            ("gru", "layer.GRU", {"hidden_size": 32}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {}),
        ],
    )
    result = validate_graph(graph, ctx)
    assert result.ok, result.errors
    assert result.shapes["data"] == "64 x 1 seq"
    assert result.shapes["fc"] == "3"
    assert result.dataset is not None and result.dataset.input_type == "sequence"
    assert result.dataset.classes == ["sine", "square", "sawtooth"]


def test_files_on_the_server_describe_their_shape(tmp_path: Path, ctx: DataContext) -> None:
    ts_file(tmp_path, "fixed.ts", 12, count=6)
    ts_file(tmp_path, "varying.ts", [5, 9, 7, 12, 6, 8], count=6)
    fixed = NODE.describe(SequenceParams(source="file", path="fixed.ts"), ctx)
    assert (fixed.classes, fixed.count, fixed.shape) == (("fast", "slow"), 6, (12, 2))
    assert NODE.describe(SequenceParams(source="file", path="varying.ts"), ctx).shape == (None, 2)
    graph = gru_graph("varying.ts")
    assert validate_graph(graph, ctx).shapes["data"] == "? x 2 seq"


def test_a_recording_is_cut_into_windows(tmp_path: Path, ctx: DataContext) -> None:
    rows = np.column_stack([np.arange(40.0), np.arange(40.0) * 2, np.arange(40) // 20])
    write_csv(tmp_path / "walk.csv", rows, header=["x", "y", "moving"])
    params = SequenceParams(source="file", path="walk.csv", label_column="moving", window=10, stride=5)
    info = NODE.describe(params, ctx)
    assert (info.count, info.shape, info.classes) == (7, (10, 2), ("0.0", "1.0"))


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"source": "file"}, "path", "choose the sequence files"),
        ({"source": "file", "path": "nowhere.ts"}, "path", "does not exist"),
        ({"source": "file", "path": "walk.csv"}, "label_column", "walk.csv is a recording"),
        (
            {"source": "file", "path": "walk.csv", "label_column": "speed"},
            "label_column",
            "no column 'speed'",
        ),
        ({"source": "file", "path": "cut.ts"}, "path", "cut.ts"),
    ],
)
def test_bad_input_is_an_error_on_the_field_concerned(
    tmp_path: Path, ctx: DataContext, params: dict[str, Any], field: str, words: str
) -> None:
    write_csv(tmp_path / "walk.csv", np.ones((30, 2)), header=["x", "moving"])
    whole = ts_file(tmp_path, "whole.ts", 12, count=4).read_text()
    (tmp_path / "cut.ts").write_text(whole[: whole.index("@data") + 40])  # ends inside a series
    graph = gru_graph("x")
    graph["nodes"][0]["params"] = params
    result = validate_graph(graph, ctx)
    errors = [e for e in result.errors if e.node_id == "data"]
    assert len(errors) == 1 and errors[0].field == field and words in errors[0].message, errors


def batch_keys(graph: dict[str, Any], ctx: DataContext) -> set[str]:
    pipeline = prepare(compile_graph(graph, ctx))
    try:
        return {key for batch in pipeline.train.batches(0) for key in batch}
    finally:
        pipeline.close()


def test_a_fixed_length_and_a_variable_length_set_train_for_an_epoch(
    tmp_path: Path, ctx: DataContext
) -> None:
    ts_file(tmp_path, "fixed.ts", 16)
    lengths = list(np.random.default_rng(3).integers(6, 20, 48))
    ts_file(tmp_path, "varying.ts", lengths)
    for name, varies in (("fixed.ts", False), ("varying.ts", True)):
        graph = gru_graph(name, ("std", "op.StandardizeFeatures", {}))
        assert (LENGTHS in batch_keys(graph, ctx)) is varies
        result = run_graph(graph, ctx, tmp_path / f"run-{name}", ListReporter())
        assert result.status == "succeeded" and result.epochs_completed == 1
        report = json.loads((tmp_path / f"run-{name}" / "report.json").read_text())
        assert report["task"] == "classification" and 0.0 <= report["test"]["test_accuracy"] <= 1.0


class StopAt(ListReporter):
    """Sets `stop` when the progress event of (epoch, step) goes by, as a user's stop would."""

    def __init__(self, epoch: int, step: int) -> None:
        super().__init__()
        self.at = (epoch, step)
        self.stop = threading.Event()

    def emit(self, event: Event) -> None:
        super().emit(event)
        if isinstance(event, ProgressEvent) and (event.epoch, event.step) == self.at:
            self.stop.set()


def test_a_stopped_run_resumes_to_the_uninterrupted_result(tmp_path: Path, ctx: DataContext) -> None:
    lengths = list(np.random.default_rng(4).integers(6, 20, 48))
    ts_file(tmp_path, "varying.ts", lengths)
    # Variable lengths and a random operator: the per-sample path, padded by the input type's collate.
    graph = gru_graph(
        "varying.ts", ("noise", "op.GaussianNoise", {"std": 0.2}), epochs=2, checkpoint_minutes=0
    )
    full = run_graph(graph, ctx, tmp_path / "full", ListReporter())
    stopper = StopAt(epoch=2, step=2)
    stopped = run_graph(graph, ctx, tmp_path / "split", stopper, stop=stopper.stop)
    assert (full.status, stopped.status) == ("succeeded", "stopped")
    resumed = run_graph(graph, ctx, tmp_path / "split", ListReporter(), resume=True)
    assert resumed.status == "succeeded" and resumed.epochs_completed == 2
    a = safetensors.torch.load_file(tmp_path / "full" / "model.safetensors")
    b = safetensors.torch.load_file(tmp_path / "split" / "model.safetensors")
    assert a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a)
    history = [
        json.loads((tmp_path / run / "report.json").read_text())["history"] for run in ("full", "split")
    ]
    untimed = [[{k: v for k, v in epoch.items() if k not in TIMING_KEYS} for epoch in h] for h in history]
    assert untimed[0] == untimed[1]


def test_a_classifier_on_numeric_targets_is_refused_on_the_dataset(ctx: DataContext) -> None:
    graph = chain(
        "frequency",
        [
            ("data", "dataset.sequence", {"name": "waves-frequency"}),
            ("gru", "layer.GRU", {"hidden_size": 4}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {}),
        ],
    )
    with pytest.raises(GraphInvalid) as err:
        compile_graph(graph, ctx)
    assert [(e.node_id, e.code) for e in err.value.errors] == [("data", "too_few_classes")]


def test_the_form_shows_only_the_fields_of_the_chosen_source() -> None:
    """An uploaded set shows no built-in Dataset dropdown and no Path (x-show-if on each field)."""
    properties = SequenceParams.model_json_schema()["properties"]
    shown = {name: spec.get("x-show-if") for name, spec in properties.items()}
    assert shown == {
        "source": None,
        "name": {"source": ["builtin"]},
        "path": {"source": ["file"]},
        "dataset_id": {"source": ["uploaded"]},
        "label_column": {"source": ["file", "uploaded"]},
        "window": {"source": ["file", "uploaded"]},
        "stride": {"source": ["file", "uploaded"]},
    }
