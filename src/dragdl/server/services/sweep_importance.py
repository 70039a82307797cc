"""The params' importance of each sweep, computed once per settled trial and off the request path.

fANOVA costs seconds of CPU (16 s for 1,000 trials before `study.MAX_IMPORTANCE_TRIALS` bounded it),
and the sweep page polls the detail every few seconds. So the detail never computes it: it reads the
last result, keyed by the sweep's count of complete trials, and when that count moved it hands the
computation to one background thread (one at a time per sweep, the newest count wins) and answers
the previous result meanwhile. That thread only waits: fANOVA itself runs in the server's CPU pool
(`services/cpu_pool.py`), since in the server's process its Python holds the GIL, and every other
request waited for it (1.7 s for 1,000 trials). The cache lives in the server process; after a
restart the first poll starts it again.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dragdl.db.models import Sweep, SweepTrial
from dragdl.server.services.cpu_pool import CpuPool, PoolBusy

log = logging.getLogger(__name__)

MAX_SWEEPS = 256
"""Sweeps whose importance is kept (the least recently read are dropped first)."""

MIN_TRIALS = 10
MIN_TRIALS_PER_PARAM = 5


def meaningful_trials(params: int) -> int:
    """Complete trials below which fANOVA's shares are noise rather than a finding: its forest
    splits a handful of points by chance (4 trials of 2 params give one param nearly all of it).
    At least MIN_TRIALS, and MIN_TRIALS_PER_PARAM per searched param."""
    return max(MIN_TRIALS, MIN_TRIALS_PER_PARAM * params)


def settled(trials: list[SweepTrial]) -> int:
    """What the importance depends on: the complete trials with a value (they only ever grow)."""
    return sum(1 for row in trials if row.state == "COMPLETE" and row.value is not None)


class ImportanceCache:
    def __init__(self, cpu: CpuPool, max_sweeps: int = MAX_SWEEPS) -> None:
        self.cpu = cpu
        self.max_sweeps = max_sweeps
        self._lock = threading.Lock()
        self._known: OrderedDict[str, tuple[int, dict[str, float]]] = OrderedDict()
        """Per sweep: the count of complete trials the importance was computed from, and it."""
        self._pending: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dragdl-importance")
        self.computed = 0
        """How many times importance was computed (the tests hold it to once per settled trial)."""

    def get(self, sweep: Sweep, trials: list[SweepTrial]) -> dict[str, float]:
        """The newest importance known for `sweep`; starts computing it when the trials moved on."""
        return self.read(sweep, trials)[1]

    def read(self, sweep: Sweep, trials: list[SweepTrial]) -> tuple[int, dict[str, float]]:
        """(the complete trials it was computed from, the newest importance known for `sweep`);
        starts computing it when the trials moved on."""
        from dragdl.runner.sweep_driver import plan_of, stored_trials

        count = settled(trials)
        with self._lock:
            known = self._known.get(sweep.id)
            if known is not None:
                self._known.move_to_end(sweep.id)
                if known[0] == count:
                    return known
            if count >= 2 and sweep.id not in self._pending:
                self._pending.add(sweep.id)
                # Plain data only crosses to the thread: the rows belong to the request's session.
                self._pool.submit(self._compute, sweep.id, count, plan_of(sweep), stored_trials(trials))
            return (0, {}) if known is None else known

    def wait_idle(self, timeout_s: float) -> bool:
        """True once nothing is being computed (for tests and the benchmark)."""
        done = threading.Event()
        self._pool.submit(done.set)
        return done.wait(timeout_s)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _compute(self, sweep_id: str, count: int, plan: Any, stored: list[Any]) -> None:
        from dragdl.engine.sweep.study import importance

        found: dict[str, float] = {}
        try:
            found = self.cpu.run(importance, plan, stored)
        except PoolBusy as exc:  # not computed: the next poll asks again
            log.warning("importance of sweep %s: %s", sweep_id, exc.message)
            with self._lock:
                self._pending.discard(sweep_id)
            return
        except Exception:  # a sweep's bad rows must not end the thread every sweep shares
            log.exception("importance of sweep %s", sweep_id)
        with self._lock:
            self.computed += 1
            self._pending.discard(sweep_id)
            self._known[sweep_id] = (count, found)
            self._known.move_to_end(sweep_id)
            while len(self._known) > self.max_sweeps:
                self._known.popitem(last=False)
