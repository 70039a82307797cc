"""The GPU path of the fast path (issue 12, item 4). These run only where CUDA is available: on a
CPU-only machine they are skipped, and the closing notes say whether they ran."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from dragdl.engine.data.batch import Batch
from dragdl.engine.train import fastpath
from dragdl.engine.train.checkpoint import latest_checkpoint, load_checkpoint
from dragdl.engine.train.fastpath import Probe

from .conftest import StopAt, classify, make_model, weights
from .test_fastpath import fast_path_of, train_tiny

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda")


def expected_precision() -> str:
    return "bf16" if torch.cuda.is_bf16_supported() else "fp16"


def test_auto_on_cuda_takes_mixed_precision_and_channels_last_without_measuring() -> None:
    def no_batches() -> list[Batch]:
        raise AssertionError("nothing is measured on CUDA")

    def sgd(model: nn.Module) -> torch.optim.Optimizer:
        return torch.optim.SGD(model.parameters())

    model = make_model().to(CUDA)
    probe = Probe(model, sgd, classify, no_batches, CUDA, 10**6, (1, 8, 8), 10**9)
    chosen = fastpath.choose(CUDA, "auto", "auto", True, probe)
    assert (chosen.precision, chosen.memory_format, chosen.measurements) == (
        expected_precision(),
        "channels_last",
        (),
    )
    # fp16's narrow range needs a loss scaler; bf16 has fp32's range.
    assert chosen.autocast().scaler == (chosen.precision == "fp16")


def test_a_cuda_run_trains_mixed_precision_with_fp32_weights_and_resumes_in_it(tmp_path: Path) -> None:
    stopper = StopAt(epoch=2, step=3)
    stopped, _ = train_tiny(tmp_path, None, stopper, stop=stopper.stop, device="cuda")
    assert stopped.status == "stopped"
    checkpoint = latest_checkpoint(tmp_path)
    assert checkpoint is not None
    assert load_checkpoint(checkpoint)["fast_path"]["precision"] == expected_precision()
    resumed, _ = train_tiny(tmp_path, None, resume=True, device="cuda")
    assert resumed.status == "succeeded"
    chosen = fast_path_of(tmp_path)
    assert (chosen["precision"], chosen["memory_format"]) == (expected_precision(), "channels_last")
    saved = weights(tmp_path / "model.safetensors")
    assert all(tensor.dtype == torch.float32 for tensor in saved.values())  # mixed precision: fp32 weights
    assert all(torch.isfinite(tensor).all() for tensor in saved.values())
