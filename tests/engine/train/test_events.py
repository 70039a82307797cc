"""Events serialise to JSON and back; reporters route them."""

from __future__ import annotations

import json
from pathlib import Path

from dragdl.engine.train.events import (
    ArtifactEvent,
    ErrorEvent,
    LogEvent,
    MetricEvent,
    ProgressEvent,
    StartEvent,
    StatusEvent,
    event_from_json,
)
from dragdl.engine.train.reporter import JsonlReporter, ListReporter, MultiReporter, read_events

EVENTS = [
    StatusEvent("running"),
    StartEvent(2, 5, 90, 20, 30, "cpu", 100, 120),
    ProgressEvent(1, 1, 5),
    MetricEvent("epoch", 1, 5, {"loss": 0.5, "accuracy": 0.75}),
    LogEvent("warning", "something to know"),
    ArtifactEvent("model", "/tmp/model.safetensors"),
    ErrorEvent("out_of_memory", "lower batch_size", None),
    StatusEvent("failed", "lower batch_size"),
]


def test_jsonl_reporter_records_an_epochs_last_step_only(tmp_path: Path) -> None:
    with JsonlReporter(tmp_path) as jsonl:
        for step in range(1, 6):
            jsonl.emit(ProgressEvent(1, step, 5))
    assert read_events(tmp_path / "events.jsonl") == [ProgressEvent(1, 5, 5)]


def test_events_round_trip_through_json() -> None:
    for event in EVENTS:
        data = json.loads(json.dumps(event.to_json()))
        assert data["type"] == event.type
        assert event_from_json(data) == event


def test_jsonl_reporter_appends_events_and_log_lines(tmp_path: Path) -> None:
    listed = ListReporter()
    with JsonlReporter(tmp_path) as jsonl:
        multi = MultiReporter(listed, jsonl)
        for event in EVENTS:
            multi.emit(event)
    with JsonlReporter(tmp_path) as again:  # a resumed run appends
        again.emit(StatusEvent("succeeded"))
    assert listed.events == EVENTS
    # The record keeps progress at an epoch's last step only (here step 1 of 5 is left out).
    recorded = [e for e in EVENTS if not isinstance(e, ProgressEvent)]
    assert read_events(tmp_path / "events.jsonl") == [*recorded, StatusEvent("succeeded")]
    log = [line.split(" ", 2)[2] for line in (tmp_path / "log.txt").read_text().splitlines()]
    assert log == [
        "INFO    training on cpu for 2 epochs (5 steps per epoch)",
        "INFO    data: 90 train / 20 val / 30 test samples",
        "INFO    model: 120 parameters, 100 trainable",
        "INFO    epoch 1/2  train loss 0.5000 acc 75.00%",
        "WARNING something to know",
        "INFO    model saved: model.safetensors",
        "ERROR   training failed (out_of_memory): lower batch_size",
        "INFO    training succeeded",  # the resumed run appended
    ]
