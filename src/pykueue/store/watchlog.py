"""The watch log: a bounded, rv-ordered ring of the store's recent changes.

Owned by ``store/``; only :class:`pykueue.store.Store` writes to it. It serves two readers:

- watches that resume from a resourceVersion (:meth:`WatchLog.events_since`), and
- paginated lists that continue at a snapshot rv (:meth:`WatchLog.changes_after` tells what each
  key looked like at that rv, so a continuation is consistent with its first page).

Invariants:
- entries are appended in strictly increasing rv order;
- ``events_since`` returns only *durable* entries (committed and handed to subscribers), in rv
  order, so a watch never reports a change that a crash could still undo;
- every change with rv > :attr:`WatchLog.compacted_rv` is kept; asking for older history raises
  :class:`~pykueue.api.meta.errors.Gone`, as kube-apiserver does after etcd compaction.
  Non-durable entries are never compacted.
"""

from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

from pykueue.api.meta.errors import Gone
from pykueue.store.index import Key, gc_paused
from pykueue.store.types import EventType, WatchEvent

__all__ = ["LogEntry", "WatchLog", "to_event"]

LogEntry = tuple[int, EventType, str, Key, bytes, "bytes | None", tuple[tuple[str, str], ...]]
"""One change: (rv, type, resource, key, body after, body before or ``None`` for ADDED, the labels
of the body after as sorted (key, value) pairs).

A plain tuple of atoms (and tuples of atoms), so CPython's collector untracks it: a full window of
100,000 entries adds nothing to a full collection's pause.
"""


def to_event(entry: LogEntry) -> WatchEvent:
    """A new :class:`WatchEvent` whose object is decoded from the entry's bytes when first read."""
    rv, type, resource, key, data, _, labels = entry
    return WatchEvent(type, resource, None, rv, data=data, key=key, labels=labels)


_rv_of = itemgetter(0)


class WatchLog:
    """Entries ``[head, visible)`` are delivered and readable by watches, ``[visible, durable)``
    are committed and about to be delivered, ``[durable, end)`` await a commit."""

    def __init__(self, window: int, start_rv: int) -> None:
        if window < 1:
            raise ValueError("compaction window must be at least 1 event")
        self._window = window
        self._entries: list[LogEntry] = []
        self._head = 0
        self._visible = 0
        self._durable = 0
        self._compacted_rv = start_rv

    @property
    def compacted_rv(self) -> int:
        """Every change with a larger rv is still in the log."""
        return self._compacted_rv

    def append(self, entry: LogEntry) -> None:
        self._entries.append(entry)

    def drop_last(self) -> None:
        """Forget the newest entry (never durable): its write was taken back."""
        assert len(self._entries) > self._durable
        self._entries.pop()

    def mark_durable(self) -> None:
        """Everything appended so far is committed (or the store has no disk)."""
        self._durable = len(self._entries)

    def take_undelivered(self) -> list[LogEntry]:
        """Durable entries not yet handed to subscribers; they become visible to watches now."""
        if self._visible == self._durable:
            return []
        taken = self._entries[self._visible : self._durable]
        self._visible = self._durable
        self._compact()
        return taken

    def events_since(self, resource: str, rv: int, namespace: str | None) -> list[WatchEvent]:
        """Visible events of ``resource`` (in ``namespace`` unless ``None``) with rv > ``rv``."""
        self._check(rv)
        start = bisect_right(self._entries, rv, self._head, self._visible, key=_rv_of)
        events = []
        with gc_paused():
            for i in range(start, self._visible):
                entry = self._entries[i]
                if entry[2] == resource and (namespace is None or entry[3][0] == namespace):
                    events.append(to_event(entry))
        return events

    def changes_after(self, resource: str, rv: int) -> dict[Key, bytes | None]:
        """For each key of ``resource`` changed after ``rv`` (durable or not): its body at ``rv``.

        ``None`` means the key did not exist at ``rv``. Keys absent from the result are unchanged.
        """
        self._check(rv, continuing=True)
        start = bisect_right(self._entries, rv, self._head, len(self._entries), key=_rv_of)
        before: dict[Key, bytes | None] = {}
        for i in range(start, len(self._entries)):
            _, _, entry_resource, key, _, prev, _ = self._entries[i]
            if entry_resource == resource and key not in before:
                before[key] = prev
        return before

    def _check(self, rv: int, *, continuing: bool = False) -> None:
        if rv >= self._compacted_rv:
            return
        if continuing:
            raise Gone(
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter."
            )
        raise Gone(f"too old resource version: {rv} ({self._compacted_rv})")

    def _compact(self) -> None:
        """Drop the oldest visible entries beyond the window (amortised O(1) per entry)."""
        excess = len(self._entries) - self._head - self._window
        drop = min(excess, self._visible - self._head)
        if drop <= 0:
            return
        self._head += drop
        self._compacted_rv = self._entries[self._head - 1][0]
        if self._head >= 4096 and self._head * 2 >= len(self._entries):
            del self._entries[: self._head]
            self._visible -= self._head
            self._durable -= self._head
            self._head = 0
