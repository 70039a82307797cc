"""Training tasks: submit, list, inspect, stop, retry, clone, delete; live events, metrics and logs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from dragdl.db.models import Task, TaskStatus
from dragdl.server.auth import authenticate
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
from dragdl.server.services.event_hub import EventHub, TooManyStreams, Viewer

router = APIRouter(prefix="/api/tasks", tags=["tasks"])

TaskId = Annotated[str, Path(max_length=64)]
_NOT_FOUND = error_responses(404)
_SUBMITTED: Responses = {
    **error_responses(
        400,
        described={
            404: "No such saved graph (`graph_id`); another user's does not exist for you.",
            409: "Your task artifacts fill your artifact quota.",
        },
    ),
    **GRAPH_REJECTED,
}
"""Submission refuses like a graph save; resources that cannot run the graph (a cuda train node with no
GPU) are a problem of the train node's `device` field, resources above the user's caps per task one of
its `resources.cpus` or `resources.gpus`."""


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
    responses={
        **error_responses(404, described={409: "Only a FAILED or STOPPED task can be retried."}),
        **GRAPH_REJECTED,
    },
)
def retry_task(task_id: TaskId, user: CurrentUser, db: SessionDep, runner: RunnerDep) -> TaskPublic:
    """Queue a FAILED or STOPPED task again; it resumes from its last checkpoint."""
    task = service.retry_task(db, service.get_task(db, user, task_id), runner)
    return TaskPublic.model_validate(task)


@router.post(
    "/{task_id}/clone",
    operation_id="cloneTask",
    status_code=status.HTTP_201_CREATED,
    responses={
        **error_responses(404, described={409: "Your task artifacts fill your artifact quota."}),
        **GRAPH_REJECTED,
    },
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


_STREAM_REFUSED: Responses = error_responses(
    404,
    described={
        429: "Too many open event streams for this account (`DRAGDL_MAX_EVENT_STREAMS_PER_USER`): "
        "close one, or reconnect after `Retry-After` seconds."
    },
)
_STREAM_REFUSED[429]["headers"] = {
    "Retry-After": {"description": "Seconds to wait before reconnecting.", "schema": {"type": "integer"}}
}
RETRY_STREAM_AFTER_S = 5


@router.get(
    "/{task_id}/events",
    operation_id="streamTaskEvents",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "Server-sent events."},
        **_STREAM_REFUSED,
    },
)
async def stream_task_events(
    task_id: TaskId,
    request: Request,
    settings: SettingsDep,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[
        int | None, Query(ge=0, description="Resume after this event id (like Last-Event-ID).")
    ] = None,
) -> StreamingResponse:
    """Server-sent events: `id:` the event id, `event:` its kind (status, start, progress, metric, log,
    artifact, error), `data:` its JSON. The stream replays the history first, follows the task live,
    and ends after the final status. Reconnecting with `Last-Event-ID` continues without repeats.
    A stream that falls far behind is ended; reconnecting with `Last-Event-ID` catches up.
    """
    hub: EventHub = request.app.state.events

    def owned() -> tuple[int, str]:
        # Not the SessionDep/CurrentUser dependencies: their session would stay open, holding a pooled
        # connection, for as long as the stream runs.
        with request.app.state.sessions() as db:
            user = authenticate(request, db, settings)
            return user.id, service.get_task(db, user, task_id).id

    user_id, owned_id = await hub.run_sync(owned)
    start = after if after is not None else _event_id(last_event_id)
    try:
        viewer = hub.open(user_id, owned_id, start)
    except TooManyStreams as exc:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many open event streams: your account has {exc.open_streams} of the {exc.limit} "
            "allowed; close a monitor or wait for a task to end",
            headers={"Retry-After": str(RETRY_STREAM_AFTER_S)},
        ) from None
    return EventStreamResponse(viewer)


class EventStreamResponse(StreamingResponse):
    """Gives the stream's slot back however the response ends, also when the client left before the
    first byte (the stream's generator, whose `finally` would do it, then never runs)."""

    def __init__(self, viewer: Viewer) -> None:
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        super().__init__(viewer.stream(), media_type="text/event-stream", headers=headers)
        self.viewer = viewer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.viewer.close()


def _event_id(header: str | None) -> int:
    try:
        return max(0, int(header or 0))
    except ValueError:
        return 0
