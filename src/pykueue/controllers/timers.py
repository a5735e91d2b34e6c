"""Clock-driven wake-ups for reconcilers ("look at this workload again at time T").

Owns: a heap of (due time on the injected clock, callback key). Reconcilers that must act at a
point in time (waitForPodsReady timeout, backoff expiry, maximum execution time) register the time
here instead of sleeping, so a test that advances a ``ManualClock`` sees the action without waiting
real time, and production (``SystemClock``) behaves the same.

Who calls it: the workload controller (and anything else needing a timed requeue); the manager
runs :meth:`Timers.run` as a background task.
Invariant: a key fires never before its due time on the clock, and at most once per earliest due
time (re-registering the same key for later is a no-op, so the heap does not grow with events).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from pykueue.api.meta.clock import Clock

__all__ = ["Timers"]

K = TypeVar("K", bound=Hashable)


class Timers(Generic[K]):
    def __init__(self, clock: Clock, fire: Callable[[K], None], *, poll_interval: float = 0.05) -> None:
        self._clock = clock
        self._fire = fire
        self._poll = poll_interval
        self._heap: list[tuple[float, int, K]] = []
        self._due: dict[K, float] = {}
        self._seq = 0
        self._wake = asyncio.Event()

    def at(self, when: float, key: K) -> None:
        """Fire ``key`` once the clock reaches ``when`` (epoch seconds). A key waits for its earliest
        time only: registering a later time for a key that is already due sooner is a no-op."""
        current = self._due.get(key)
        if current is not None and current <= when:
            return
        self._due[key] = when
        self._seq += 1
        heapq.heappush(self._heap, (when, self._seq, key))
        self._wake.set()

    def after(self, seconds: float, key: K) -> None:
        self.at(self._clock.now() + max(0.0, seconds), key)

    def pending(self) -> int:
        return len(self._due)

    def fire_due(self) -> int:
        """Fire every key that is due now; returns how many fired."""
        now = self._clock.now()
        fired = 0
        while self._heap and self._heap[0][0] <= now:
            when, _, key = heapq.heappop(self._heap)
            if self._due.get(key) != when:
                continue  # superseded by an earlier registration that already fired
            del self._due[key]
            self._fire(key)
            fired += 1
        return fired

    async def run(self) -> None:
        """Poll the clock. With a real clock the wait is bounded by the next due time; with a manual
        clock time only moves when a test says so, so polling at a short interval is what notices."""
        while True:
            self.fire_due()
            self._wake.clear()
            delay = self._poll
            if self._heap:
                delay = min(delay, max(0.0, self._heap[0][0] - self._clock.now()))
            # asyncio.timeout, not wait_for: wait_for can swallow a cancellation on Python 3.11
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(delay, 0.001)):
                    await self._wake.wait()
