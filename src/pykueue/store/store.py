"""The versioned object store under the embedded API server.

Owned by ``store/``. The registry is its only writer (nothing writes around the registry, so
every write gets the API's semantics); the registry, ``LocalClient`` and the API server's watch streams read it.

What it keeps, per key ``(resource, namespace, name)``: the object's body as orjson bytes and its
resourceVersion (rv). One global counter orders every write: create, update and delete each take
the next rv, stamped into ``metadata.resourceVersion`` (as a string). Nothing else in ``metadata``
is touched: uid, timestamps, generation and finalizers are the registry's job.

Invariants:
- ``get``/``list`` never touch SQLite: an in-memory index holds every current object, and
  SQLite is write-behind only. Reads decode the stored bytes, so a caller can never mutate the
  store through a returned dict; bytes are also cheaper to keep and to copy out than dicts
  (figures in docs/performance.md, "The garbage collector and long-lived records").
- Subscribers see every change exactly once, in rv order, and only after it is durable
  (committed to SQLite, or immediately for an in-memory store).
- A failed write (bad key, stale rv, unserialisable body, or with ``auto_flush`` a failed
  commit) changes nothing.

Durability and batching (``auto_flush``): with ``auto_flush=True`` (the default) every write
commits its own transaction before returning: simplest, every acknowledged write is on disk,
and subscribers are called from inside the write. With ``auto_flush=False`` writes only update
memory and queue for the next :meth:`Store.flush`, which commits the whole batch in one
transaction (several times the write throughput, and repeated writes of one key coalesce) and
then notifies subscribers. The price: until ``flush`` a write is visible to ``get``/``list`` but
not yet durable, so a crash loses it (the file stays consistent, and rvs handed out for lost
writes may be reused). The API server turns ``auto_flush`` off and flushes once per event-loop
tick; it should flush before acknowledging a write if acknowledged must mean durable.

Threading: not thread-safe. Use a store from one thread (the asyncio loop); SQLite's connection
is bound to the thread that opened the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

import orjson

from pykueue.api.meta.errors import AlreadyExists, BadRequest, Conflict, NotFound
from pykueue.store.index import (
    DATA,
    RV,
    Entry,
    Key,
    ResourceIndex,
    count_after,
    gc_paused,
    match_into,
    match_raw,
    snapshot_view,
)
from pykueue.store.pagination import decode_continue, encode_continue
from pykueue.store.selectors import parse_field_selector, parse_label_selector
from pykueue.store.sqlite import Row, SqliteBackend
from pykueue.store.types import EventType, ListResult, RawListResult, WatchEvent
from pykueue.store.watchlog import WatchLog, to_event

_Objects = list[dict[str, Any]]
_Bodies = list[bytes]

__all__ = ["Store"]

log = logging.getLogger(__name__)

Subscriber = Callable[[WatchEvent], None]
_EMPTY: dict[str, str] = {}


def _split_resource(resource: str) -> tuple[str, str]:
    plural, _, group = resource.partition(".")
    return plural, group


def _not_found(resource: str, name: str) -> NotFound:
    plural, group = _split_resource(resource)
    return NotFound.object(plural, name, group)


def _key_of(obj: Any) -> Key:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        raise BadRequest("object has no metadata")
    name, namespace = meta.get("name"), meta.get("namespace") or ""
    if not isinstance(name, str) or not name:
        raise BadRequest("resource name may not be empty")
    if not isinstance(namespace, str):
        raise BadRequest("metadata.namespace must be a string")
    return namespace, name


def _encode(obj: dict[str, Any], rv: int) -> tuple[bytes, dict[str, str]]:
    """The body as stored (``metadata.resourceVersion`` set) and a private copy of its labels."""
    meta = dict(obj["metadata"])
    meta["resourceVersion"] = str(rv)
    body = dict(obj)
    body["metadata"] = meta
    try:
        data = orjson.dumps(body)
    except TypeError as err:
        raise BadRequest(f"object is not valid JSON: {err}") from None
    labels = meta.get("labels")
    return data, (dict(labels) if isinstance(labels, dict) and labels else _EMPTY)


class Store:
    """See the module docstring; the method contract is in ``docs/contracts.md``."""

    def __init__(
        self,
        path: str | None = None,
        *,
        compaction_window: int = 100_000,
        auto_flush: bool = True,
        durability: str = "fsync",
    ) -> None:
        self._resources: dict[str, ResourceIndex] = {}
        self._subscribers: list[Subscriber] = []
        self._auto_flush = auto_flush
        self._dispatching = False
        self._closed = False
        self.commit_error: str | None = None
        """Why the last commit failed (a full disk, ...), None once one succeeds: readiness reads it."""
        self._rv = 0
        # key -> (rv, body) to upsert, or None to delete, at the next flush (disk stores only).
        self._pending: dict[tuple[str, str, str], tuple[int, bytes] | None] = {}
        self._db = SqliteBackend(path, durability=durability) if path is not None else None
        if self._db is not None:
            self._rv = self._load(self._db)
        self._log = WatchLog(compaction_window, start_rv=self._rv)

    def _load(self, db: SqliteBackend) -> int:
        counter, rows = db.load()
        newest = 0
        for resource, namespace, name, rv, body in rows:
            labels = (orjson.loads(body).get("metadata") or {}).get("labels") or _EMPTY
            self._resource(resource).put((namespace, name), (rv, body), dict(labels))
            newest = max(newest, rv)
        return max(counter, newest)

    def _resource(self, resource: str) -> ResourceIndex:
        res = self._resources.get(resource)
        if res is None:
            res = self._resources[resource] = ResourceIndex()
        return res

    # ----------------------------------------------------------------------------- lifecycle

    def claim_writer(self) -> None:
        """Become the only writer of the data file now (raises StoreFileError if another process is).

        Without this the claim happens at the first flush, which for a server means after it has
        started serving. A memory store has nothing to claim.
        """
        if self._db is not None:
            self._db.claim_writer()

    @property
    def resource_version(self) -> int:
        """The newest rv handed out (durable or not)."""
        return self._rv

    def health(self) -> str | None:
        """None while writes can be made durable; else why not (closed, the last commit failed)."""
        if self._closed:
            return "the store is closed"
        return self.commit_error

    def close(self) -> None:
        """Flush pending writes and release the database; the store is unusable afterwards."""
        if self._closed:
            return
        self.flush()
        self._closed = True
        if self._db is not None:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def flush(self) -> None:
        """Commit pending writes in one transaction, then notify subscribers of them.

        If the commit fails the error propagates, nothing is notified, and the batch stays
        pending so a later flush retries it.
        """
        self._check_open()
        self._commit()
        self._publish()

    def _commit(self) -> None:
        """Write the pending batch in one transaction; on error it stays pending."""
        if self._pending and self._db is not None:
            upserts: list[Row] = []
            deletes: list[tuple[str, str, str]] = []
            for (resource, namespace, name), value in self._pending.items():
                if value is None:
                    deletes.append((resource, namespace, name))
                else:
                    upserts.append((resource, namespace, name, value[0], value[1]))
            try:
                self._db.commit(upserts, deletes, self._rv)
            except Exception as exc:
                self.commit_error = f"{exc.__class__.__name__}: {exc}"
                raise
            self.commit_error = None
        self._pending.clear()

    def _publish(self) -> None:
        """Everything written so far is durable: show it to watches and subscribers."""
        self._log.mark_durable()
        self._dispatch()

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback`` with every durable change from now on; returns the unsubscriber.

        Callbacks run synchronously inside :meth:`flush` (or the write, with ``auto_flush``):
        they must be cheap (hand the event to a queue). An exception in one is logged and does not
        stop the others. Several subscribers share one event object: treat it as read-only.
        """
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _dispatch(self) -> None:
        if self._dispatching:  # a subscriber wrote: the outer loop delivers it, in rv order
            return
        self._dispatching = True
        try:
            while entries := self._log.take_undelivered():
                if not self._subscribers:
                    break  # take_undelivered took everything, including what we appended
                for entry in entries:
                    event = to_event(entry)
                    for callback in tuple(self._subscribers):
                        try:
                            callback(event)
                        except Exception:
                            log.exception(
                                "store subscriber %r failed on %s rv=%d", callback, event.type, event.resource_version
                            )
        finally:
            self._dispatching = False

    # ---------------------------------------------------------------------------------- CRUD

    def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        res = self._resources.get(resource)
        obj = res.objects.get((namespace, name)) if res is not None else None
        if obj is None:
            raise _not_found(resource, name)
        result: dict[str, Any] = orjson.loads(obj[DATA])
        return result

    def version_of(self, resource: str, namespace: str, name: str) -> int:
        """The object's current rv without decoding it: callers that cache something derived from
        an object (the registry's "is this namespace terminating?") check it is still current."""
        return self._current(resource, (namespace, name), None)[RV]

    def create(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        self._check_open()
        key = _key_of(obj)
        res = self._resource(resource)
        if key in res.objects:
            plural, group = _split_resource(resource)
            raise AlreadyExists.object(plural, key[1], group)
        data, labels = _encode(obj, self._rv + 1)
        self._rv += 1
        res.put(key, (self._rv, data), labels)
        self._record("ADDED", resource, key, data, None, labels)
        result: dict[str, Any] = orjson.loads(data)
        return result

    def update(self, resource: str, obj: dict[str, Any], *, expected_rv: str | None) -> dict[str, Any]:
        """Replace an object. ``expected_rv`` ``None`` or ``""`` means unconditional."""
        self._check_open()
        key = _key_of(obj)
        current = self._current(resource, key, expected_rv)
        data, labels = _encode(obj, self._rv + 1)
        self._rv += 1
        self._resources[resource].put(key, (self._rv, data), labels)
        self._record("MODIFIED", resource, key, data, current[DATA], labels)
        result: dict[str, Any] = orjson.loads(data)
        return result

    def delete(self, resource: str, namespace: str, name: str, *, expected_rv: str | None = None) -> dict[str, Any]:
        self._check_open()
        key = (namespace, name)
        current = self._current(resource, key, expected_rv)
        body = orjson.loads(current[DATA])
        body["metadata"]["resourceVersion"] = str(self._rv + 1)
        data = orjson.dumps(body)
        self._rv += 1
        self._resources[resource].remove(key)
        labels = body["metadata"].get("labels")
        self._record("DELETED", resource, key, data, current[DATA], labels if isinstance(labels, dict) else _EMPTY)
        body_copy: dict[str, Any] = orjson.loads(data)
        return body_copy

    def _current(self, resource: str, key: Key, expected_rv: str | None) -> Entry:
        res = self._resources.get(resource)
        current = res.objects.get(key) if res is not None else None
        if current is None:
            raise _not_found(resource, key[1])
        if expected_rv and expected_rv != str(current[RV]):
            plural, group = _split_resource(resource)
            raise Conflict.stale(plural, key[1], group)
        return current

    def _record(
        self, type: EventType, resource: str, key: Key, data: bytes, prev: bytes | None, labels: dict[str, str]
    ) -> None:
        pairs = tuple(sorted((str(k), str(v)) for k, v in labels.items())) if labels else ()
        self._log.append((self._rv, type, resource, key, data, prev, pairs))
        if self._db is not None:
            pending_key = (resource, key[0], key[1])
            self._pending[pending_key] = None if type == "DELETED" else (self._rv, data)
            if self._auto_flush:
                try:
                    self._commit()
                except BaseException:
                    self._undo_last(pending_key, prev)
                    raise
        if self._auto_flush:
            self._publish()

    def _undo_last(self, pending_key: tuple[str, str, str], prev: bytes | None) -> None:
        """Take back the newest write whose own commit failed, so a failed write changes nothing."""
        self._log.drop_last()
        self._pending.pop(pending_key, None)
        resource, namespace, name = pending_key
        res, key = self._resources[resource], (namespace, name)
        if key in res.objects:
            res.remove(key)
        if prev is not None:
            meta = orjson.loads(prev)["metadata"]
            res.put(key, (int(meta["resourceVersion"]), prev), dict(meta.get("labels") or {}))
        self._rv -= 1

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("store is closed")

    # ---------------------------------------------------------------------------------- reads

    def events_since(self, resource: str, resource_version: int, namespace: str | None = None) -> list[WatchEvent]:
        """Durable events of ``resource`` with rv > ``resource_version``, oldest first.

        ``namespace`` ``None`` means every namespace. Raises ``Gone`` (410) when the log no longer
        holds every event after ``resource_version`` (compacted, or before the last restart).

        A watch subscribes first, then replays ``events_since``: the two never overlap nor leave a
        gap. A list's rv may include writes not yet flushed, whose events reach subscribers
        later: a watch starting from a list's rv N must drop events with rv <= N.
        """
        return self._log.events_since(resource, resource_version, namespace)

    def list(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        selectable_fields: Collection[str] | None = None,
    ) -> ListResult:
        """Objects of ``resource`` in (namespace, name) order; ``namespace`` ``None`` = all.

        ``limit`` > 0 paginates; the returned ``continue_token`` lists the rest as of the first
        page's rv. ``selectable_fields`` restricts field selectors to ``metadata.name``,
        ``metadata.namespace`` and these paths (``None``: any path).
        """
        items: list[dict[str, Any]] = []
        rv, token, count = self._select(
            resource, namespace, label_selector, field_selector, limit, continue_token, selectable_fields, items, None
        )
        return ListResult(items, rv, token, count)

    def list_raw(
        self,
        resource: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        selectable_fields: Collection[str] | None = None,
    ) -> RawListResult:
        """:meth:`list`, but each item is the stored object's JSON bytes (not decoded).

        For a reader that only re-encodes the objects (the API server's JSON lists): splicing the
        stored bytes skips decoding and encoding every object. The bytes are immutable, so handing
        them out cannot change what the store holds.
        """
        items: list[bytes] = []
        rv, token, count = self._select(
            resource, namespace, label_selector, field_selector, limit, continue_token, selectable_fields, None, items
        )
        return RawListResult(items, rv, token, count)

    def _select(
        self,
        resource: str,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        limit: int | None,
        continue_token: str | None,
        selectable_fields: Collection[str] | None,
        objects: _Objects | None,
        raw: _Bodies | None,
    ) -> tuple[int, str | None, int | None]:
        """Fill ``objects`` (decoded) or ``raw`` (bytes) with one page; return (rv, token, count)."""
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, selectable_fields)
        snapshot, after = self._rv, None
        if continue_token:
            snapshot, after = decode_continue(continue_token)
            if snapshot == -1:
                snapshot = self._rv
            elif snapshot > self._rv:
                raise BadRequest("invalid continue token: continue key is not valid: resourceVersion is in the future")
        res = self._resources.get(resource) or ResourceIndex()
        before = self._log.changes_after(resource, snapshot) if snapshot < self._rv else {}
        page_size = limit if limit is not None and limit > 0 else None
        last: Key | None = None
        taken = 0
        with gc_paused():
            for key, data, key_labels in snapshot_view(res, namespace, after, before):
                if raw is not None:
                    if not match_raw(key, data, key_labels, labels, fields):
                        continue
                    raw.append(data)
                elif objects is not None and not match_into(key, data, key_labels, labels, fields, objects):
                    continue
                taken += 1
                last = key
                if page_size is not None and taken == page_size:
                    break
            else:
                return snapshot, None, None
        assert last is not None
        remaining = count_after(res, namespace, last, before)
        if remaining == 0:
            return snapshot, None, None
        count = remaining if labels.empty and fields.empty else None
        return snapshot, encode_continue(snapshot, last), count
