"""Kubernetes Events (core/v1) for what the controllers decide: QuotaReserved, Admitted, Pending, ...

Owns: turning ``record(obj, type, reason, message)`` into Event objects, written in the background
so a status write never waits for an event. Repeats of the same (object, reason, message) are
aggregated like client-go's recorder: the existing Event's ``count`` and ``lastTimestamp`` are bumped
instead of creating a new object.

Who calls it: every controller in ``controllers/``; the manager starts and stops the writer.
Invariant: recording never raises and never blocks; when the backlog exceeds ``max_backlog`` the
oldest unwritten events are dropped (events are best effort in Kubernetes too).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import OrderedDict

from pykueue.api.meta.clock import Clock, format_time
from pykueue.api.meta.errors import ApiError, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client
from pykueue.client.group_version_resource import EVENTS

__all__ = ["EventRecorder"]

log = logging.getLogger(__name__)


class EventRecorder:
    def __init__(
        self, client: Client, clock: Clock, *, component: str = "kueue-admission", max_backlog: int = 10_000
    ) -> None:
        self._client = client
        self._clock = clock
        self._component = component
        self._queue: OrderedDict[str, tuple[JSONDict, str, str, str]] = OrderedDict()
        self._counts: dict[str, tuple[str, str, int]] = {}  # key -> (namespace, name, count)
        self._max = max_backlog
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def record(self, obj: JSONDict, etype: str, reason: str, message: str) -> None:
        meta = obj.get("metadata") or {}
        ref = {
            "apiVersion": obj.get("apiVersion", ""),
            "kind": obj.get("kind", ""),
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        key = "\x00".join((ref["namespace"], ref["kind"], ref["name"], ref["uid"], etype, reason, message))
        self._queue[key] = (ref, etype, reason, message)
        self._queue.move_to_end(key)
        while len(self._queue) > self._max:
            self._queue.popitem(last=False)
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="event-recorder")

    async def stop(self) -> None:
        if self._task is not None:
            await self.flush()
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def flush(self) -> None:
        while self._queue:
            key, item = self._queue.popitem(last=False)
            await self._write(key, *item)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.flush()

    async def _write(self, key: str, ref: JSONDict, etype: str, reason: str, message: str) -> None:
        now = format_time(self._clock.now())
        namespace = ref["namespace"] or "default"
        try:
            known = self._counts.get(key)
            if known is not None:
                ns, name, count = known
                try:
                    await self._client.patch(EVENTS, name, {"count": count + 1, "lastTimestamp": now}, namespace=ns)
                    self._counts[key] = (ns, name, count + 1)
                    return
                except NotFound:
                    pass
            digest = hashlib.sha1(key.encode()).hexdigest()[:10]
            name = f"{ref['name']}.{digest}"
            event = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": ref,
                "reason": reason,
                "message": message,
                "type": etype,
                "source": {"component": self._component},
                "reportingComponent": self._component,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
            }
            try:
                await self._client.create(EVENTS, event, namespace)
                self._counts[key] = (namespace, name, 1)
            except ApiError as exc:
                if exc.code == 409:  # the same event from an earlier run: aggregate onto it
                    await self._client.patch(EVENTS, name, {"count": 2, "lastTimestamp": now}, namespace=namespace)
                    self._counts[key] = (namespace, name, 2)
                else:
                    raise
            if len(self._counts) > 50_000:
                self._counts.clear()
        except ApiError as exc:
            log.debug("event %s/%s not written: %s", reason, ref.get("name"), exc)
        except Exception:  # events are best effort; never take a controller down
            log.exception("writing event %s failed", reason)
