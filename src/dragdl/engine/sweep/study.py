"""The Optuna study of a sweep, rebuilt from the stored trials whenever it is needed.

Optuna samples (random, grid, TPE) and prunes (median, successive halving); DragDL stores the
trials in its own tables. The study is a pure function of those rows: every decision (the next
trial's params, whether a running trial is pruned) rebuilds an in-memory study with
`study.add_trial` and asks it. Nothing of Optuna's lives across calls, so a sweep continues after a
server restart from the database alone, on SQLite and PostgreSQL alike, without Optuna's own schema.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from dragdl.engine.graph.search import FloatRange, IntRange, Scalar, SearchSection, key, searched
from dragdl.engine.sweep.check import grid_count, grid_points, grid_value

if TYPE_CHECKING:
    import numpy as np
    from optuna import Study
    from optuna.distributions import BaseDistribution

SamplerName = Literal["random", "grid", "tpe"]
PrunerName = Literal["none", "median", "halving"]
Direction = Literal["maximize", "minimize"]
TrialState = Literal["RUNNING", "COMPLETE", "PRUNED", "FAILED", "STOPPED"]
"""A trial's state in DragDL: a user-stopped or failed trial counts as failed for the sampler."""


@dataclass(frozen=True)
class SweepPlan:
    """What a sweep searches and how: everything the study needs besides the trials."""

    section: SearchSection
    direction: Direction
    sampler: SamplerName = "tpe"
    pruner: PrunerName = "median"
    seed: int = 0
    trials: int = 16


@dataclass
class StoredTrial:
    number: int
    params: dict[str, Scalar]
    state: TrialState
    value: float | None = None
    intermediate: dict[int, float] = field(default_factory=dict)
    """Objective value per epoch (1-based), as the pruner sees it."""
    system_attrs: dict[str, Any] = field(default_factory=dict)
    """What the sampler and pruner keep on a trial (the grid point, successive-halving rungs)."""


def _optuna() -> Any:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def distributions(section: SearchSection) -> dict[str, BaseDistribution]:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    result: dict[str, BaseDistribution] = {}
    for node_id, param, spec in searched(section):
        if isinstance(spec, FloatRange):
            result[key(node_id, param)] = FloatDistribution(spec.low, spec.high, log=spec.log, step=spec.step)
        elif isinstance(spec, IntRange):
            step = 1 if spec.log else spec.step
            result[key(node_id, param)] = IntDistribution(spec.low, spec.high, log=spec.log, step=step)
        else:
            result[key(node_id, param)] = CategoricalDistribution(spec.values)
    return result


def grid_size(section: SearchSection) -> int:
    """Points of the section's grid (at most MAX_GRID_POINTS + 1: counting stops above the limit)."""
    return grid_points(section)


def grid_point(plan: SweepPlan, stored: list[StoredTrial]) -> tuple[dict[str, Scalar], dict[str, Any]]:
    """The next point of a grid sweep, never listing the grid: points are numbered in mixed radix
    (one digit per param) and visited in a seeded order, i -> (a * i + b) mod n with a coprime to n,
    which is a permutation of 0..n-1. A point already stored (by its `grid_index`) is skipped, so at
    most len(stored) + 1 candidates are looked at."""
    specs = searched(plan.section)
    counts = [grid_count(spec) for _, _, spec in specs]
    if any(count is None for count in counts):
        grid_points(plan.section)  # raises, naming the param without a grid
    total = math.prod(count or 1 for count in counts)
    rng = random.Random(plan.seed)
    stride = rng.randrange(1, total) if total > 1 else 1
    while math.gcd(stride, total) != 1:
        stride += 1
    offset = rng.randrange(total)
    visited = {t.system_attrs.get("grid_index") for t in stored}
    for k in range(len(stored), len(stored) + len(visited) + 1):
        index = (stride * k + offset) % total
        if index not in visited:
            break
    params: dict[str, Scalar] = {}
    rest = index
    for (node_id, param, spec), count in zip(specs, counts, strict=True):
        rest, digit = divmod(rest, count or 1)
        params[key(node_id, param)] = grid_value(spec, digit)
    return params, {"grid_index": index}


STREAM_ATTR = "dragdl_stream"
"""The system attr holding the sweep's random stream after the trial's draws (PCG64's state)."""


def _stream(plan: SweepPlan, stored: list[StoredTrial]) -> np.random.RandomState:
    """The sweep's one random stream, where the newest stored trial left it.

    Restarting a seeded sampler per decision (seed + trials so far) gave each trial the first draws
    of neighbouring seeds, which nearly repeat, and two sweeps seeded 0 and 1 shared most of their
    trials. The stream's state is stored on every trial instead, so a rebuilt study continues it.
    A sweep whose rows hold no state (older rows) starts a stream of its own for each position,
    spread by SeedSequence rather than by adding to the seed.
    """
    import numpy as np

    newest = max(
        (t for t in stored if isinstance(t.system_attrs.get(STREAM_ATTR), dict)),
        key=lambda t: t.number,
        default=None,
    )
    if newest is None:
        generator = np.random.PCG64(np.random.SeedSequence([plan.seed, len(stored)]))
    else:
        saved = newest.system_attrs[STREAM_ATTR]
        generator = np.random.PCG64()
        try:
            generator.state = {
                "bit_generator": "PCG64",
                "state": {"state": int(saved["state"], 16), "inc": int(saved["inc"], 16)},
                "has_uint32": int(saved.get("has_uint32", 0)),
                "uinteger": int(saved.get("uinteger", 0)),
            }
        except (KeyError, TypeError, ValueError):  # a damaged row: a fresh stream, not a failed sweep
            generator = np.random.PCG64(np.random.SeedSequence([plan.seed, len(stored)]))
    return np.random.RandomState(generator)


def _stream_state(stream: np.random.RandomState) -> dict[str, Any]:
    """The stream's state as JSON (128-bit numbers as hex text: a JSON column may hold doubles)."""
    state = stream._bit_generator.state
    return {
        "state": format(state["state"]["state"], "x"),
        "inc": format(state["state"]["inc"], "x"),
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }


def _sampler(plan: SweepPlan, stream: np.random.RandomState | None = None) -> Any:
    """Optuna's sampler drawing from `stream` (TPE's startup sampler too: one stream per sweep)."""
    optuna = _optuna()
    if plan.sampler == "tpe":
        startup = max(2, min(10, plan.trials // 3))
        sampler = optuna.samplers.TPESampler(seed=plan.seed, n_startup_trials=startup)
        parts = [sampler._rng, sampler._random_sampler._rng]
    else:  # a grid sweep never asks its sampler: grid_point chooses
        sampler = optuna.samplers.RandomSampler(seed=plan.seed)
        parts = [sampler._rng]
    if stream is not None:
        for part in parts:
            part._rng = stream
    return sampler


def _pruner(plan: SweepPlan) -> Any:
    optuna = _optuna()
    if plan.pruner == "median":
        # Compared with the finished trials at the same epoch once two have finished.
        return optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=0)
    if plan.pruner == "halving":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
    return optuna.pruners.NopPruner()


_OPTUNA_STATE = {
    "RUNNING": "RUNNING",
    "COMPLETE": "COMPLETE",
    "PRUNED": "PRUNED",
    "FAILED": "FAIL",
    "STOPPED": "FAIL",
}


def build_study(
    plan: SweepPlan, stored: list[StoredTrial], stream: np.random.RandomState | None = None
) -> Study:
    optuna = _optuna()
    from optuna.trial import TrialState as OptunaState
    from optuna.trial import create_trial

    study: Study = optuna.create_study(
        direction=plan.direction, sampler=_sampler(plan, stream), pruner=_pruner(plan)
    )
    dists = distributions(plan.section)
    for trial in sorted(stored, key=lambda t: t.number):
        state = OptunaState[_OPTUNA_STATE[trial.state]]
        value = trial.value if state == OptunaState.COMPLETE else None
        if state == OptunaState.COMPLETE and value is None:
            state = OptunaState.FAIL
        # A value outside its distribution (a row written under an older spec) is left out rather
        # than failing every decision of the sweep.
        names = [name for name in dists if name in trial.params and _fits(dists[name], trial.params[name])]
        study.add_trial(
            create_trial(
                state=state,
                value=value,
                params={name: trial.params[name] for name in names},
                distributions={name: dists[name] for name in names},
                intermediate_values=dict(trial.intermediate),
                system_attrs={**trial.system_attrs, "dragdl_number": trial.number},
            )
        )
    return study


def ask(plan: SweepPlan, stored: list[StoredTrial]) -> tuple[dict[str, Scalar], dict[str, Any]]:
    """The next trial's params (`node.param` -> value) and what the sampler keeps on it."""
    if plan.sampler == "grid":
        return grid_point(plan, stored)
    stream = _stream(plan, stored)
    study = build_study(plan, stored, stream)
    trial = study.ask(distributions(plan.section))
    frozen = study._storage.get_trial(trial._trial_id)  # the params and attrs the sampler set
    return dict(frozen.params), {**_plain(frozen.system_attrs), STREAM_ATTR: _stream_state(stream)}


def should_prune(plan: SweepPlan, stored: list[StoredTrial], number: int) -> tuple[bool, dict[str, Any]]:
    """Whether the running trial `number` should stop now, from its intermediate values and the
    others'; with the system attrs the pruner updated (successive-halving rungs)."""
    study = build_study(plan, stored)
    for frozen in study.get_trials(deepcopy=False):
        if frozen.system_attrs.get("dragdl_number") == number:
            pruned = bool(study.pruner.prune(study, frozen))
            attrs = study._storage.get_trial(frozen._trial_id).system_attrs
            return pruned, _plain(attrs)
    raise KeyError(number)


MAX_IMPORTANCE_TRIALS = 200
"""Complete trials fANOVA reads (the newest): its cost grows with them (16 s of CPU for 1,000)."""


def importance(plan: SweepPlan, stored: list[StoredTrial]) -> dict[str, float]:
    """Each param's importance for the objective (fANOVA) over the newest MAX_IMPORTANCE_TRIALS
    complete trials; empty below two of them, or when fANOVA cannot tell."""
    complete = [t for t in stored if t.state == "COMPLETE" and t.value is not None]
    if len(complete) < 2:
        return {}
    complete = sorted(complete, key=lambda t: t.number)[-MAX_IMPORTANCE_TRIALS:]
    optuna = _optuna()
    study = build_study(plan, complete)
    try:
        found = optuna.importance.get_param_importances(
            study, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=plan.seed)
        )
    except (RuntimeError, ValueError, ZeroDivisionError):
        # Every complete trial has the same value of every param, or (ZeroDivisionError) no
        # variance to share out among many params.
        return {}
    return {name: float(value) for name, value in found.items()}


def _fits(distribution: BaseDistribution, value: Any) -> bool:
    try:
        return bool(distribution._contains(distribution.to_internal_repr(value)))
    except (ValueError, TypeError):
        return False


def _plain(attrs: dict[str, Any]) -> dict[str, Any]:
    """System attrs without DragDL's own bookkeeping, as JSON."""
    return {name: value for name, value in attrs.items() if name != "dragdl_number"}
