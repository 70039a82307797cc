"""The compose topology on one host without Docker: a Ray head without CPUs, a Ray worker, and the API
container's command (deploy/docker/dragdl-serve) joining them, all with Ray's token authentication
as docker-compose.yml and the Kubernetes config set it; a task submitted to the API trains on the
worker (the only node with a CPU) and writes its model into the shared data dir, and a client
without the token is refused by the cluster."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest

from dragdl.examples import __file__ as examples_init

from ..servers import free_port
from .manifests import SERVE_SCRIPT

pytestmark = pytest.mark.slow

RAY = str(Path(sys.executable).with_name("ray"))
FINISHED = ("SUCCEEDED", "FAILED", "STOPPED")


def _log_tail(log: Path) -> str:
    """The log's last lines, without the access lines of the test's own polling."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    kept = [line for line in lines if '"GET /api/' not in line]
    return "\n".join(kept[-40:])


def _wait_for(
    condition: Callable[[], bool], timeout_s: float, what: str, log: Path, state: Callable[[], object] = str
) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {f.name}\n{_log_tail(f)}" for f in sorted(log.parent.glob("*.log")))
            pytest.fail(f"{what} not within {timeout_s:.0f} s; last state: {state()}\n{logs}")
        time.sleep(0.5)


@contextmanager
def _process(command: list[str], log: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A process in its own session, ended with everything it started (Ray's daemons included)."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        try:
            yield process
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
            # `ray start --block` leaves daemons of its session behind on SIGTERM.
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def _ray_healthy(address: str, env: dict[str, str]) -> bool:
    command = [RAY, "health-check", "--address", address]
    return subprocess.run(command, capture_output=True, env=env, timeout=60).returncode == 0


def _node_args(stack: ExitStack, name: str) -> list[str]:
    """What keeps Ray nodes on one host apart: ports and a temporary dir (its socket files) of their
    own. Left to Ray, nodes starting at the same moment can pick the same ones, and the raylet that
    loses the race dies with "Address already in use". The dir is short: socket paths are limited
    to 107 bytes."""
    temp = tempfile.mkdtemp(prefix=f"ray-{name}-", dir="/tmp")
    stack.callback(shutil.rmtree, temp, ignore_errors=True)
    ports = ["node-manager", "object-manager", "dashboard-agent-listen", "dashboard-agent-grpc"]
    ports += ["metrics-export", "runtime-env-agent"]
    return [f"--{port}-port={free_port()}" for port in ports] + [f"--temp-dir={temp}"]


def _started(log: Path) -> bool:
    return log.exists() and "Ray runtime started" in log.read_text(errors="replace")


def test_a_task_trains_on_the_ray_worker_of_the_api_cluster(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RAY_USAGE_STATS_ENABLED": "0",
        # As docker-compose.yml and the Kubernetes config set them: every node and the API present
        # the same token (the operator's secret), and a worker given no GPU sees none.
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(32),
        "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO": "1",
        "RAY_TRAIN_HEALTH_CHECK_INTERVAL_S": "0.25",
    }
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    # A client on the cluster network without the secret: Ray's own default mode, no token.
    stranger = {key: value for key, value in env.items() if not key.startswith("RAY_AUTH_")}
    address = f"127.0.0.1:{free_port()}"
    api_port = free_port()
    data_dir = tmp_path / "data"
    store = "--object-store-memory=100000000"
    with ExitStack() as stack:
        head = [RAY, "start", "--head", f"--port={address.split(':')[1]}", "--node-ip-address=127.0.0.1"]
        head += [
            "--num-cpus=0",
            "--num-gpus=0",
            "--include-dashboard=false",
            store,
            *_node_args(stack, "head"),
            "--block",
        ]
        stack.enter_context(_process(head, tmp_path / "head.log", env))
        _wait_for(lambda: _ray_healthy(address, env), 90, "the Ray head", tmp_path / "head.log")
        assert not _ray_healthy(address, stranger), "the Ray head answered a client without the token"

        worker = [RAY, "start", f"--address={address}", "--node-ip-address=127.0.0.1", "--num-cpus=1", store]
        worker += _node_args(stack, "worker")
        stack.enter_context(_process([*worker, "--block"], tmp_path / "worker.log", env))
        # One node joining at a time: nodes of one host starting together race for their sockets
        # (in compose and Kubernetes each node has a host of its own).
        _wait_for(lambda: _started(tmp_path / "worker.log"), 90, "the Ray worker", tmp_path / "worker.log")

        api_env = {
            **env,
            "DRAGDL_RAY_ADDRESS": address,
            "DRAGDL_DATA_DIR": str(data_dir),
            "DRAGDL_PORT": str(api_port),
            "DRAGDL_RAY_NODE_ARGS": " ".join(["--node-ip-address=127.0.0.1", *_node_args(stack, "api")]),
        }
        api_env.pop("DRAGDL_DATABASE_URL", None)
        stack.enter_context(_process([str(SERVE_SCRIPT)], tmp_path / "api.log", api_env))
        client = stack.enter_context(
            httpx.Client(
                base_url=f"http://127.0.0.1:{api_port}", timeout=30, headers={"X-Requested-With": "t"}
            )
        )

        def api_up() -> bool:
            try:
                return client.get("/api/health").status_code == 200
            except httpx.TransportError:
                return False

        _wait_for(api_up, 180, "the API server", tmp_path / "api.log")
        assert client.post(
            "/api/auth/signup", json={"username": "ops", "password": "a long passphrase"}
        ).is_success

        graph = json.loads(Path(examples_init).with_name("logistic_regression_iris.json").read_text())
        answer = client.post("/api/tasks", json={"graph": graph})
        assert answer.status_code == 201, answer.text
        task_id = answer.json()["id"]
        task: dict[str, object] = {}

        def finished() -> bool:
            nonlocal task
            task = client.get(f"/api/tasks/{task_id}").json()
            return task["status"] in FINISHED

        _wait_for(finished, 300, "the task's end", tmp_path / "api.log", lambda: task)
        assert task["status"] == "SUCCEEDED", task
        assert (data_dir / "artifacts" / task_id / "model.safetensors").is_file()
