"""Workers given no GPU see none: Ray leaves CUDA_VISIBLE_DEVICES alone for them otherwise, and
`device: auto` trained on another user's GPU. Checked with Ray's fake GPU resources, in a process of
its own (a Ray that declares two GPUs on this machine, whatever it has)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dragdl.runner.failures import classify, is_disk_full

SCRIPT = """
import json, os, sys
from pathlib import Path
import ray
from dragdl.runner.ray_runner import RayBackend, ensure_ray

ensure_ray(None, 4, num_gpus=2)
backend = RayBackend(None, data_dir=Path(sys.argv[1]))
backend.connect()
cpu = backend._actor("cpu-task", None, 1, 0)
warm = backend._actor("warm", None, 0, 0, warm=False)
gpu = backend._actor("gpu-task", None, 1, 1)

@ray.remote(num_cpus=0.1, num_gpus=0)
def train_worker():  # as a distributed run's worker without GPUs
    return os.environ.get("CUDA_VISIBLE_DEVICES")

seen = {
    "cpu": ray.get(cpu.visible_gpus.remote()),
    "warm": ray.get(warm.visible_gpus.remote()),
    "gpu": ray.get(gpu.visible_gpus.remote()),
    "distributed": ray.get(train_worker.remote()),
    "auth": os.environ.get("RAY_AUTH_MODE"),
}
print(json.dumps(seen))
ray.shutdown()
"""


@pytest.mark.slow
def test_a_worker_given_no_gpu_sees_none(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0,1", "PYTHONUNBUFFERED": "1"}  # as the server's host
    for name in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["cpu"] == "" and seen["warm"] == "" and seen["distributed"] == ""
    assert seen["gpu"] in ("0", "1")
    assert seen["auth"] == "token"


def test_a_full_disk_is_an_infrastructure_error_however_pytorch_reports_it(tmp_path: Path) -> None:
    import torch

    # What torch.save raises when the disk fills: no errno, only its C++ writer's message.
    torch_full = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534")
    torch_full.__context__ = RuntimeError("basic_ios::clear: iostream error")
    assert is_disk_full(torch_full) and classify(torch_full) == "infrastructure"
    writer = RuntimeError(
        "[enforce fail at inline_container.cc:603] . PytorchStreamWriter failed writing file data/0"
    )
    assert classify(writer) == "infrastructure"
    assert classify(OSError(28, "No space left on device")) == "infrastructure"
    # A user's broken checkpoint file is the task's own error, not the machine's.
    broken = tmp_path / "weights.pt"
    broken.write_bytes(b"not a zip")
    with pytest.raises(Exception) as reading:
        torch.load(broken, weights_only=True)
    assert classify(reading.value) == "graph" and not is_disk_full(reading.value)
