"""Server settings: embedded defaults, overridden by environment variables and `dragdl serve` flags."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dragdl.paths import default_data_dir

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    """SQLite under the data dir by default; `DRAGDL_DATABASE_URL` for PostgreSQL."""
    ray_address: str | None = None
    """None = start a local Ray (loopback only); `DRAGDL_RAY_ADDRESS` joins a cluster."""
    auth_enabled: bool = True
    """False = single-user mode (`--no-auth`), only allowed on loopback."""
    allow_signup: bool = True
    max_running_per_user: int = 2
    dataset_quota_bytes: int = 20 * 1024**3
    """Default storage quota of a user's uploaded datasets (administrators set it per user)."""
    artifact_quota_bytes: int = 50 * 1024**3
    """Default storage quota of a user's task artifacts: checkpoints, bundles, logs."""
    max_cpus_per_task: float = 4.0
    """Default cap on the CPUs one task of a user may reserve."""
    max_gpus_per_task: float = 1.0
    """Default cap on the GPUs one task of a user may reserve."""
    max_workers_per_task: int = 4
    """Default cap on the workers (processes of about 0.5 GB each) of one distributed run of a user."""
    min_cpus_per_worker: float = 0.5
    """The smallest CPU share a distributed run's worker may ask for: each is a whole process."""
    session_days: int = 14
    login_concurrency: int = 2
    """Password checks (argon2: slow and memory-hungry on purpose) running at once; more queue."""
    stop_timeout_s: float = 30.0
    """A stopped task that has not checkpointed by then is killed."""
    warm_workers: int = 1
    """Worker processes kept waiting, with the training code imported, on each node that has run a
    CPU task, so the next task starts training at once (`DRAGDL_WARM_WORKERS`; 0 turns them off)."""
    max_upload_bytes: int = 2 * 1024**3
    """Largest dataset upload (every byte of one request together)."""
    max_body_bytes: int = 4 * 1024**2
    """Largest body of any other request (JSON graphs, logins); the upload routes have their own."""
    predict_batching: bool = True
    """Micro-batch concurrent predictions per model (`DRAGDL_PREDICT_BATCHING=0` turns it off)."""
    predict_max_batch: int = 32
    """Most images in one batch."""
    predict_window_ms: float = 5.0
    """How long a batch may wait for more requests while another batch of the model is running."""
    max_event_streams_per_user: int = 20
    """Open live-event streams (`GET /api/tasks/{id}/events`) per user; more are refused with 429."""
    cpu_workers: int = 1
    """Processes that read uploads and compute sweeps' importance outside the server's process, so
    that they do not hold its GIL (`services/cpu_pool.py`; `DRAGDL_CPU_WORKERS`; 0 does that work in
    the server's process)."""

    @property
    def datasets_dir(self) -> Path:
        return self.data_dir / "datasets"

    @property
    def artifacts_dir(self) -> Path:
        return self.data_dir / "artifacts"

    @classmethod
    def from_env(cls, data_dir: Path | None = None, **overrides: Any) -> Settings:
        directory = (data_dir or default_data_dir()).expanduser().resolve()
        env = os.environ
        settings = cls(
            data_dir=directory,
            database_url=env.get("DRAGDL_DATABASE_URL") or f"sqlite:///{directory / 'dragdl.db'}",
            ray_address=env.get("DRAGDL_RAY_ADDRESS") or None,
            allow_signup=env.get("DRAGDL_ALLOW_SIGNUP", "1") not in ("0", "false", "no"),
            max_running_per_user=int(env.get("DRAGDL_MAX_RUNNING_PER_USER", "2")),
            dataset_quota_bytes=int(env.get("DRAGDL_DATASET_QUOTA_BYTES", str(20 * 1024**3))),
            artifact_quota_bytes=int(env.get("DRAGDL_ARTIFACT_QUOTA_BYTES", str(50 * 1024**3))),
            max_cpus_per_task=float(env.get("DRAGDL_MAX_CPUS_PER_TASK", "4")),
            max_gpus_per_task=float(env.get("DRAGDL_MAX_GPUS_PER_TASK", "1")),
            max_workers_per_task=int(env.get("DRAGDL_MAX_WORKERS_PER_TASK", "4")),
            min_cpus_per_worker=float(env.get("DRAGDL_MIN_CPUS_PER_WORKER", "0.5")),
            max_upload_bytes=int(env.get("DRAGDL_MAX_UPLOAD_BYTES", str(2 * 1024**3))),
            predict_batching=env.get("DRAGDL_PREDICT_BATCHING", "1") not in ("0", "false", "no"),
            max_event_streams_per_user=int(env.get("DRAGDL_MAX_EVENT_STREAMS_PER_USER", "20")),
            warm_workers=int(env.get("DRAGDL_WARM_WORKERS", "1")),
            cpu_workers=int(env.get("DRAGDL_CPU_WORKERS", "1")),
        )
        return replace(settings, **overrides)
