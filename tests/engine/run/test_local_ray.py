"""`dragdl run`'s local Ray for a distributed run has the settings of the server's embedded Ray: a
worker given no GPU sees none, and Ray authenticates with a token. Checked in a process of its own
(its environment is the host's, with every GPU visible and no Ray settings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import json, os
import ray
from dragdl.engine.run.distributed import _ensure_ray

assert _ensure_ray()

@ray.remote(num_cpus=0.1, num_gpus=0)
def train_worker():  # as a distributed run's worker without GPUs
    return {
        "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "auth": os.environ.get("RAY_AUTH_MODE"),
        "token": len(os.environ.get("RAY_AUTH_TOKEN", "")),
    }

seen = ray.get(train_worker.remote())
seen["address"] = ray.get_runtime_context().gcs_address
print(json.dumps(seen))
ray.shutdown()
"""


@pytest.mark.slow
def test_dragdl_runs_local_ray_hides_gpus_and_uses_a_token(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0,1", "PYTHONUNBUFFERED": "1"}
    for name in ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(name, None)
    env.pop("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["visible"] == ""  # not the host's "0,1"
    assert seen["auth"] == "token" and seen["token"] >= 32
    assert seen["address"].startswith("127.0.0.1:")  # loopback only
