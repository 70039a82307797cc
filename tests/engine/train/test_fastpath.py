"""The fast path: `auto` measures precision and memory format, keeps what is faster and agrees with
fp32, leaves the run's start untouched, and a resumed run keeps what it started with."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from dragdl.engine.data.batch import INPUT, TARGET, Batch
from dragdl.engine.tasks.settings import TrainConfig
from dragdl.engine.train import fastpath
from dragdl.engine.train.checkpoint import latest_checkpoint, load_checkpoint
from dragdl.engine.train.events import LogEvent, StartEvent
from dragdl.engine.train.fastpath import Candidate, Probe, StepTiming
from dragdl.engine.train.reporter import ListReporter
from dragdl.engine.train.trainer import TrainResult, train

from .conftest import CLASSES, TASK, StopAt, classify, make_model, make_pipeline, weights


@pytest.fixture(autouse=True)
def probe_small_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tiny test network is far below the size worth probing: count it as big enough, and give
    the probe all the time a busy test machine needs."""
    monkeypatch.setattr(fastpath, "MIN_RUN_FLOPS", 0.0)
    monkeypatch.setattr(fastpath, "PROBE_BUDGET_S", 1e9)


def seconds_per_step(table: dict[str, float]) -> StepTiming:
    """A probe clock where each candidate's step takes the seconds `table` gives its name (the
    steps still run, so the losses compared are real). One second a step makes the tiny test run
    look long enough (24 steps) for probing to pay."""
    calls: list[str] = []

    def timing(candidate: Candidate, step: Callable[[], object], n: int) -> float:
        calls.append(candidate.name)
        for _ in range(n):
            step()
        return n * table[candidate.name]

    timing.calls = calls  # type: ignore[attr-defined]
    return timing


def train_tiny(
    out: Path,
    timing: StepTiming | None = None,
    reporter: ListReporter | None = None,
    resume: bool = False,
    stop: threading.Event | None = None,
    **config: Any,
) -> tuple[TrainResult, ListReporter]:
    reporter = reporter or ListReporter()
    cfg = TrainConfig(**{"epochs": 4, "batch_size": 16, "lr": 0.01, "device": "cpu", **config})
    result = train(
        make_model(),
        make_pipeline(),
        cfg,
        CLASSES,
        out,
        reporter,
        task=TASK,
        resume=resume,
        stop=stop,
        probe_timing=timing,
    )
    return result, reporter


def fast_path_of(out: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    chosen: dict[str, Any] = report["fast_path"]
    return chosen


def logged(reporter: ListReporter) -> list[str]:
    return [e.message for e in reporter.events if isinstance(e, LogEvent)]


BF16_SLOW = {"fp32 contiguous": 1.0, "fp32 channels_last": 1.0, "bf16 contiguous": 3.0}
BF16_FAST = {"fp32 contiguous": 1.0, "fp32 channels_last": 1.0, "bf16 contiguous": 0.2}


def test_auto_falls_back_to_fp32_when_the_probe_sees_bf16_slow(tmp_path: Path) -> None:
    timing = seconds_per_step(BF16_SLOW)
    result, reporter = train_tiny(tmp_path, timing)
    assert result.status == "succeeded"
    assert timing.calls == ["fp32 contiguous", "fp32 channels_last", "bf16 contiguous"]  # type: ignore[attr-defined]
    chosen = fast_path_of(tmp_path)
    assert (chosen["precision"], chosen["memory_format"]) == ("fp32", "contiguous")
    bf16 = [m for m in chosen["measurements"] if m["precision"] == "bf16"]
    assert len(bf16) == 1 and bf16[0]["samples_per_s"] < chosen["measurements"][0]["samples_per_s"]
    assert any(line.startswith("fast path: fp32, contiguous") for line in logged(reporter))
    start = next(e for e in reporter.events if isinstance(e, StartEvent))
    assert start.fast_path is not None and start.fast_path["precision"] == "fp32"


def test_auto_keeps_bf16_when_it_measures_faster_and_its_loss_agrees(tmp_path: Path) -> None:
    result, _ = train_tiny(tmp_path, seconds_per_step(BF16_FAST))
    assert result.status == "succeeded"
    chosen = fast_path_of(tmp_path)
    assert (chosen["precision"], chosen["memory_format"]) == ("bf16", "contiguous")
    bf16 = next(m for m in chosen["measurements"] if m["precision"] == "bf16")
    assert bf16["agrees"] and bf16["loss_delta"] <= fastpath.LOSS_TOLERANCE
    assert chosen["speedup"] == pytest.approx(5.0)


def test_a_bf16_loss_that_disagrees_with_fp32_is_not_kept(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(fastpath, "LOSS_TOLERANCE", 0.0)
    train_tiny(tmp_path, seconds_per_step(BF16_FAST))
    chosen = fast_path_of(tmp_path)
    assert chosen["precision"] == "fp32"
    assert not next(m for m in chosen["measurements"] if m["precision"] == "bf16")["agrees"]


def test_probing_leaves_the_run_as_it_would_have_been(tmp_path: Path) -> None:
    # Every candidate measured, none faster: the run must be bitwise the run set to fp32 contiguous.
    train_tiny(tmp_path / "probed", seconds_per_step(BF16_SLOW))
    train_tiny(tmp_path / "set", precision="fp32", memory_format="contiguous")
    assert len(fast_path_of(tmp_path / "probed")["measurements"]) == 3
    assert fast_path_of(tmp_path / "set")["measurements"] == []
    a, b = weights(tmp_path / "probed" / "model.safetensors"), weights(tmp_path / "set" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_run_measured_short_is_not_probed_beyond_its_first_candidate(tmp_path: Path) -> None:
    timing = seconds_per_step({"fp32 contiguous": 1e-5})  # 24 steps of 0.01 ms: the others cost more
    train_tiny(tmp_path, timing)
    chosen = fast_path_of(tmp_path)
    assert (chosen["precision"], chosen["memory_format"]) == ("fp32", "contiguous")
    assert [m["precision"] for m in chosen["measurements"]] == ["fp32"]
    assert chosen["reason"].startswith("a short run")


def test_candidates_past_the_probe_budget_are_not_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fastpath, "PROBE_BUDGET_S", 0.0)  # spent by the first candidate
    monkeypatch.setattr(fastpath, "PROBE_SHARE", 0.0)
    timing = seconds_per_step(BF16_FAST)
    train_tiny(tmp_path, timing)
    chosen = fast_path_of(tmp_path)
    assert timing.calls == ["fp32 contiguous"]  # type: ignore[attr-defined]
    assert (chosen["precision"], chosen["memory_format"]) == ("fp32", "contiguous")
    assert "not measured within the 0.0 s probe budget: fp32 channels_last, bf16" in chosen["reason"]


def test_a_long_run_gets_a_probe_budget_in_proportion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fixed budget is spent by the first candidate, but the run is measured to take hours
    # (1,000 s a step): its share of that is time enough for every candidate.
    monkeypatch.setattr(fastpath, "PROBE_BUDGET_S", 0.0)
    slow = {name: 1000 * seconds for name, seconds in BF16_FAST.items()}
    timing = seconds_per_step(slow)
    train_tiny(tmp_path, timing)
    chosen = fast_path_of(tmp_path)
    assert timing.calls == ["fp32 contiguous", "fp32 channels_last", "bf16 contiguous"]  # type: ignore[attr-defined]
    assert (chosen["precision"], chosen["memory_format"]) == ("bf16", "contiguous")
    assert "probe budget" not in chosen["reason"]


def test_a_small_run_is_not_probed_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastpath, "MIN_RUN_FLOPS", 2e11)  # the real threshold
    timing = seconds_per_step(BF16_FAST)
    train_tiny(tmp_path, timing)
    chosen = fast_path_of(tmp_path)
    assert timing.calls == [] and chosen["measurements"] == []  # type: ignore[attr-defined]
    assert (chosen["precision"], chosen["memory_format"]) == ("fp32", "contiguous")
    assert chosen["reason"].startswith("a small run")


def test_a_resumed_run_keeps_the_configuration_it_started_with(tmp_path: Path) -> None:
    stopper = StopAt(epoch=2, step=3)
    stopped, _ = train_tiny(tmp_path / "split", seconds_per_step(BF16_FAST), stopper, stop=stopper.stop)
    assert stopped.status == "stopped"
    checkpoint = latest_checkpoint(tmp_path / "split")
    assert checkpoint is not None and load_checkpoint(checkpoint)["fast_path"]["precision"] == "bf16"
    # Now bf16 would measure slow: the resumed run must neither probe nor change its mind.
    timing = seconds_per_step(BF16_SLOW)
    resumed, _ = train_tiny(tmp_path / "split", timing, resume=True)
    assert resumed.status == "succeeded" and timing.calls == []  # type: ignore[attr-defined]
    chosen = fast_path_of(tmp_path / "split")
    assert chosen["precision"] == "bf16" and chosen["reason"].startswith("kept from the checkpoint")
    # And it ends where an uninterrupted run in that configuration ends.
    train_tiny(tmp_path / "full", precision="bf16", memory_format="contiguous")
    a, b = weights(tmp_path / "split" / "model.safetensors"), weights(tmp_path / "full" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_checkpoint_of_an_earlier_version_resumes_in_fp32_contiguous(tmp_path: Path) -> None:
    stopper = StopAt(epoch=2, step=3)
    train_tiny(tmp_path, seconds_per_step(BF16_FAST), stopper, stop=stopper.stop)
    checkpoint = latest_checkpoint(tmp_path)
    assert checkpoint is not None
    data = load_checkpoint(checkpoint)
    del data["fast_path"]
    config = json.loads(data["config"])
    del config["precision"], config["memory_format"]
    data["config"] = json.dumps(config | {"amp": "auto"})
    torch.save(data, checkpoint)
    resumed, reporter = train_tiny(tmp_path, seconds_per_step(BF16_FAST), resume=True)
    assert resumed.status == "succeeded"
    chosen = fast_path_of(tmp_path)
    assert (chosen["precision"], chosen["memory_format"]) == ("fp32", "contiguous")
    assert "the settings changed" not in " ".join(logged(reporter))


def linear_probe(load_batches: Callable[[], list[Batch]], timing: StepTiming | None) -> Probe:
    def sgd(model: nn.Module) -> torch.optim.Optimizer:
        return torch.optim.SGD(model.parameters())

    # A long run (10**9 samples) of a network without convolutions over images.
    cpu = torch.device("cpu")
    return Probe(nn.Linear(4, 2), sgd, classify, load_batches, cpu, 10**6, (4,), 10**9, timing)


def test_a_network_without_convolutions_is_not_probed_without_native_bf16(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fastpath, "native_bf16", lambda device: False)

    def no_batches() -> list[Batch]:
        raise AssertionError("nothing should be measured")

    chosen = fastpath.choose(torch.device("cpu"), "auto", "auto", False, linear_probe(no_batches, None))
    assert (chosen.precision, chosen.memory_format, chosen.measurements) == ("fp32", "contiguous", ())
    assert chosen.reason.startswith("no convolution over images and no native bf16")


def test_a_network_without_convolutions_measures_bf16_alone_with_native_bf16(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fastpath, "native_bf16", lambda device: True)
    generator = torch.Generator().manual_seed(0)

    def batches() -> list[Batch]:
        x, y = torch.randn(32, 4, generator=generator), torch.randint(0, 2, (32,), generator=generator)
        return [{INPUT: x, TARGET: y}]

    timing = seconds_per_step({"fp32 contiguous": 1.0, "bf16 contiguous": 3.0})
    chosen = fastpath.choose(torch.device("cpu"), "auto", "auto", False, linear_probe(batches, timing))
    assert timing.calls == ["fp32 contiguous", "bf16 contiguous"]  # type: ignore[attr-defined]
    assert (chosen.precision, chosen.memory_format) == ("fp32", "contiguous")


def test_the_wall_clock_counts_the_fastest_step_so_a_burst_of_other_work_does_not_decide() -> None:
    import time

    durations = iter([0.25, 0.01, 0.01])  # the first step shares the cores with someone else

    def step() -> None:
        time.sleep(next(durations))  # the step's own work, as the clock sees it

    seconds = fastpath.wall_clock(torch.device("cpu"))(Candidate("fp32", "contiguous"), step, 3)
    assert 0.03 <= seconds < 0.1


class _LastStepLstm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(28, 64, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(self.rnn(x)[0][:, -1])
        return out


def test_a_recurrent_network_counts_its_recurrent_operations() -> None:
    # torch's flop counter sees no operation in the fused LSTM kernel: without counting it, a long
    # recurrent run would look like a small one and never be measured for bf16.
    cpu = torch.device("cpu")
    model = _LastStepLstm()
    probe = Probe(
        model, lambda m: torch.optim.SGD(m.parameters(), lr=0.1), classify, list, cpu, 1, (28, 28), 1
    )
    steps, gates, hidden = 28, 4, 64
    layer1 = 2 * steps * gates * 2 * (28 + hidden) * hidden  # two directions
    layer2 = 2 * steps * gates * 2 * (2 * hidden + hidden) * hidden
    head = 2 * 128 * 10
    assert fastpath.training_flops(probe) == pytest.approx(3.0 * (layer1 + layer2 + head), rel=0.01)
