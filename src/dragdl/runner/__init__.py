"""Task execution: the Runner interface, the scheduler, the Ray backend and the worker entry point.

Imports the engine and the database layer only, never the web routes.
"""

from dragdl.runner.base import DEFAULT_MAX_ATTEMPTS, Backend, LaunchSpec, Resources, Runner, WorkerConfig

__all__ = ["DEFAULT_MAX_ATTEMPTS", "Backend", "LaunchSpec", "Resources", "Runner", "WorkerConfig"]
