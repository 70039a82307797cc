"""The settings of a Ray that DragDL starts on this machine, shared by the server's embedded Ray
(`runner/ray_runner.py`) and `dragdl run`'s local Ray for a distributed run, so neither is weaker:

- loopback only: with clusters disabled Ray binds its services to 127.0.0.1;
- Ray's token authentication (`RAY_AUTH_MODE=token`) with a random token per process, in the
  environment its Ray processes inherit, so another account on the host cannot join the cluster on
  loopback and run code as DragDL's (unless the operator chose a mode or a token);
- a worker given no GPU sees none (`RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO`: since Ray 2.4x it leaves
  CUDA_VISIBLE_DEVICES alone for such a worker, and `device: auto` trained on another's GPU);
- no usage statistics, and Ray Train's controller polling a distributed run's workers every 0.25 s
  (each checkpoint report waits for the next poll; its default of 2 s costs up to 2 s per epoch).

Ray is imported only inside the functions: importing this module costs nothing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from typing import Any

HIDE_GPUS_ON_ZERO = "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO"
"""With "1", Ray sets CUDA_VISIBLE_DEVICES="" in a worker given no GPU (its default leaves it alone)."""
TRAIN_POLL_S = "0.25"


def use_token_auth() -> None:
    """Token authentication for a local Ray this process starts, unless the operator chose a mode.

    A random token per process, in the environment its Ray processes inherit (another account can
    read neither it nor their environment); set once, since Ray's C++ side caches it."""
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    if os.environ["RAY_AUTH_MODE"] != "token":
        return
    if "RAY_AUTH_TOKEN" not in os.environ and "RAY_AUTH_TOKEN_PATH" not in os.environ:
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)


def prepare_environment(local: bool) -> None:
    """Set what Ray reads from the environment, before it is imported or started. `local`: a Ray
    this process will start itself (loopback and token); a cluster's nodes set their own."""
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # read when ray is imported
        use_token_auth()
    # Inherited by the local Ray's processes: a worker given no GPU sees none.
    os.environ.setdefault(HIDE_GPUS_ON_ZERO, "1")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_TRAIN_HEALTH_CHECK_INTERVAL_S", TRAIN_POLL_S)


def reload_auth_settings() -> None:
    """Ray's C++ side reads its config and token once, when ray is imported: one imported before
    `use_token_auth` set them would start the cluster with tokens and connect without one."""
    with contextlib.suppress(ImportError, AttributeError):
        from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()


def start_local_ray(**options: Any) -> None:
    """`ray.init` of a Ray of this process's own on loopback (after `prepare_environment(True)`);
    `options` add to ray.init's (namespace, CPUs, GPUs, object store, log level)."""
    import logging

    import ray

    reload_auth_settings()
    with contextlib.suppress(ImportError):  # in case ray was imported before the variable was set
        from ray._private import ray_constants

        ray_constants.ENABLE_RAY_CLUSTER = False
    options.setdefault("logging_level", logging.ERROR)
    ray.init(
        # "local": always a Ray of its own. Without an address, ray.init joins the cluster a
        # `ray start` on this machine recorded in /tmp/ray/ray_current_cluster.
        address="local",
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
        **options,
    )
