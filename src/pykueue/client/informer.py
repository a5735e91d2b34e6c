"""``Informer``: a local, always-fresh cache of one resource, kept by list + watch.

Owned by ``client/``; controllers and ``cluster/`` read objects from informers (never a request)
and react to changes through handlers, which usually just add a key to a
:class:`~pykueue.client.workqueue.WorkQueue`. Semantics follow client-go's reflector:

- :meth:`Informer.start` lists, fills the cache, calls handlers with ADDED, then watches from the
  list's resourceVersion, resuming from the last version seen (bookmarks included);
- on ``Gone`` (410) it lists again and turns the difference into synthetic events, so no change is
  ever lost: a missed delete becomes DELETED, a missed update MODIFIED;
- on a dropped connection (an API-server restart, a half-open connection noticed by the client's
  keepalive or read timeout) it waits and watches again from the last resourceVersion; waits grow
  from 0.1 s to 10 s with full jitter (a random wait up to the bound), so many clients of a restarted
  server do not come back in lock step. Lists retried after a failure wait the same way.

Invariant: the cache only moves forward; objects in it are shared, and callers must not mutate them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Hashable
from typing import Any

from pykueue.api.meta.errors import Gone
from pykueue.client.group_version_resource import GroupVersionResource, key_of
from pykueue.client.protocol import Client, Items

__all__ = ["Handler", "Informer"]

log = logging.getLogger(__name__)

Handler = Callable[[str, dict[str, Any], dict[str, Any] | None], None]
"""(event type, new object (last state for DELETED), old object or None)."""
IndexFunc = Callable[[dict[str, Any]], list[Hashable]]

_WATCH_TIMEOUT = 300
"""Seconds per watch request before a clean reconnect (kube's reflector uses 5-10 minutes)."""

_MAX_BACKOFF = 10.0


def full_jitter(bound: float) -> float:
    """A wait drawn uniformly from [0, bound] ("full jitter")."""
    return random.uniform(0.0, bound)


class Informer:
    def __init__(
        self, client: Client, res: GroupVersionResource, *, namespace: str = "", label_selector: str = ""
    ) -> None:
        self.client = client
        self.res = res
        self.namespace = namespace
        self.label_selector = label_selector
        self._cache: dict[str, dict[str, Any]] = {}
        self._handlers: list[Handler] = []
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[Hashable, set[str]]] = {}
        self._rv = ""
        self._task: asyncio.Task[None] | None = None
        self._synced = asyncio.Event()

    # -- configuration ----------------------------------------------------------------------------

    def add_handler(self, handler: Handler) -> None:
        """Handlers added after :meth:`start` also see the current cache as ADDED events."""
        self._handlers.append(handler)
        if self._synced.is_set():
            for obj in list(self._cache.values()):
                self._call(handler, "ADDED", obj, None)

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Maintain a secondary index (e.g. pods by owner uid) queried with :meth:`by_index`."""
        self._indexers[name] = func
        index: dict[Hashable, set[str]] = {}
        for key, obj in self._cache.items():
            for value in func(obj):
                index.setdefault(value, set()).add(key)
        self._indices[name] = index

    # -- reading ------------------------------------------------------------------------------------

    def get(self, name: str, namespace: str = "") -> dict[str, Any] | None:
        return self._cache.get(f"{namespace}/{name}" if namespace else name)

    def get_by_key(self, key: str) -> dict[str, Any] | None:
        return self._cache.get(key)

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]:
        if namespace is None:
            return list(self._cache.values())
        return [o for o in self._cache.values() if (o.get("metadata") or {}).get("namespace", "") == namespace]

    def by_index(self, name: str, value: Hashable) -> Items:
        keys = self._indices[name].get(value, ())
        return [self._cache[k] for k in keys if k in self._cache]

    @property
    def synced(self) -> bool:
        return self._synced.is_set()

    @property
    def resource_version(self) -> str:
        """The last resourceVersion seen (list, event or bookmark): where a watch resumes."""
        return self._rv

    # -- lifecycle ------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._task is not None:
            await self._synced.wait()
            return
        await self._relist()
        self._synced.set()
        self._task = asyncio.create_task(self._run(), name=f"informer-{self.res}")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- the reflector loop -----------------------------------------------------------------------

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            try:
                async for kind, obj in self.client.watch(
                    self.res,
                    self.namespace,
                    resource_version=self._rv,
                    label_selector=self.label_selector,
                    allow_bookmarks=True,
                    timeout_seconds=_WATCH_TIMEOUT,
                ):
                    self._apply(kind, obj)
                    backoff = 0.1
            except asyncio.CancelledError:
                raise
            except Gone:
                log.info("informer %s: resourceVersion %s expired, listing again", self.res, self._rv)
                await self._relist_with_retry()
                continue
            except Exception as exc:  # API errors, dropped connections (aiohttp.ClientError, OSError)
                log.warning("informer %s: watch failed (%r); retrying within %.1fs", self.res, exc, backoff)
            else:
                continue  # the server ended the watch (timeout): resume at once
            await asyncio.sleep(full_jitter(backoff))
            backoff = min(backoff * 2, _MAX_BACKOFF)

    async def _relist_with_retry(self) -> None:
        backoff = 0.1
        while True:
            try:
                await self._relist()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("informer %s: list failed (%r); retrying within %.1fs", self.res, exc, backoff)
                await asyncio.sleep(full_jitter(backoff))
                backoff = min(backoff * 2, _MAX_BACKOFF)

    async def _relist(self) -> None:
        items, rv = await self.client.list(self.res, self.namespace, label_selector=self.label_selector)
        fresh = {key_of(obj): obj for obj in items}
        for key, old in list(self._cache.items()):
            if key not in fresh:
                self._store_delete(key)
                self._dispatch("DELETED", old, None)
        for key, obj in fresh.items():
            old_obj = self._cache.get(key)
            if old_obj is None:
                self._store_put(key, obj)
                self._dispatch("ADDED", obj, None)
            elif _rv_of(old_obj) != _rv_of(obj):
                self._store_put(key, obj)
                self._dispatch("MODIFIED", obj, old_obj)
        self._rv = rv

    def _apply(self, kind: str, obj: dict[str, Any]) -> None:
        rv = _rv_of(obj)
        if kind == "BOOKMARK":
            if rv:
                self._rv = rv
            return
        key = key_of(obj)
        old = self._cache.get(key)
        if kind == "DELETED":
            if old is not None:  # a DELETED for an object never seen (outside a selection) is no news
                self._store_delete(key)
                self._dispatch("DELETED", obj, None)
        elif kind in ("ADDED", "MODIFIED"):
            self._store_put(key, obj)
            self._dispatch("MODIFIED" if old is not None else "ADDED", obj, old)
        if rv:
            self._rv = rv

    # -- cache + indices ------------------------------------------------------------------------------

    def _store_put(self, key: str, obj: dict[str, Any]) -> None:
        old = self._cache.get(key)
        self._cache[key] = obj
        for name, func in self._indexers.items():
            index = self._indices[name]
            if old is not None:
                for value in func(old):
                    index.get(value, set()).discard(key)
            for value in func(obj):
                index.setdefault(value, set()).add(key)

    def _store_delete(self, key: str) -> None:
        old = self._cache.pop(key, None)
        if old is None:
            return
        for name, func in self._indexers.items():
            index = self._indices[name]
            for value in func(old):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def _dispatch(self, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        for handler in self._handlers:
            self._call(handler, kind, obj, old)

    def _call(self, handler: Handler, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        try:
            handler(kind, obj, old)
        except Exception:
            log.exception("informer %s: handler failed on %s %s", self.res, kind, key_of(obj))


def _rv_of(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")
