"""Login throttling: failed sign-ins per account and per client address, and a bound on how many
password checks run at once.

Failures are free up to a threshold; each one after it blocks the account (or address) for twice
as long as the previous block, up to `max_block_s`, answered 429 with `Retry-After`. The address
threshold is higher, so a shared address (an office behind one NAT) is not locked out by a few
typos, while one client guessing across many accounts still is. A successful sign-in clears the
account's count. Counts live in memory: a restart forgives, which is acceptable for throttling.

Argon2 is deliberately slow and memory-hungry; unbounded, 40 concurrent logins took every
thread-pool worker and every core, and the whole server answered in seconds. `PasswordGate` lets a
few checks run at once and turns the rest away (429) when too many are already waiting. Waiting is
on the event loop, not in a worker thread, so other requests keep their threads.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import HTTPException, status


@dataclass
class _Failures:
    count: int
    last: float
    blocked_until: float


class _Counter:
    def __init__(self, free: int, base_s: float, max_block_s: float, forget_s: float, max_keys: int) -> None:
        self.free = free
        self.base_s = base_s
        self.max_block_s = max_block_s
        self.forget_s = forget_s
        self.max_keys = max_keys
        self.entries: OrderedDict[str, _Failures] = OrderedDict()

    def wait_s(self, key: str, now: float) -> float:
        entry = self.entries.get(key)
        if entry is None:
            return 0.0
        if now - entry.last > self.forget_s:
            del self.entries[key]
            return 0.0
        return max(0.0, entry.blocked_until - now)

    def fail(self, key: str, now: float) -> None:
        entry = self.entries.pop(key, None)
        if entry is None or now - entry.last > self.forget_s:
            entry = _Failures(count=0, last=now, blocked_until=now)
        entry.count += 1
        entry.last = now
        beyond = entry.count - self.free
        if beyond >= 0:
            entry.blocked_until = now + min(self.max_block_s, self.base_s * 2**beyond)
        self.entries[key] = entry  # most recent last, so the oldest go first when full
        while len(self.entries) > self.max_keys:
            self.entries.popitem(last=False)

    def clear(self, key: str) -> None:
        self.entries.pop(key, None)


class LoginThrottle:
    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        account_failures: int = 5,
        address_failures: int = 20,
        base_s: float = 1.0,
        max_block_s: float = 15 * 60,
        forget_s: float = 60 * 60,
        max_keys: int = 100_000,
    ) -> None:
        self.clock = clock
        self.accounts = _Counter(account_failures, base_s, max_block_s, forget_s, max_keys)
        self.addresses = _Counter(address_failures, base_s, max_block_s, forget_s, max_keys)

    def check(self, account: str, address: str) -> None:
        """Raise 429 with `Retry-After` while the account or the address is blocked."""
        now = self.clock()
        wait = max(self.accounts.wait_s(account.lower(), now), self.addresses.wait_s(address, now))
        if wait > 0:
            seconds = math.ceil(wait)
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"too many failed sign-ins: try again in {seconds} s",
                headers={"Retry-After": str(seconds)},
            )

    def failed(self, account: str, address: str) -> None:
        now = self.clock()
        self.accounts.fail(account.lower(), now)
        self.addresses.fail(address, now)

    def succeeded(self, account: str) -> None:
        self.accounts.clear(account.lower())


class PasswordGate:
    """At most `concurrent` password checks at once, at most `waiting` more queued for a turn."""

    def __init__(self, concurrent: int, waiting: int) -> None:
        self.slots = asyncio.Semaphore(concurrent)
        self.max_waiting = waiting
        self.waiting = 0

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if self.slots.locked() and self.waiting >= self.max_waiting:
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                "too many sign-ins at once: try again in a moment",
                headers={"Retry-After": "1"},
            )
        self.waiting += 1
        try:
            await self.slots.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self.slots.release()
