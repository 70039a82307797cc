"""Sweeps: create, list, inspect, stop, resume; the best trial's graph and model."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, status

from dragdl.server.deps import CurrentUser, RunnerDep, SessionDep, SettingsDep
from dragdl.server.errors import Responses, error_responses
from dragdl.server.schemas.graphs import GRAPH_REJECTED
from dragdl.server.schemas.sweeps import (
    SweepBestModel,
    SweepCreate,
    SweepDetail,
    SweepRegisterBest,
    SweepsPublic,
)
from dragdl.server.services import sweeps as service
from dragdl.server.services.sweep_importance import ImportanceCache

router = APIRouter(prefix="/api/sweeps", tags=["sweeps"])

SweepId = Annotated[str, Path(max_length=64)]
_NOT_FOUND = error_responses(404)
_CONFLICT = error_responses(404, 409)
_CREATED: Responses = {
    **error_responses(
        400,
        described={
            404: "No such saved graph (`graph_id`); another user's does not exist for you.",
            409: "Your task artifacts fill your artifact quota.",
        },
    ),
    **GRAPH_REJECTED,
}


async def get_driver(request: Request) -> Any:
    return getattr(request.app.state, "sweeps", None)


DriverDep = Annotated[Any, Depends(get_driver)]


async def get_importance(request: Request) -> ImportanceCache | None:
    return getattr(request.app.state, "importance", None)


ImportanceDep = Annotated[ImportanceCache | None, Depends(get_importance)]


@router.post("", operation_id="createSweep", status_code=status.HTTP_201_CREATED, responses=_CREATED)
def create_sweep(
    body: SweepCreate,
    user: CurrentUser,
    db: SessionDep,
    settings: SettingsDep,
    runner: RunnerDep,
    driver: DriverDep,
    importance: ImportanceDep,
) -> SweepDetail:
    """Validate the graph and its search section, and start the sweep: its trials are queued as your
    tasks, `parallel` at a time, until `trials` have run."""
    sweep = service.create(db, settings, user, body, runner, driver)
    return service.detail(db, sweep, importance)


@router.get("", operation_id="listSweeps")
def list_sweeps(
    user: CurrentUser,
    db: SessionDep,
    offset: Annotated[int, Query(ge=0, le=2**31 - 1)] = 0,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> SweepsPublic:
    """Your sweeps, newest first."""
    rows, count = service.list_sweeps(db, user, offset, limit)
    return SweepsPublic(data=rows, count=count)


@router.get("/{sweep_id}", operation_id="getSweep", responses=_NOT_FOUND)
def get_sweep(sweep_id: SweepId, user: CurrentUser, db: SessionDep, importance: ImportanceDep) -> SweepDetail:
    """The sweep, its trials (params, objective per epoch, state, times) and the params' importance
    (computed in the background once per complete trial: it may lag the trials by one poll)."""
    return service.detail(db, service.get_sweep(db, user, sweep_id), importance)


@router.post("/{sweep_id}/stop", operation_id="stopSweep", responses=_CONFLICT)
def stop_sweep(
    sweep_id: SweepId,
    user: CurrentUser,
    db: SessionDep,
    runner: RunnerDep,
    driver: DriverDep,
    importance: ImportanceDep,
) -> SweepDetail:
    """No new trials; the running trials' tasks are stopped (they checkpoint first)."""
    sweep = service.stop(db, service.get_sweep(db, user, sweep_id), runner, driver)
    return service.detail(db, sweep, importance)


@router.post("/{sweep_id}/resume", operation_id="resumeSweep", responses=_CONFLICT)
def resume_sweep(
    sweep_id: SweepId,
    user: CurrentUser,
    db: SessionDep,
    runner: RunnerDep,
    driver: DriverDep,
    importance: ImportanceDep,
) -> SweepDetail:
    """A stopped sweep continues: stopped trials resume from their checkpoint, then new trials."""
    sweep = service.resume(db, service.get_sweep(db, user, sweep_id), runner, driver)
    return service.detail(db, sweep, importance)


@router.get("/{sweep_id}/best-graph", operation_id="getSweepBestGraph", responses=_NOT_FOUND)
def best_graph(sweep_id: SweepId, user: CurrentUser, db: SessionDep) -> dict[str, Any]:
    """The graph with the best trial's values and no search section, to open in the editor."""
    return service.best_graph(db, service.get_sweep(db, user, sweep_id))


@router.post(
    "/{sweep_id}/register-best", operation_id="registerSweepBest", responses=error_responses(400, 404)
)
def register_best(
    sweep_id: SweepId, user: CurrentUser, db: SessionDep, body: SweepRegisterBest | None = None
) -> SweepBestModel:
    """Name the best trial's model (after the sweep unless `name` is given), so it stands out in
    your models: the one model of the sweep the model list shows."""
    name = body.name if body is not None else None
    model = service.register_best(db, service.get_sweep(db, user, sweep_id), name)
    return SweepBestModel(model_id=model.id, name=model.name)
