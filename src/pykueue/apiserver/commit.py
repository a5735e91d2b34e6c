"""Group commit: one store flush per event-loop tick, shared by every write of that tick.

Owned by ``apiserver/``. The embedded server runs its store with ``auto_flush=False``; this
committer listens to every registry write (HTTP requests and in-process controllers alike),
schedules a single ``Store.flush()`` with ``loop.call_soon`` for the tick, and lets each HTTP write
handler ``await durable()`` before it answers. So a 200/201 always means "on disk", while a burst
of writes (a controller creating 50 pods, 50 concurrent kubectl applies) costs one SQLite commit
instead of fifty. Watchers see events when the flush dispatches them.

Invariant: every write that happened before ``durable()`` was awaited is flushed when it returns;
a failed flush is raised to every waiter of that tick (the batch stays pending and is retried by
the next tick's flush).
"""

from __future__ import annotations

import asyncio
import logging
import threading

from pykueue.store import Store

__all__ = ["GroupCommitter"]

log = logging.getLogger(__name__)


class GroupCommitter:
    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self._store = store
        self._loop = loop
        self._thread = threading.get_ident()
        self._pending: asyncio.Future[None] | None = None
        self.flushes = 0
        """How many flushes ran (tests and benchmarks read it)."""

    def on_write(self) -> None:
        """Registry write listener: make sure a flush is scheduled for this tick."""
        if threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self.on_write)
            return
        if self._pending is None:
            self._pending = self._loop.create_future()
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        future, self._pending = self._pending, None
        try:
            self._store.flush()
            self.flushes += 1
        except Exception as err:  # surfaced to the writers of this tick
            log.exception("store flush failed")
            if future is not None and not future.done():
                future.set_exception(err)
                future.exception()  # mark retrieved: writers may be gone already
            return
        if future is not None and not future.done():
            future.set_result(None)

    async def durable(self) -> None:
        """Wait until every write made so far is flushed (immediately if nothing is pending)."""
        if self._pending is not None:
            await asyncio.shield(self._pending)

    def close(self) -> None:
        if self._pending is not None:
            self._flush()
