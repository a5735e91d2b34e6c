"""Watch streams: ``?watch=true`` as chunked newline-delimited JSON, like kube-apiserver.

Owned by ``apiserver/``; :mod:`.resource_handlers` hands GET requests with ``watch`` here. Semantics:
- ``resourceVersion`` unset or "0" (or ``sendInitialEvents=true``): synthetic ADDED events for the
  current state first; with ``sendInitialEvents`` that part ends with a BOOKMARK annotated
  ``k8s.io/initial-events-end: "true"``.
- ``resourceVersion=N``: every event after N from the store's watch log; a compacted N is an
  ERROR event carrying a 410 ``Expired`` Status (the HTTP status stays 200, as in Kubernetes).
- label/field selectors are applied to events: an object that stops matching is sent as DELETED,
  one that starts matching as ADDED.
- ``allowWatchBookmarks``: a BOOKMARK with the newest resourceVersion every ``bookmark_interval``.
- ``timeoutSeconds`` ends the stream; a client disconnect or server shutdown ends it within a
  second, and the store subscription is always released.

Limits (:class:`WatchLimits`, enforced per server by :class:`WatchTracker`), so that no watcher can
hurt the server:
- a watcher's queue of undelivered events is bounded (``max_pending``). One that falls that far behind
  is closed the way kube-apiserver's watch cache closes a watcher whose channel is full: its queue is
  dropped and the stream simply ends (no ERROR event). The client watches again from the last
  resourceVersion it saw, and lists again if that has left the watch log (410 Gone);
- each write to the connection may take at most ``write_timeout`` seconds; a connection that does not
  drain by then (a client that stopped reading) is aborted;
- at most ``max_per_client`` watches are open at once per remote address (not per bearer token: every
  client of an embedded cluster shares one token). One more is refused with kube-apiserver's 429
  ``TooManyRequests`` Status and ``Retry-After: 1``.

Invariant: events are written in resourceVersion order, each exactly once. Cost: queued events are
drained and written in one write per batch, and a live event's JSON line is encoded once and shared
by every watcher of the same kind, version and format (``_SharedLines``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from pykueue.api.meta.errors import ApiError, BadRequest, Gone
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.registry import Registry
from pykueue.store import parse_field_selector, parse_label_selector
from pykueue.store.types import WatchEvent

from .http import error_response, partial_metadata
from .tables import table
from .watch_limits import Inbox, TooManyWatches, WatchLimits, WatchTracker

__all__ = ["TooLargeResourceVersion", "TooManyWatches", "WatchLimits", "WatchOptions", "WatchTracker", "serve_watch"]

log = logging.getLogger(__name__)
_default_tracker = WatchTracker()
_TICK = 1.0


@dataclass(frozen=True, slots=True)
class WatchOptions:
    kind: KindInfo
    version: str
    namespace: str | None
    label_selector: str | None
    field_selector: str | None
    resource_version: str
    allow_bookmarks: bool
    send_initial_events: bool
    timeout_seconds: float | None
    table_version: str | None
    include_object: str
    bookmark_interval: float
    partial_metadata: bool = False


class TooLargeResourceVersion(ApiError):
    """A watch from a resourceVersion this server has not reached (e.g. one from before a crash that
    lost unflushed writes): the client must list again. kube-apiserver answers 504 the same way."""

    code = 504
    reason = "Timeout"


class _Filter:
    """Selector matching with kube's "moved in/out of the selection" translation.

    Store events carry only the new object, so the filter remembers which keys are in the
    selection (``known``). A watch resumed from a resourceVersion is seeded from the current list;
    keys whose state at that resourceVersion cannot be known (their first event is still to come)
    are ``uncertain``: a change that leaves them outside the selection is reported DELETED to be
    safe (a client that never had the object ignores it), as LocalClient does.
    """

    def __init__(self, options: WatchOptions) -> None:
        self._labels = parse_label_selector(options.label_selector)
        self._fields = parse_field_selector(options.field_selector)
        self.plain = self._labels.empty and self._fields.empty
        self.labels_only = self._fields.empty and not self._labels.empty
        """Decidable from an event's key and labels alone (no decode of the object)."""
        self.known: set[tuple[str, str]] = set()
        self.uncertain: set[tuple[str, str]] = set()

    def matches(self, obj: JSONDict) -> bool:
        return self._labels(obj) and self._fields(obj)

    def translate(self, event_type: str, obj: JSONDict) -> str | None:
        if self.plain:
            return event_type
        return self._translate(event_type, _key(obj), self.matches(obj))

    def translate_labels(self, event_type: str, key: tuple[str, str], labels: dict[str, str]) -> str | None:
        """``translate`` for a label-only selector, from the event's key and labels."""
        return self._translate(event_type, key, self._labels.matches(labels))

    def _translate(self, event_type: str, key: tuple[str, str], matches: bool) -> str | None:
        if key in self.uncertain:
            self.uncertain.discard(key)
            if event_type == "DELETED":
                self.known.discard(key)
                return "DELETED" if matches else None
            if matches:
                self.known.add(key)
                return event_type
            self.known.discard(key)
            return None if event_type == "ADDED" else "DELETED"
        was = key in self.known
        if event_type == "DELETED":
            self.known.discard(key)
            return "DELETED" if was else None
        if matches:
            self.known.add(key)
            return "MODIFIED" if was and event_type != "ADDED" else "ADDED"
        if was:
            self.known.discard(key)
            return "DELETED"
        return None


def _key(obj: JSONDict) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return metadata.get("namespace") or "", metadata.get("name") or ""


def _seed(
    registry: Registry,
    options: WatchOptions,
    namespace: str | None,
    matcher: _Filter,
    backlog: list[WatchEvent],
    start: int,
) -> None:
    """Membership for a resumed selector watch: see :class:`_Filter`."""
    if matcher.plain:
        return
    end = max([start, *(e.resource_version for e in backlog)])
    changed = {_key(e.object) for e in backlog}
    everything = registry.list(options.kind, namespace, version=options.version)["items"]
    for obj in everything:
        key = _key(obj)
        if key in changed or int(obj["metadata"].get("resourceVersion") or 0) > end:
            matcher.uncertain.add(key)
        elif matcher.matches(obj):
            matcher.known.add(key)


def _bookmark(options: WatchOptions, rv: int, *, initial_end: bool = False) -> JSONDict:
    kind = options.kind
    metadata: JSONDict = {"resourceVersion": str(rv)}
    if initial_end:
        metadata["annotations"] = {"k8s.io/initial-events-end": "true"}
    api_version = f"{kind.group}/{options.version}" if kind.group else options.version
    return {"type": "BOOKMARK", "object": {"kind": kind.kind, "apiVersion": api_version, "metadata": metadata}}


async def serve_watch(
    request: web.Request,
    registry: Registry,
    options: WatchOptions,
    stopping: asyncio.Event,
    now: Any,
    tracker: WatchTracker | None = None,
) -> web.StreamResponse:
    """Stream events until timeout, disconnect, shutdown or a limit (``now()`` gives table ages)."""
    tracker = tracker or _default_tracker
    try:
        release = tracker.open(request.remote or "")
    except TooManyWatches as err:
        refused = error_response(err)
        refused.headers["Retry-After"] = "1"
        return refused
    queue = Inbox(tracker.limits.max_pending)
    tracker.inboxes.add(queue)
    try:
        return await _serve(request, registry, options, stopping, now, tracker, queue)
    finally:
        tracker.inboxes.discard(queue)
        release()


async def _serve(
    request: web.Request,
    registry: Registry,
    options: WatchOptions,
    stopping: asyncio.Event,
    now: Any,
    tracker: WatchTracker,
    queue: Inbox,
) -> web.StreamResponse:
    kind = options.kind
    resource = kind.resource_key
    namespace = options.namespace if kind.namespaced else None
    progress = [0]

    def on_event(event: WatchEvent) -> None:
        progress[0] = max(progress[0], event.resource_version)
        if event.resource != resource:
            return
        if namespace and (event.object.get("metadata") or {}).get("namespace") != namespace:
            return
        queue.put(event)

    # Selectors are parsed before subscribing, so a bad one is a plain 400.
    _Filter(options)
    unsubscribe = registry.subscribe(on_event)
    response: web.StreamResponse | None = None
    try:
        initial: list[JSONDict] = []
        backlog: list[WatchEvent] = []
        gone: Gone | None = None
        matcher = _Filter(options)
        if options.send_initial_events or options.resource_version in ("", "0"):
            listed = registry.list(
                kind,
                namespace,
                version=options.version,
                label_selector=options.label_selector,
                field_selector=options.field_selector,
            )
            start = int(listed["metadata"]["resourceVersion"])
            initial = listed["items"]
            matcher.known = {_key(o) for o in initial}
        else:
            try:
                start = int(options.resource_version)
            except ValueError:
                raise BadRequest(f'invalid resource version "{options.resource_version}"') from None
            newest = registry.store.resource_version
            if start > newest:
                raise TooLargeResourceVersion(
                    f"Too large resource version: {start}, current: {newest}",
                    details={
                        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                        "retryAfterSeconds": 1,
                    },
                )
            try:
                backlog = registry.watch_events_since(kind, namespace, start, version=options.version)
                _seed(registry, options, namespace, matcher, backlog, start)
            except Gone as err:
                gone = err
        progress[0] = max(progress[0], start)
        response = web.StreamResponse(
            headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"}
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        stream = _Stream(request, response, options, now, tracker)
        if gone is not None:
            await stream.send({"type": "ERROR", "object": gone.to_status()})
            return response
        await _send_batched(stream, [stream.encode_object("ADDED", obj) for obj in initial])
        if options.send_initial_events:
            await stream.send(_bookmark(options, start, initial_end=True))
        last = start
        lines: list[bytes] = []
        for event in backlog:
            last = max(last, event.resource_version)
            event_type = matcher.translate(event.type, event.object)
            if event_type is not None:
                lines.append(stream.encode_object(event_type, event.object))
        await _send_batched(stream, lines)
        await _follow(request, registry, options, stopping, queue, progress, stream, matcher, last)
        return response
    except ConnectionError:  # the client went away mid-stream
        return response if response is not None else web.Response(status=200)
    finally:
        unsubscribe()


_BATCH_BYTES = 256 * 1024


async def _send_batched(stream: _Stream, lines: list[bytes]) -> None:
    """Write encoded lines in writes of about ``_BATCH_BYTES`` (not one write per event)."""
    batch: list[bytes] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line)
        if size >= _BATCH_BYTES:
            await stream.write(b"".join(batch))
            batch, size = [], 0
    if batch:
        await stream.write(b"".join(batch))


async def _follow(
    request: web.Request,
    registry: Registry,
    options: WatchOptions,
    stopping: asyncio.Event,
    queue: Inbox,
    progress: list[int],
    stream: _Stream,
    matcher: _Filter,
    last: int,
) -> None:
    """Deliver live events until timeout, disconnect or shutdown.

    Waits (with a timeout, so bookmarks, deadlines and disconnects are noticed) only when the queue
    is empty; otherwise drains everything queued and writes it in one ``write``: one chunk, one TLS
    record and one ``send`` per batch instead of per event.
    """
    loop = asyncio.get_running_loop()
    deadline = None if options.timeout_seconds is None else loop.time() + options.timeout_seconds
    next_bookmark = loop.time() + options.bookmark_interval
    while not stopping.is_set():
        if queue.overflowed:
            stream.tracker.note_slow(options.kind.group, options.kind.plural)
            log.info(
                "closing a watch of %s from %s: more than %d events behind; it will resume or relist",
                options.kind.resource_key,
                request.remote,
                queue.limit,
            )
            return
        now = loop.time()
        if deadline is not None and now >= deadline:
            return
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        if options.allow_bookmarks and now >= next_bookmark:
            next_bookmark = now + options.bookmark_interval
            if queue.empty():
                await stream.send(_bookmark(options, max(last, progress[0])))
        if queue.empty():
            wait = _TICK if deadline is None else max(0.0, min(_TICK, deadline - now))
            try:
                async with asyncio.timeout(wait):
                    await queue.wait()
            except TimeoutError:
                continue
            if queue.overflowed:
                continue
        events = queue.drain()
        lines: list[bytes] = []
        for event in events:
            if event.resource_version <= last:
                continue
            last = event.resource_version
            line = stream.line_for(registry, matcher, event)
            if line is not None:
                lines.append(line)
        if lines:
            await stream.write(b"".join(lines))


class _SharedLines:
    """Encoded watch lines shared by every watcher of the same event, version and format.

    The store hands one :class:`WatchEvent` object to all subscribers, so a watch that encodes an
    event leaves the bytes here for the others (keyed by the event object's identity; the cache
    holds the event, so the identity cannot be reused while the entry lives). Bounded: the oldest
    entries go first, which only costs a re-encode for a watcher that fell far behind.
    """

    LIMIT = 4096

    def __init__(self) -> None:
        self._entries: dict[tuple[int, str, str, bool], tuple[WatchEvent, bytes]] = {}

    def get(self, key: tuple[int, str, str, bool], event: WatchEvent) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None or entry[0] is not event:
            return None
        return entry[1]

    def put(self, key: tuple[int, str, str, bool], event: WatchEvent, line: bytes) -> None:
        entries = self._entries
        if len(entries) >= self.LIMIT:
            del entries[next(iter(entries))]
        entries[key] = (event, line)


_shared = _SharedLines()


class _Stream:
    def __init__(
        self, request: web.Request, response: web.StreamResponse, options: WatchOptions, now: Any, tracker: WatchTracker
    ) -> None:
        self._request = request
        self._response = response
        self._options = options
        self._now = now
        self.tracker = tracker

    async def write(self, data: bytes) -> None:
        """Write, aborting the connection if it does not drain within the write timeout."""
        try:
            async with asyncio.timeout(self.tracker.limits.write_timeout):
                await self._response.write(data)
        except TimeoutError:
            self.tracker.note_stalled(self._options.kind.group, self._options.kind.plural)
            log.info(
                "aborting a watch of %s from %s: a write blocked for %.0fs (the client stopped reading)",
                self._options.kind.resource_key,
                self._request.remote,
                self.tracker.limits.write_timeout,
            )
            transport = self._request.transport
            if transport is not None:
                transport.abort()
            raise ConnectionResetError("watch write timed out") from None

    async def send(self, event: JSONDict) -> None:
        await self.write(orjson.dumps(event) + b"\n")

    def line_for(self, registry: Registry, matcher: _Filter, event: WatchEvent) -> bytes | None:
        """The encoded line for a live event (``None`` if the selector filters it out).

        Plain JSON and PartialObjectMetadata lines with selector-free translation are shared across
        watchers (see :class:`_SharedLines`); Tables carry ages, so they are built per watcher.
        """
        options = self._options
        if options.table_version is None and matcher.plain:
            key = (id(event), options.kind.served_key, options.version, options.partial_metadata)
            line = _shared.get(key, event)
            if line is None:
                converted = registry.convert_event(options.kind, event, options.version)
                line = self._encode_event(converted.type, converted)
                _shared.put(key, event, line)
            return line
        converted = registry.convert_event(options.kind, event, options.version)
        labels = converted.labels if matcher.labels_only and converted.key is not None else None
        if labels is not None and converted.key is not None:  # no decode just to read the labels
            event_type = matcher.translate_labels(converted.type, converted.key, labels)
        else:
            event_type = matcher.translate(converted.type, converted.object)
        if event_type is None:
            return None
        return self._encode_event(event_type, converted)

    def _encode_event(self, event_type: str, event: WatchEvent) -> bytes:
        """Plain JSON of an object still in its stored form is spliced from the stored bytes
        (no decode and re-encode per event)."""
        raw = event.raw
        options = self._options
        if raw is not None and not options.partial_metadata and options.table_version is None:
            return b'{"type":"' + event_type.encode() + b'","object":' + raw + b"}\n"
        return self.encode_object(event_type, event.object)

    def encode_object(self, event_type: str, obj: JSONDict) -> bytes:
        options = self._options
        if options.partial_metadata and options.table_version is None:
            obj = partial_metadata(obj)
        elif options.table_version is not None:
            with contextlib.suppress(Exception):
                obj = table(
                    options.kind,
                    options.version,
                    [obj],
                    now=self._now(),
                    list_meta={"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion", "")},
                    include_object=options.include_object,
                    table_version=options.table_version,
                )
        return orjson.dumps({"type": event_type, "object": obj}) + b"\n"

    async def send_object(self, event_type: str, obj: JSONDict) -> None:
        await self.write(self.encode_object(event_type, obj))
