"""``LocalClient``: the :class:`~pykueue.client.protocol.Client` calling the embedded registry in process.

Owned by ``client/``; used by the embedded mode (``pykueue up``) so the controllers and
``cluster/`` skip HTTP and JSON entirely while still going through every registry step (defaulting,
validation, admission hooks). Invariant: it behaves exactly like :class:`~pykueue.client.http.HttpClient`
against the embedded server (same objects, same errors, same watch events) — the contract tests in
``tests/unit/client`` run every case against both.

Objects handed out are deep copies, so a caller mutating a result never corrupts the store or a
watcher's view.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, TypeVar, cast

import orjson

from pykueue.api.meta.errors import BadRequest
from pykueue.api.meta.jsoncopy import json_copy_strict as _copy
from pykueue.api.meta.kind_info import KindInfo
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.http import with_type_meta
from pykueue.client.protocol import PATCH_CONTENT_TYPES, Client, Items, Patch, WatchEvent
from pykueue.registry.resource_registry import Registry
from pykueue.registry.suspend import run_suspendable
from pykueue.store.types import WatchEvent as StoreEvent

__all__ = ["BOOKMARK_INTERVAL", "LocalClient"]

_T = TypeVar("_T")
BOOKMARK_INTERVAL = 1.0
"""Seconds between BOOKMARKs on a selective watch that only sees changes it filters out."""


class LocalClient:
    def __init__(self, registry: Registry, *, field_manager: str = "pykueue") -> None:
        self.registry = registry
        self.field_manager = field_manager
        self.default_namespace = "default"

    def _kind(self, res: GroupVersionResource) -> KindInfo:
        kind: KindInfo = self.registry.kind_for(res.group, res.version, res.plural)
        return kind

    async def _call(self, kind: KindInfo, res: GroupVersionResource, call: Callable[[], _T]) -> _T:
        """A registry call; one that may meet a webhook (admission, or a CRD's conversion) waits for it
        without blocking the event loop, as a request over HTTP does (:mod:`pykueue.registry.suspend`)."""
        if self.registry.may_call_webhooks and self.registry.may_wait(kind, res.version):
            return await run_suspendable(call)
        return call()

    async def close(self) -> None:
        """Nothing to release: the registry belongs to whoever built it."""

    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> dict[str, Any]:
        kind = self._kind(res)
        obj = await self._call(kind, res, lambda: self.registry.get(kind, namespace, name, version=res.version))
        return obj  # fresh: the registry decodes every object it returns from the store's bytes

    async def list(
        self, res: GroupVersionResource, namespace: str = "", *, label_selector: str = "", field_selector: str = ""
    ) -> tuple[Items, str]:
        kind = self._kind(res)
        body = await self._call(
            kind,
            res,
            lambda: self.registry.list(
                kind,
                namespace or None,
                version=res.version,
                label_selector=label_selector or None,
                field_selector=field_selector or None,
            ),
        )
        body = _copy(body)
        items = with_type_meta(list(body.get("items") or []), body, res)
        return items, str((body.get("metadata") or {}).get("resourceVersion") or "")

    async def create(self, res: GroupVersionResource, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        namespace = namespace or (obj.get("metadata") or {}).get("namespace") or ""
        kind = self._kind(res)
        created, _ = await self._call(
            kind,
            res,
            lambda: self.registry.create(
                kind, namespace, _copy(obj), version=res.version, field_manager=self.field_manager, owned=True
            ),
        )
        return created  # fresh (see get)

    async def update(self, res: GroupVersionResource, obj: dict[str, Any], *, subresource: str = "") -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            raise BadRequest("update: the object has no metadata.name")
        kind = self._kind(res)
        updated, _ = await self._call(
            kind,
            res,
            lambda: self.registry.update(
                kind,
                meta.get("namespace") or "",
                meta["name"],
                _copy(obj),
                version=res.version,
                subresource=subresource or None,
                field_manager=self.field_manager,
                owned=True,
            ),
        )
        return updated  # fresh (see get)

    async def patch(
        self,
        res: GroupVersionResource,
        name: str,
        patch: Patch,
        *,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool = False,
    ) -> dict[str, Any]:
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise BadRequest(f"unknown patch type {patch_type!r}: use one of {sorted(PATCH_CONTENT_TYPES)}")
        manager = field_manager or (self.field_manager if patch_type == "apply" else None)
        kind = self._kind(res)
        patched, _ = await self._call(
            kind,
            res,
            lambda: self.registry.patch(
                kind,
                namespace,
                name,
                orjson.dumps(patch),
                content_type,
                version=res.version,
                subresource=subresource or None,
                field_manager=manager,
                force=force,
            ),
        )
        return patched  # fresh (see get)

    async def delete(
        self, res: GroupVersionResource, name: str, namespace: str = "", *, propagation: str = "Background"
    ) -> None:
        kind = self._kind(res)
        await self._call(
            kind, res, lambda: self.registry.delete(kind, namespace, name, version=res.version, propagation=propagation)
        )

    async def watch(
        self,
        res: GroupVersionResource,
        namespace: str = "",
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        allow_bookmarks: bool = False,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        kind = self._kind(res)
        resource = kind.resource_key
        scope = namespace if kind.namespaced else ""
        loop = asyncio.get_running_loop()
        owner = threading.get_ident()
        pending: asyncio.Queue[StoreEvent] = asyncio.Queue()

        def on_event(event: StoreEvent) -> None:
            if event.resource != resource:
                return
            if scope and (event.object.get("metadata") or {}).get("namespace") != scope:
                return
            if threading.get_ident() == owner:
                pending.put_nowait(event)
            else:
                loop.call_soon_threadsafe(pending.put_nowait, event)

        # Subscribe before reading the starting point, so nothing written in between is missed;
        # the overlap is dropped by resourceVersion below.
        unsubscribe = self.registry.subscribe(on_event)
        try:
            backlog: list[tuple[str, dict[str, Any], int]]
            if resource_version in ("", "0"):
                body = self.registry.list(kind, scope, version=res.version)
                start = int((body.get("metadata") or {}).get("resourceVersion") or 0)
                backlog = [("ADDED", item, start) for item in body.get("items") or []]
            else:
                try:
                    start = int(resource_version)
                except ValueError:
                    raise BadRequest(f"invalid resourceVersion {resource_version!r}") from None
                # (cast: Registry.list shadows the builtin in the registry's own annotations)
                since: Iterable[StoreEvent] = cast(
                    Any, self.registry.watch_events_since(kind, scope, start, version=res.version)
                )
                backlog = [(e.type, e.object, e.resource_version) for e in since]
            matcher = _Matcher(label_selector, field_selector, knows_all=resource_version in ("", "0"))
            if matcher.active and resource_version not in ("", "0"):
                # No await since the backlog was read: this list is the state right after it.
                present = self.registry.list(
                    kind,
                    scope,
                    version=res.version,
                    label_selector=label_selector or None,
                    field_selector=field_selector or None,
                )
                matcher.seed(present.get("items") or [], exclude={_key(obj) for _, obj, _ in backlog})
            last = start
            for event_type, obj, rv in backlog:
                out = matcher.filter(event_type, obj)
                if out is not None:
                    yield out[0], self._typed(kind, res, out[1])
                last = max(last, rv)
            matcher.backlog_done()
            deadline = None if timeout_seconds is None else loop.time() + timeout_seconds
            bookmarked = loop.time()
            while True:
                remaining = None if deadline is None else deadline - loop.time()
                if remaining is not None and remaining <= 0:
                    return
                try:
                    # Drain what is queued without yielding: ``wait_for`` wraps every get in a task,
                    # so one event per loop iteration would let a busy loop fall seconds behind.
                    event = (
                        pending.get_nowait()
                        if not pending.empty()
                        else await asyncio.wait_for(pending.get(), remaining)
                    )
                except TimeoutError:
                    if allow_bookmarks:
                        yield "BOOKMARK", self._bookmark(kind, res, last)
                    return
                if event.resource_version <= last:
                    continue  # already delivered from the backlog
                last = event.resource_version
                event = self.registry.convert_event(kind, event, res.version)
                # The event's object is shared with the other subscribers: ours is a private copy,
                # decoded once from the stored bytes, and the selector reads that same copy.
                out = matcher.filter(event.type, event.fresh_object())
                if out is not None:
                    yield out[0], self._typed(kind, res, out[1], copied=True)
                elif allow_bookmarks and loop.time() - bookmarked >= BOOKMARK_INTERVAL:
                    # Filtered-out changes still move a selective watcher's resume point forward.
                    bookmarked = loop.time()
                    yield "BOOKMARK", self._bookmark(kind, res, last)
        finally:
            unsubscribe()

    @staticmethod
    def _bookmark(kind: KindInfo, res: GroupVersionResource, rv: int) -> dict[str, Any]:
        return {"kind": kind.kind, "apiVersion": res.api_version, "metadata": {"resourceVersion": str(rv)}}

    @staticmethod
    def _typed(
        kind: KindInfo, res: GroupVersionResource, obj: dict[str, Any], *, copied: bool = False
    ) -> dict[str, Any]:
        if not copied:
            obj = _copy(obj)
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", kind.kind)
        return obj


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class _Matcher:
    """Selector filtering for a watch, with Kubernetes' semantics: an object leaving the selection is
    reported DELETED, one entering it ADDED.

    The store's events carry only the new object, so the matcher remembers which keys are in the
    selection. A resumed watch (from a resourceVersion) is seeded from a list taken right after its
    backlog; for a key whose first event is in the backlog the earlier state is unknown, and a
    non-matching change is reported DELETED to be safe (a client that never had it ignores it).
    """

    def __init__(self, label_selector: str, field_selector: str, *, knows_all: bool) -> None:
        from pykueue.store.selectors import parse_field_selector, parse_label_selector

        self._labels = parse_label_selector(label_selector or None)
        self._fields = parse_field_selector(field_selector or None)
        self.active = bool(label_selector or field_selector)
        self._seen: set[tuple[str, str]] = set()
        self._observed: set[tuple[str, str]] = set()
        self._uncertain = not knows_all

    def seed(self, matching: list[dict[str, Any]], *, exclude: set[tuple[str, str]]) -> None:
        for obj in matching:
            key = _key(obj)
            if key not in exclude:
                self._seen.add(key)
                self._observed.add(key)

    def backlog_done(self) -> None:
        """From now on every key in the selection is known: an unseen matching key is entering it."""
        self._uncertain = False

    def filter(self, event_type: str, obj: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if not self.active:
            return event_type, obj
        key = _key(obj)
        first = key not in self._observed
        self._observed.add(key)
        matches = self._labels(obj) and self._fields(obj)
        if event_type == "DELETED":
            was = key in self._seen
            self._seen.discard(key)
            return (event_type, obj) if was or (first and self._uncertain and matches) else None
        if matches:
            entering = key not in self._seen
            self._seen.add(key)
            if entering and not (first and self._uncertain):
                return "ADDED", obj
            return event_type, obj
        if key in self._seen or (first and self._uncertain and event_type == "MODIFIED"):
            self._seen.discard(key)
            return "DELETED", obj
        return None


def _conforms(client: LocalClient) -> Client:
    """Never called: mypy proves here that LocalClient implements the Client protocol."""
    return client
