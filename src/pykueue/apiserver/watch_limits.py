"""What one watch may cost the server: its bounded event queue, and the per-client cap on open watches.

Owned by ``apiserver/``; :mod:`.watch` enforces these on every stream (the rules are in its docstring).
A :class:`WatchTracker` belongs to one server (``ResourceHandler.watches``): it counts open watches
per remote address, refuses one over the cap with :class:`TooManyWatches` (429), and keeps the open
watches' :class:`Inbox` queues and the counts of watches it closed or refused, per resource, which
``/metrics`` exports (:mod:`.watch_metrics`).
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from pykueue.api.meta.errors import ApiError
from pykueue.store.types import WatchEvent

__all__ = ["Inbox", "TooManyWatches", "WatchLimits", "WatchTracker"]


@dataclass(frozen=True, slots=True)
class WatchLimits:
    """What one watcher may cost the server (see the module docstring)."""

    max_pending: int = 10_000
    """Undelivered events queued for one watcher before it is closed as too slow."""
    write_timeout: float = 30.0
    """Seconds one write to a watch connection may block before the connection is aborted."""
    max_per_client: int = 1000
    """Watches open at once per remote address."""


class TooManyWatches(ApiError):
    """Over the per-client watch cap: kube-apiserver's answer to a client over its limits."""

    code = 429
    reason = "TooManyRequests"


class WatchTracker:
    """The open watches of one server: admission against the per-client cap, and their queues."""

    def __init__(self, limits: WatchLimits | None = None) -> None:
        self.limits = limits or WatchLimits()
        self._open: Counter[str] = Counter()
        self.inboxes: set[Inbox] = set()
        self.closed_slow = 0
        """Watches closed because their client fell ``max_pending`` events behind."""
        self.closed_stalled = 0
        """Watch connections aborted because a write blocked past ``write_timeout``."""
        self.refused = 0
        """Watches refused with 429 because their client had ``max_per_client`` open."""
        self.slow_by_resource: Counter[tuple[str, str]] = Counter()
        """(group, resource) -> watches closed as too slow: ``closed_slow`` split per resource."""
        self.stalled_by_resource: Counter[tuple[str, str]] = Counter()
        """(group, resource) -> stalled connections aborted: ``closed_stalled`` split per resource."""

    def note_slow(self, group: str, resource: str) -> None:
        self.closed_slow += 1
        self.slow_by_resource[(group, resource)] += 1

    def note_stalled(self, group: str, resource: str) -> None:
        self.closed_stalled += 1
        self.stalled_by_resource[(group, resource)] += 1

    def open(self, client: str) -> Callable[[], None]:
        """Count a watch for ``client`` (or raise :class:`TooManyWatches`); returns its release."""
        if self._open[client] >= self.limits.max_per_client:
            self.refused += 1
            raise TooManyWatches(
                "Too many requests, please try again later.",
                details={
                    "causes": [{"message": f"more than {self.limits.max_per_client} concurrent watches from {client}"}],
                    "retryAfterSeconds": 1,
                },
            )
        self._open[client] += 1

        def release() -> None:
            self._open[client] -= 1
            if self._open[client] <= 0:
                del self._open[client]

        return release

    def open_watches(self, client: str) -> int:
        return self._open[client]


class Inbox:
    """A watch's pending events: the store's callback appends, the stream drains them all at once.

    Cheaper than ``asyncio.Queue`` (which pays a method call, size checks and a waiter scan per
    item): appending is a deque append, and the one waiter is woken only when it sleeps.
    Single consumer, loop thread only (store subscribers run inside the flush, on the loop).

    Bounded: a put that finds ``limit`` events pending drops them all and marks the inbox
    ``overflowed`` (the watch then ends); from then on every put is dropped. ``peak`` is the most
    events ever pending at once.
    """

    __slots__ = ("_items", "_room", "_waiter", "limit", "overflowed", "peak")

    def __init__(self, limit: int) -> None:
        self._items: deque[WatchEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.limit = limit
        self._room = limit
        self.overflowed = False
        self.peak = 0

    def put(self, event: WatchEvent) -> None:
        items = self._items
        if len(items) >= self._room:
            self._overflow()
            return
        items.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _overflow(self) -> None:
        self.peak = max(self.peak, len(self._items))
        self._items.clear()
        self._room = 0  # every later put comes here and is dropped
        self.overflowed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def pending(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    async def wait(self) -> None:
        """Return once an event is pending (callers bound it with ``asyncio.timeout``)."""
        if self._items:
            return
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    def drain(self) -> list[WatchEvent]:
        if len(self._items) > self.peak:
            self.peak = len(self._items)
        events = list(self._items)
        self._items.clear()
        return events
