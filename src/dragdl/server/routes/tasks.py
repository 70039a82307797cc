"""Training tasks: submit, list, inspect, stop, retry, clone, delete; live events, metrics and logs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Header, Path, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session, sessionmaker

from dragdl.server.db.models import Task, TaskEvent, TaskStatus
from dragdl.server.deps import CurrentUser, RunnerDep, SessionDep, SettingsDep
from dragdl.server.errors import Responses, error_responses
from dragdl.server.schemas.graphs import GRAPH_REJECTED
from dragdl.server.schemas.tasks import (
    MetricPoint,
    TaskCreate,
    TaskDetail,
    TaskLog,
    TaskMetrics,
    TaskPublic,
    TaskSort,
    TasksPublic,
)
from dragdl.server.services import tasks as service

router = APIRouter(prefix="/api/tasks", tags=["tasks"])

TaskId = Annotated[str, Path(max_length=64)]
POLL_S = 0.5
KEEPALIVE_S = 15.0
_NOT_FOUND = error_responses(404)
_SUBMITTED: Responses = {
    **error_responses(
        400, described={404: "No such saved graph (`graph_id`); another user's does not exist for you."}
    ),
    **GRAPH_REJECTED,
}
"""Submission refuses like a graph save; resources that cannot run the graph (a cuda train node with no
GPU) are a problem of the train node's `device` field."""


def _detail(task: Task) -> TaskDetail:
    public = TaskPublic.model_validate(task).model_dump()
    return TaskDetail(**public, graph=task.graph_snapshot, config=service.train_config(task))


@router.post("", operation_id="submitTask", status_code=status.HTTP_201_CREATED, responses=_SUBMITTED)
def submit_task(
    body: TaskCreate, user: CurrentUser, db: SessionDep, settings: SettingsDep, runner: RunnerDep
) -> TaskDetail:
    """Validate the graph (with your datasets), store a snapshot of it and queue it; returns at once."""
    task = service.submit(db, settings, user, body, runner)
    return _detail(task)


@router.get("", operation_id="listTasks")
def list_tasks(
    user: CurrentUser,
    db: SessionDep,
    status_filter: Annotated[TaskStatus | None, Query(alias="status")] = None,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    sort: Annotated[
        TaskSort,
        Query(
            description="newest or oldest first; by status in the order of its life (QUEUED, RUNNING, "
            "SUCCEEDED, FAILED, STOPPED), newest first within one; or by name, A to Z ignoring case."
        ),
    ] = "newest",
) -> TasksPublic:
    """Your tasks, newest first unless `sort` says otherwise."""
    rows, count = service.list_tasks(db, user, status_filter, offset, limit, sort)
    return TasksPublic(data=[TaskPublic.model_validate(row) for row in rows], count=count)


@router.get("/{task_id}", operation_id="getTask", responses=_NOT_FOUND)
def get_task(task_id: TaskId, user: CurrentUser, db: SessionDep) -> TaskDetail:
    """Graph and settings, status, timings, attempts, best metrics and error of one task."""
    return _detail(service.get_task(db, user, task_id))


@router.post(
    "/{task_id}/stop",
    operation_id="stopTask",
    responses=error_responses(404, described={409: "The task has finished (SUCCEEDED or FAILED)."}),
)
def stop_task(task_id: TaskId, user: CurrentUser, db: SessionDep, runner: RunnerDep) -> TaskPublic:
    """A queued task stops at once; a running one finishes its step, checkpoints and ends STOPPED."""
    task = service.stop_task(db, service.get_task(db, user, task_id), runner)
    return TaskPublic.model_validate(task)


@router.post(
    "/{task_id}/retry",
    operation_id="retryTask",
    responses=error_responses(404, described={409: "Only a FAILED or STOPPED task can be retried."}),
)
def retry_task(task_id: TaskId, user: CurrentUser, db: SessionDep, runner: RunnerDep) -> TaskPublic:
    """Queue a FAILED or STOPPED task again; it resumes from its last checkpoint."""
    task = service.retry_task(db, service.get_task(db, user, task_id), runner)
    return TaskPublic.model_validate(task)


@router.post(
    "/{task_id}/clone",
    operation_id="cloneTask",
    status_code=status.HTTP_201_CREATED,
    responses={**_NOT_FOUND, **GRAPH_REJECTED},
)
def clone_task(
    task_id: TaskId, user: CurrentUser, db: SessionDep, settings: SettingsDep, runner: RunnerDep
) -> TaskDetail:
    """A new queued task with the same graph, trained from scratch."""
    task = service.get_task(db, user, task_id)
    clone = service.clone_task(db, settings, user, task, runner)
    return _detail(clone)


@router.delete(
    "/{task_id}",
    operation_id="deleteTask",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=error_responses(404, described={409: "The task's running worker could not be killed."}),
)
def delete_task(
    task_id: TaskId, user: CurrentUser, db: SessionDep, settings: SettingsDep, runner: RunnerDep
) -> Response:
    """Kill the task's worker if it runs, then delete the task, its events and its files."""
    service.delete_task(db, settings, service.get_task(db, user, task_id), runner)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{task_id}/metrics", operation_id="getTaskMetrics", responses=_NOT_FOUND)
def get_task_metrics(
    task_id: TaskId,
    user: CurrentUser,
    db: SessionDep,
    scope: Annotated[str | None, Query(pattern="^(step|epoch|test)$")] = None,
) -> TaskMetrics:
    """Every metric recorded so far (to draw the curves after a reload), oldest first."""
    task = service.get_task(db, user, task_id)
    points = [
        MetricPoint(
            id=row.id,
            scope=row.data.get("scope", ""),
            epoch=row.data.get("epoch", 0),
            step=row.data.get("step", 0),
            values=row.data.get("values", {}),
            time=row.created_at,
        )
        for row in service.metric_events(db, task.id, scope)
    ]
    return TaskMetrics(data=points, count=len(points))


@router.get("/{task_id}/logs", operation_id="getTaskLogs", responses=_NOT_FOUND)
def get_task_logs(
    task_id: TaskId,
    user: CurrentUser,
    db: SessionDep,
    settings: SettingsDep,
    offset: Annotated[int, Query(ge=0, description="Byte offset; pass the last answer's next_offset.")] = 0,
) -> TaskLog:
    """The training log (log.txt) from a byte offset, in chunks of up to 64 KiB."""
    return service.read_log(settings, service.get_task(db, user, task_id), offset)


@router.get(
    "/{task_id}/report",
    operation_id="getTaskReport",
    responses=error_responses(described={404: "No such task, or it has not written its report yet."}),
)
def get_task_report(
    task_id: TaskId, user: CurrentUser, db: SessionDep, settings: SettingsDep
) -> dict[str, Any]:
    """The run's report.json (written when training ends): test metrics, per-class precision, recall
    and F1, the confusion matrix, the epoch history and timings. 404 until there is one."""
    return service.read_report(settings, service.get_task(db, user, task_id))


@router.get(
    "/{task_id}/events",
    operation_id="streamTaskEvents",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "Server-sent events."},
        **_NOT_FOUND,
    },
)
def stream_task_events(
    task_id: TaskId,
    request: Request,
    user: CurrentUser,
    db: SessionDep,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[
        int | None, Query(ge=0, description="Resume after this event id (like Last-Event-ID).")
    ] = None,
) -> StreamingResponse:
    """Server-sent events: `id:` the event id, `event:` its kind (status, start, progress, metric, log,
    artifact, error), `data:` its JSON. The stream replays the history first, follows the task live,
    and ends after the final status. Reconnecting with `Last-Event-ID` continues without repeats.
    """
    task = service.get_task(db, user, task_id)
    start = after if after is not None else _event_id(last_event_id)
    stream = _events(request.app.state.sessions, task.id, start)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


def _event_id(header: str | None) -> int:
    try:
        return max(0, int(header or 0))
    except ValueError:
        return 0


def _sse(event: TaskEvent) -> bytes:
    data = {**event.data, "time": _iso(event.created_at)}
    return f"id: {event.id}\nevent: {event.kind}\ndata: {json.dumps(data)}\n\n".encode()


def _iso(moment: datetime) -> str:
    return moment.isoformat()


def _poll(
    sessions: sessionmaker[Session], task_id: str, after: int
) -> tuple[TaskStatus | None, list[TaskEvent]]:
    # The status is read before the events: once it is final, the final status event is committed,
    # so this one read returns everything up to the end.
    with sessions() as db:
        current = service.task_status(db, task_id)
        return current, service.events_after(db, task_id, after)


async def _events(sessions: sessionmaker[Session], task_id: str, after: int) -> AsyncIterator[bytes]:
    yield b"retry: 2000\n\n"
    last, quiet = after, 0.0
    while True:
        current, events = await anyio.to_thread.run_sync(_poll, sessions, task_id, last)
        for event in events:
            yield _sse(event)
            last = event.id
        if current is None or (current.finished and len(events) < service.EVENTS_PAGE):
            return
        if events:
            quiet = 0.0
            if len(events) == service.EVENTS_PAGE:
                continue
        elif quiet >= KEEPALIVE_S:
            yield b": keep-alive\n\n"
            quiet = 0.0
        await asyncio.sleep(POLL_S)
        quiet += POLL_S
