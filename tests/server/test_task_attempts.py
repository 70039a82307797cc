"""A user's resume is not a failure: the task view counts automatic retries of the current run only."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dragdl.runner.base import DEFAULT_MAX_ATTEMPTS
from dragdl.server.schemas.tasks import TaskPublic


def _task(attempts: int, max_attempts: int) -> TaskPublic:
    row: dict[str, Any] = {
        "id": "t1",
        "name": "run",
        "graph_id": None,
        "status": "RUNNING",
        "priority": 0,
        "resources": {},
        "attempts": attempts,
        "max_attempts": max_attempts,
        "resume": False,
        "stop_requested": False,
        "error": None,
        "progress": 0.5,
        "epoch": 1,
        "best_metrics": {},
        "created_at": datetime.now(UTC),
        "started_at": None,
        "finished_at": None,
        "heartbeat_at": None,
    }
    return TaskPublic.model_validate(row)


def test_a_first_run_has_no_retries() -> None:
    task = _task(1, DEFAULT_MAX_ATTEMPTS)
    assert (task.retries, task.continued, task.max_retries) == (0, False, DEFAULT_MAX_ATTEMPTS - 1)


def test_a_crash_retry_counts_as_one() -> None:
    assert _task(2, DEFAULT_MAX_ATTEMPTS).retries == 1


def test_the_users_resume_after_a_stop_is_no_retry() -> None:
    # services/tasks.retry_task: the resumed run gets a fresh budget after the attempts so far.
    task = _task(2, 1 + DEFAULT_MAX_ATTEMPTS)
    assert (task.retries, task.continued) == (0, True)
    assert _task(3, 1 + DEFAULT_MAX_ATTEMPTS).retries == 1
