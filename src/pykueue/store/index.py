"""The in-memory index of current objects, and list pages read from it.

Owned by ``store/``; only :class:`pykueue.store.Store` uses it. Reads (get, list) are served
from here and never from SQLite.

Invariants:
- ``ResourceIndex.keys`` is exactly ``sorted(ResourceIndex.objects)`` when read: lists come out in
  (namespace, name) order, and a namespace is one contiguous slice of it;
- an :data:`Entry`'s body bytes are immutable: readers decode their own copy, or (``Store.list_raw``)
  get the bytes themselves.
"""

from __future__ import annotations

import gc
import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import orjson

from pykueue.store.selectors import FieldSelector, LabelSelector

__all__ = [
    "DATA",
    "RV",
    "Entry",
    "Key",
    "ResourceIndex",
    "count_after",
    "gc_paused",
    "match_into",
    "match_raw",
    "snapshot_view",
]

Key = tuple[str, str]
"""(namespace, name); namespace is "" for cluster-scoped objects."""

Snapshot = dict[Key, bytes | None]
"""For keys changed since a snapshot rv: their body at that rv (``None``: did not exist)."""


Entry = tuple[int, bytes]
"""A current object: (rv, body as orjson bytes); index it with :data:`RV` and :data:`DATA`.

A plain tuple of atoms, so CPython's collector untracks it at its first collection: 100,000
stored objects add nothing to a full collection's pause (a slotted class per object made that
pause ~100 ms). Labels live apart (:attr:`ResourceIndex.labels`) for the same reason: a dict
inside a tuple keeps the tuple tracked.
"""
RV: Final = 0
DATA: Final = 1
_NO_LABELS: dict[str, str] = {}


class ResourceIndex:
    """Objects of one resource, plus their keys in (namespace, name) order.

    Writes are the hot path, lists are rare: ``put`` appends a new key and ``remove`` only
    records a tombstone, so neither moves the key list; :attr:`keys` sorts it (timsort: linear for
    a sorted list with a short unsorted tail) and drops tombstones when a list asks for it.
    """

    __slots__ = ("_dead", "_keys", "_sorted", "labels", "objects")

    def __init__(self) -> None:
        self.objects: dict[Key, Entry] = {}
        self.labels: dict[Key, dict[str, str]] = {}
        """Private copies of the labels of objects that have any (for label selectors)."""
        self._keys: list[Key] = []
        self._sorted = True
        self._dead: set[Key] = set()
        """Removed keys still in ``_keys``."""

    def put(self, key: Key, entry: Entry, labels: dict[str, str]) -> None:
        """Store ``entry``; ``labels`` must be the index's own copy (never the caller's dict)."""
        if labels:
            self.labels[key] = labels
        else:
            self.labels.pop(key, None)
        if key not in self.objects:
            if key in self._dead:
                self._dead.discard(key)  # still in _keys, at its place
            else:
                if self._sorted and self._keys and key < self._keys[-1]:
                    self._sorted = False
                self._keys.append(key)
        self.objects[key] = entry

    def remove(self, key: Key) -> None:
        del self.objects[key]
        self.labels.pop(key, None)
        self._dead.add(key)
        if len(self._dead) > 1024 and len(self._dead) > len(self.objects):
            self._purge()  # bound memory under churn without lists: amortised O(1)

    def _purge(self) -> None:
        dead = self._dead
        self._keys = [k for k in self._keys if k not in dead]
        dead.clear()

    @property
    def keys(self) -> list[Key]:
        """Every current key, sorted (callers must not modify the list)."""
        if not self._sorted:
            self._keys.sort()
            self._sorted = True
        if self._dead:
            self._purge()
        return self._keys

    def namespace_range(self, namespace: str | None) -> tuple[int, int]:
        """The slice of :attr:`keys` in ``namespace`` (``None``: all)."""
        keys = self.keys
        if namespace is None:
            return 0, len(keys)
        # (ns,) sorts before every (ns, name); (ns + "\0",) after them and before any other namespace.
        return bisect_left(keys, (namespace,)), bisect_left(keys, (namespace + "\x00",))


def snapshot_view(
    res: ResourceIndex, namespace: str | None, after: Key | None, before: Snapshot
) -> Iterator[tuple[Key, bytes, dict[str, str] | None]]:
    """(key, body, labels or None) in key order after ``after``, as of the snapshot ``before``."""
    keys = res.keys
    lo, hi = res.namespace_range(namespace)
    if after is not None:
        lo = max(lo, bisect_right(keys, after))
    objects, labels = res.objects, res.labels
    if not before:
        for i in range(lo, hi):
            key = keys[i]
            yield key, objects[key][DATA], labels.get(key, _NO_LABELS)
        return
    # Keys deleted since the snapshot are merged back in; changed ones use their old body.
    revived = sorted(
        k
        for k, body in before.items()
        if body is not None
        and k not in objects
        and (namespace is None or k[0] == namespace)
        and (after is None or k > after)
    )
    for key in heapq.merge(keys[lo:hi], revived):
        if key in before:
            body = before[key]
            if body is not None:
                yield key, body, None
        else:
            yield key, objects[key][DATA], labels.get(key, _NO_LABELS)


def match_into(
    key: Key,
    data: bytes,
    labels_of_key: dict[str, str] | None,
    labels: LabelSelector,
    fields: FieldSelector,
    out: list[dict[str, Any]],
) -> bool:
    """Append the decoded object to ``out`` if it matches; decode the body only when needed."""
    if fields.key_only and not fields.empty and not fields.matches_key(*key):
        return False
    if labels_of_key is not None and not labels.empty and not labels.matches(labels_of_key):
        return False
    obj: dict[str, Any] = orjson.loads(data)
    if labels_of_key is None and not labels(obj):
        return False
    if not fields.key_only and not fields(obj):
        return False
    out.append(obj)
    return True


def match_raw(
    key: Key, data: bytes, labels_of_key: dict[str, str] | None, labels: LabelSelector, fields: FieldSelector
) -> bool:
    """Whether a stored body matches the selectors; decodes it only when a selector needs it."""
    if fields.key_only and not fields.empty and not fields.matches_key(*key):
        return False
    if labels_of_key is not None and not labels.empty and not labels.matches(labels_of_key):
        return False
    needs_labels = labels_of_key is None and not labels.empty
    needs_fields = not fields.key_only and not fields.empty
    if not needs_labels and not needs_fields:
        return True
    obj: dict[str, Any] = orjson.loads(data)
    return (not needs_labels or labels(obj)) and (not needs_fields or fields(obj))


def count_after(res: ResourceIndex, namespace: str | None, last: Key, before: Snapshot) -> int:
    """How many keys after ``last`` the snapshot holds (kube's remainingItemCount)."""
    lo, hi = res.namespace_range(namespace)
    count = hi - max(lo, bisect_right(res.keys, last))
    for key, body in before.items():
        if key > last and (namespace is None or key[0] == namespace):
            count += (body is not None) - (key in res.objects)
    return count


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while decoding many objects at once.

    Decoding a large list allocates many dicts and lists that all stay alive until the list
    returns, so the collector would run over and over finding nothing: decoded JSON has no
    reference cycles (the cost is in docs/performance.md). Memory is still freed by reference
    counting; the previous state is restored even on error.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
