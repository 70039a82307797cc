"""Admission: the checks every piece of work passes before it is queued, whoever queues it.

A task submitted by a user, a cloned task and each trial a sweep starts go through the same
function (`admit`): the resources the graph asks for, within the user's caps per task (a
distributed run's workers count in all, times each one's share), a bounded number of workers each
with a real share of a CPU, a cluster node that could hold it, and room in the user's artifact
quota. A sweep is admitted at creation for its base graph and for the extreme values of every
searched param that sizes the run (`workers`, `cpus_per_worker`, `gpus_per_worker`, `device`), and
the sweep driver admits each new trial again (`trial_admission`), so a sweep that runs over quota
starts no more trials.

Why a minimum share per worker: each worker is a whole process (about 0.5 GB resident with torch),
whatever CPU fraction it asks for: 200 workers of 0.01 CPU fitted a 2-CPU cap and would have taken
about 100 GB of memory.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException
from pydantic import TypeAdapter
from sqlalchemy.orm import Session

from dragdl.db.models import User
from dragdl.engine.graph.errors import GraphError
from dragdl.runner.base import Runner
from dragdl.runner.demand import distributed_workers
from dragdl.server.schemas.tasks import TaskResources
from dragdl.server.services.graphs import GraphRejected
from dragdl.server.services.limits import check_artifact_room, limits_of
from dragdl.server.settings import Settings

WORKER_MEMORY_GB = 0.5
"""What one worker process holds at least (torch and the engine imported), for the messages."""
SIZING_PARAMS = ("workers", "cpus_per_worker", "gpus_per_worker", "device")
"""The train node's params that decide what a run holds: a sweep's searched values are admitted too."""
MAX_CORNERS = 64
"""Combinations of a sweep's searched sizing values checked at creation (beyond: one param at a time)."""

TrialAdmission = Callable[[Session, int, dict[str, Any], dict[str, Any]], str | None]
"""(db, owner id, the trial's concrete graph, the sweep's resources) -> why it is refused, or None."""


def admit(
    db: Session,
    settings: Settings,
    user: User,
    graph: dict[str, Any],
    requested: TaskResources,
    runner: Runner | None,
) -> dict[str, float | None]:
    """The resources a task of `graph` reserves, once it passes every check; GraphRejected (422) on
    the train node's field, or 409 when the artifact quota is full."""
    from dragdl.server.services.tasks import check_fits_a_node, resources_for, within_caps

    resources = within_caps(settings, user, resources_for(requested, graph), graph)
    check_workers(settings, user, graph)
    check_fits_a_node(runner, resources, graph)
    check_artifact_room(db, settings, user)
    return resources


def check_workers(settings: Settings, user: User, graph: dict[str, Any]) -> None:
    """GraphRejected (422) when a distributed run asks for more workers than the user's cap per task,
    or for less than the smallest CPU share a worker may have."""
    workers = distributed_workers(graph)
    if workers is None:
        return
    from dragdl.server.services.tasks import train_node_id

    node_id = train_node_id(graph)
    cap = limits_of(settings, user).max_workers_per_task
    least = settings.min_cpus_per_worker
    problems = []
    if workers.count > cap:
        problems.append(
            GraphError(
                code="workers_over_cap",
                message=f"the run asks for {workers.count} workers (workers), more than the {cap} one task "
                f"of yours may have: each is a process of at least {WORKER_MEMORY_GB:g} GB of memory. "
                f"Ask for at most {cap}",
                node_id=node_id,
                field="workers",
                details={"requested": float(workers.count), "cap": float(cap)},
            )
        )
    if workers.each.cpus < least:
        problems.append(
            GraphError(
                code="worker_share_too_small",
                message=f"each worker asks for {workers.each.cpus:g} CPUs (cpus_per_worker), less than the "
                f"{least:g} a worker must have: a worker is a whole process whatever its share. Ask for "
                f"at least {least:g}",
                node_id=node_id,
                field="cpus_per_worker",
                details={"requested": workers.each.cpus, "least": least},
            )
        )
    if problems:
        raise GraphRejected("the run's workers are above your caps", problems)


def admit_sweep(
    db: Session,
    settings: Settings,
    user: User,
    graph: dict[str, Any],
    requested: TaskResources,
    runner: Runner | None,
) -> dict[str, float | None]:
    """`admit` for the base graph and for the searched values of the params that size a run (each
    combination of their extremes, or each value alone when there are too many); returns the base
    graph's resources. An error names the searched param and the value that is refused."""
    resources = admit(db, settings, user, graph, requested, runner)
    for values in _sizing_cases(graph):
        concrete = _with_values(graph, values)
        try:
            admit(db, settings, user, concrete, requested, runner)
        except GraphRejected as exc:
            described = ", ".join(f"{name}={value}" for name, value in values.items())
            errors = [
                GraphError(
                    code=error.code,
                    message=f"with the searched {described}: {error.message}",
                    node_id=error.node_id,
                    field=error.field,
                    details=error.details,
                )
                for error in exc.errors
            ]
            raise GraphRejected(f"a searched value is refused ({described})", errors) from exc
    return resources


def trial_admission(settings: Settings, runner: Runner | None) -> TrialAdmission:
    """The check the sweep driver runs before it starts each trial (it imports no server module)."""

    def check(db: Session, owner_id: int, graph: dict[str, Any], resources: dict[str, Any]) -> str | None:
        user = db.get(User, owner_id)
        if user is None:
            return "the sweep's owner no longer exists"
        requested = TaskResources(cpus=float(resources.get("cpus") or 1.0), gpus=resources.get("gpus"))
        try:
            admit(db, settings, user, graph, requested, runner)
        except GraphRejected as exc:
            return "; ".join(error.message for error in exc.errors) or str(exc)
        except HTTPException as exc:
            return str(exc.detail)
        return None

    return check


def _sizing_cases(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Values of the searched sizing params to admit: the extremes of each range, every choice."""
    from dragdl.engine.graph.search import Choice, SearchSection, key, searched

    section = TypeAdapter(SearchSection).validate_python(graph.get("search") or {})
    options: dict[str, list[Any]] = {}
    for node_id, param, spec in searched(section):
        if param not in SIZING_PARAMS:
            continue
        values = list(spec.values) if isinstance(spec, Choice) else [spec.low, spec.high]
        options[key(node_id, param)] = list(dict.fromkeys(values))
    if not options:
        return []
    names = list(options)
    count = 1
    for values in options.values():
        count *= len(values)
    if count <= MAX_CORNERS:
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*options.values())]
    return [{name: value} for name, values in options.items() for value in values]


def _with_values(graph: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    from dragdl.engine.graph.search import substitute

    return substitute(graph, values)
