"""Quota is never bypassed silently: a Warning for labelled objects that nothing queues.

Owns one admission hook (every kind, on create and when an update adds the label) that notices an
object carrying ``kueue.x-k8s.io/queue-name`` whose kind no enabled integration queues — a JobSet
while the jobset integration is off, a Deployment or RayJob (Kueue integrations pykueue does not
implement), any other kind — and, once the object is stored, records a ``Warning`` event
``NotQueued`` on it and logs one line, both saying that it runs without queueing and how to queue it.

Objects with a controller owner are left alone: their owner is what is queued or not (a JobSet's
Jobs, a Job's Pods). Kueue's own kinds and Events never get the warning.

Who calls it: :class:`~pykueue.controllers.manager.ControllerManager` installs :meth:`hook` with
Kueue's other webhooks and runs :meth:`run` wherever those webhooks run.
Invariant: the hook never changes nor refuses a write; the event is written after the object is
stored (so it carries the object's uid and ``kubectl describe`` shows it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from pykueue.api.meta.errors import ApiError, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.client import Client, GroupVersionResource
from pykueue.controllers.events import EventRecorder
from pykueue.controllers.frameworks import IMPLEMENTED, framework_for_kind
from pykueue.controllers.jobs.framework import QUEUE_LABEL
from pykueue.registry.admission import AdmissionHook, AdmissionRequest

__all__ = ["REASON", "UnqueuedWarner", "unqueued_message"]

log = logging.getLogger(__name__)
REASON = "NotQueued"
_SKIPPED_GROUPS = frozenset({"kueue.x-k8s.io", "events.k8s.io"})
_LOOKUP_DELAYS = (0.0, 0.05, 0.2, 1.0)
"""Seconds to wait before each look-up of the admitted object (its write commits at the end of the
event-loop tick that admitted it; a write refused after admission never appears)."""
_QUEUEABLE = "run the work as a batch/v1 Job, a JobSet or a pod group"


def unqueued_message(kind: KindInfo, enabled: frozenset[str]) -> str | None:
    """Why an object of ``kind`` with a queue-name label is not queued (None: it is queued)."""
    framework = framework_for_kind(kind.group, kind.kind)
    if framework in enabled:
        return None
    head = f"the {QUEUE_LABEL} label is ignored: "
    tail = "so this object is not queued and runs outside every quota"
    if framework in IMPLEMENTED:
        return (
            f'{head}the "{framework}" integration is not enabled, {tail}; to queue it, add "{framework}" '
            "to integrations.frameworks in the Configuration given to `pykueue up --config`"
        )
    if framework is not None:
        return (
            f'{head}Kueue\'s "{framework}" integration is not implemented by pykueue, {tail}; to queue it, {_QUEUEABLE}'
        )
    return f"{head}no Kueue integration queues {kind.kind} objects, {tail}; to queue it, {_QUEUEABLE}"


def _needs_warning(request: AdmissionRequest) -> bool:
    kind = request.kind
    if kind.group in _SKIPPED_GROUPS or kind.kind == "Event" or request.dry_run:
        return False
    obj = request.object
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(meta, dict):
        return False
    labels = meta.get("labels")
    if not isinstance(labels, dict) or QUEUE_LABEL not in labels:
        return False
    refs = meta.get("ownerReferences")
    if isinstance(refs, list) and any(isinstance(r, dict) and r.get("controller") for r in refs):
        return False
    if request.operation == "UPDATE":
        old_meta = (request.old_object or {}).get("metadata") or {}
        return QUEUE_LABEL not in (old_meta.get("labels") or {})
    return True


class UnqueuedWarner:
    def __init__(self, client: Client, recorder: EventRecorder, enabled: tuple[str, ...]) -> None:
        self._client = client
        self._recorder = recorder
        self._enabled = frozenset(enabled)
        self._pending: asyncio.Queue[tuple[GroupVersionResource, str, str, str]] = asyncio.Queue(maxsize=10_000)

    def hook(self) -> AdmissionHook:
        return AdmissionHook(
            name="pykueue-unqueued-warning", operations=frozenset({"CREATE", "UPDATE"}), observe=self._check
        )

    def _check(self, request: AdmissionRequest) -> None:
        if not _needs_warning(request):
            return
        message = unqueued_message(request.kind, self._enabled)
        if message is None:
            return
        kind = request.kind
        where = f"{request.namespace}/{request.name}" if request.namespace else request.name
        log.warning("%s %s: %s", kind.kind, where, message)
        if request.name:
            res = GroupVersionResource(kind.group, kind.storage_version, kind.plural)
            with contextlib.suppress(asyncio.QueueFull):  # events are best effort; the log line was written
                self._pending.put_nowait((res, request.namespace, request.name, message))

    async def run(self) -> None:
        """Record each pending warning once its object is stored (forever; cancel to stop)."""
        while True:
            res, namespace, name, message = await self._pending.get()
            obj = await self._stored(res, namespace, name)
            if obj is not None:
                self._recorder.record(obj, "Warning", REASON, message)

    async def _stored(self, res: GroupVersionResource, namespace: str, name: str) -> JSONDict | None:
        """The object once its write committed; None if the write failed after admission."""
        for delay in _LOOKUP_DELAYS:
            await asyncio.sleep(delay)
            try:
                return await self._client.get(res, name, namespace)
            except NotFound:
                continue
            except ApiError:
                return None
        return None
