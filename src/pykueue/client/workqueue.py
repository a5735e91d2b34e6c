"""A deduplicating, rate-limited work queue of keys and the worker loop that drains it.

Owned by ``client/``; every reconciler (``controllers/``, ``cluster/``) feeds keys into one from
informer handlers and drains it with :func:`run_workers`. Semantics are client-go's workqueue:

- a key waiting in the queue is stored once, however often it is added (dedup);
- a key is never handed to two workers at once: added while being processed, it is marked
  dirty and re-queued when the worker calls :meth:`WorkQueue.done`;
- :meth:`WorkQueue.add_after` delays an add (the earliest pending delay for a key wins);
- :meth:`WorkQueue.add_rate_limited` backs off per key exponentially (5 ms doubling to 1000 s)
  until :meth:`WorkQueue.forget` resets it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["QueueShutDown", "WorkQueue", "run_workers"]

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)

BASE_DELAY = 0.005
"""First retry after a failure: 5 ms, as client-go's default controller rate limiter."""
MAX_DELAY = 1000.0
"""Backoff cap: a key that keeps failing is retried at least every ~17 minutes."""


class QueueShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down and drained of waiting work."""


class WorkQueue(Generic[K]):
    def __init__(self, name: str = "") -> None:
        self.name = name
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._delayed: dict[K, tuple[float, asyncio.TimerHandle]] = {}
        self._failures: dict[K, int] = {}
        self._shutting_down = False

    def __len__(self) -> int:
        """Keys waiting to be handed out (not counting delayed or in-process ones)."""
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def add(self, key: K) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._wake_one()

    def add_after(self, key: K, delay: float) -> None:
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        pending = self._delayed.get(key)
        if pending is not None:
            if pending[0] <= when:
                return
            pending[1].cancel()
        self._delayed[key] = (when, loop.call_at(when, self._fire, key))

    def _fire(self, key: K) -> None:
        self._delayed.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: K) -> None:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(BASE_DELAY * 2 ** min(failures, 40), MAX_DELAY))

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    async def get(self) -> K:
        while not self._queue:
            if self._shutting_down:
                raise QueueShutDown(self.name)
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                # Pass a wake-up we consumed on to another waiter, so no key is stranded.
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()
                raise
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: K) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake_one()

    def shutdown(self) -> None:
        self._shutting_down = True
        for _, handle in self._delayed.values():
            handle.cancel()
        self._delayed.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


async def run_workers(
    queue: WorkQueue[K], reconcile: Callable[[K], Awaitable[float | None]], *, workers: int = 1
) -> None:
    """Drain ``queue`` with ``workers`` concurrent loops until it is shut down (or this is cancelled).

    ``reconcile`` returns None when done or a delay in seconds to look again; an exception logs,
    and requeues the key with backoff.
    """

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            try:
                requeue_after = await reconcile(key)
            except asyncio.CancelledError:
                queue.done(key)
                raise
            except Exception:
                log.exception("reconcile %s failed (queue %s); retrying with backoff", key, queue.name)
                queue.add_rate_limited(key)
            else:
                queue.forget(key)
                if requeue_after is not None:
                    queue.add_after(key, requeue_after)
            queue.done(key)

    tasks = [asyncio.create_task(worker(), name=f"{queue.name or 'queue'}-worker-{i}") for i in range(workers)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
