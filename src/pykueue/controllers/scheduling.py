"""The scheduler loop: informer events into the pure ``Scheduler``, its decisions out to the API.

Owns: feeding the engine (namespaces, flavors, cohorts, cluster/local queues, workloads), running
``schedule()`` whenever something changed (Kueue's idle backoff 1 ms → 10 ms, never a busy loop),
and writing each decision as a Workload status change through the status subresource:

- admit   → ``status.admission`` + QuotaReserved=True (+ Admitted=True without admission checks);
            on any write failure the engine is told to ``forget`` the assumed admission;
- preempt → Evicted=True reason Preempted + Preempted=True reason InClusterQueue/…;
- pending → QuotaReserved=False reason/message + ``resourceRequests``, only when it changed, by a
            coalescing background writer (latest decision per workload wins).

Who calls it: ``ControllerManager`` builds one and runs :meth:`SchedulerLoop.run`.
Invariant: a workload the engine admitted is either written as admitted or forgotten — never both
and never neither; the loop sleeps whenever a cycle admitted nothing and nothing changed since.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time

from pykueue.api.meta.clock import Clock, parse_time
from pykueue.api.meta.errors import ApiError, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer
from pykueue.controllers import observe
from pykueue.controllers.conditions import condition_true, has_quota, is_evicted, is_finished
from pykueue.controllers.events import EventRecorder
from pykueue.controllers.resource_names import WORKLOADS
from pykueue.controllers.status import update_status
from pykueue.controllers.workload_status_edits import prepare_eviction, reserve_quota, set_pending
from pykueue.metrics import KueueMetrics
from pykueue.scheduler import Scheduler
from pykueue.scheduler.types import Admit, CycleResult, Pending, Preempt

__all__ = ["SchedulerLoop"]

log = logging.getLogger(__name__)
Key = tuple[str, str]

MIN_BACKOFF = 0.001
MAX_BACKOFF = 0.010
PENDING_REFRESH = 1.0
"""A workload's pending condition is rewritten at most this often (its first one at once)."""
IDLE_WAKE = 1.0
"""Safety net: run a cycle at least this often while idle (time-based parking in the engine)."""


def _meta(obj: JSONDict) -> JSONDict:
    meta: JSONDict = obj.get("metadata") or {}
    return meta


def _rv(obj: JSONDict) -> int | None:
    """The resourceVersion as a number when it is one (etcd's and ours are); None = opaque, no ordering."""
    raw = _meta(obj).get("resourceVersion")
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


class SchedulerLoop:
    def __init__(
        self,
        client: Client,
        scheduler: Scheduler,
        clock: Clock,
        recorder: EventRecorder,
        workloads: Informer,
        *,
        block_admission: bool = False,
        metrics: KueueMetrics,
    ) -> None:
        self._client = client
        self._metrics = metrics
        self.scheduler = scheduler
        self._clock = clock
        self._recorder = recorder
        self._workloads = workloads
        self._dirty = asyncio.Event()
        self._pending_out: dict[Key, Pending] = {}
        self._pending_wake = asyncio.Event()
        self._pending_due: list[tuple[float, Key]] = []
        """Heap of (loop time the write may happen, workload) for the keys in ``_pending_out``."""
        self._pending_written: dict[Key, float] = {}
        """Loop time of the latest pending-status write per workload (throttling, see _pending_writer)."""
        self._tasks: list[asyncio.Task[None]] = []
        self.cycles = 0
        self._block_admission = block_admission
        self._written_rv: dict[Key, int] = {}
        """resourceVersion of our latest write per workload, until the informer catches up with it."""
        self._not_ready: set[Key] = set()
        """Admitted workloads without PodsReady=True (waitForPodsReady.blockAdmission, checked at nomination)."""

    # ------------------------------------------------------------------ events in

    def wake(self) -> None:
        self._dirty.set()

    def on_namespace(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype == "DELETED":
            self.scheduler.delete_namespace(_meta(obj)["name"])
        else:
            self.scheduler.upsert_namespace(obj)
        self.wake()

    def on_flavor(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype == "DELETED":
            self.scheduler.delete_resource_flavor(_meta(obj)["name"])
        else:
            self.scheduler.upsert_resource_flavor(obj)
        self.wake()

    def on_cohort(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype == "DELETED":
            self.scheduler.delete_cohort(_meta(obj)["name"])
        elif old is None or old.get("spec") != obj.get("spec"):
            self.scheduler.upsert_cohort(obj)
        else:
            return  # status-only change (our own writes): nothing for the engine
        self.wake()

    def on_cluster_queue(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype == "DELETED":
            self.scheduler.delete_cluster_queue(_meta(obj)["name"])
        elif (
            old is None
            or old.get("spec") != obj.get("spec")
            or _meta(old).get("deletionTimestamp") != _meta(obj).get("deletionTimestamp")
        ):
            self.scheduler.upsert_cluster_queue(obj)
        else:
            return
        self.wake()

    def on_local_queue(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        meta = _meta(obj)
        if etype == "DELETED":
            self.scheduler.delete_local_queue(meta.get("namespace", ""), meta["name"])
        elif old is None or old.get("spec") != obj.get("spec"):
            self.scheduler.upsert_local_queue(obj)
        else:
            return
        self.wake()

    def on_workload(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        meta = _meta(obj)
        key = (meta.get("namespace", ""), meta["name"])
        ahead = self._written_rv.get(key)
        if ahead is not None and etype != "DELETED":
            rv = _rv(obj)
            if rv is not None and rv < ahead:
                return  # older than what we wrote and already told the engine: a stale echo
            self._written_rv.pop(key, None)
        if etype == "DELETED":
            self._written_rv.pop(key, None)
            self.scheduler.delete_workload(*key)
            self._pending_out.pop(key, None)
            self._not_ready.discard(key)
        else:
            self.scheduler.upsert_workload(obj)
            if self._block_admission:
                if condition_true(obj, "Admitted") and not condition_true(obj, "PodsReady") and not is_finished(obj):
                    self._not_ready.add(key)
                else:
                    self._not_ready.discard(key)
        self.wake()

    # ------------------------------------------------------------------ the loop

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self.run(), name="scheduler-loop"),
            asyncio.create_task(self._pending_writer(), name="scheduler-pending-writer"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def run(self) -> None:
        backoff = MIN_BACKOFF
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(IDLE_WAKE):
                    await self._dirty.wait()
            self._dirty.clear()
            nominations = self.scheduler.stats_nominations
            started = time.perf_counter()
            try:
                result = self.scheduler.schedule()
            except Exception:  # a bug in one cycle must not stop admission forever
                log.exception("scheduling cycle failed")
                await asyncio.sleep(MAX_BACKOFF)
                continue
            took = time.perf_counter() - started
            self.cycles += 1
            if self.scheduler.stats_nominations != nominations:  # an attempt: the cycle had heads
                self._metrics.admission_attempt(bool(result.admitted), took)
            admitted = await self.apply(result)
            if admitted:
                backoff = MIN_BACKOFF
                self._dirty.set()  # heads behind the admitted ones may fit now
            else:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def apply(self, result: CycleResult) -> int:
        """Write a cycle's decisions; returns how many admissions were written."""
        outcomes = await asyncio.gather(
            *(self._admit(a) for a in result.admitted), *(self._preempt(p) for p in result.preempted)
        )
        for pending in result.pending:
            if self._pending_differs(pending):
                self._queue_pending(pending)
        return sum(1 for outcome in outcomes if outcome is True)

    # ------------------------------------------------------------------ decisions out

    def _told(self, written: JSONDict) -> None:
        """Tell the engine about our own write at once, and ignore older informer echoes after it.

        Over HTTP the write's answer and its watch event race: when the informer already delivered
        this write or a later one (another controller's, on top of ours), the engine has newer state
        than ``written`` and keeps it. In process the answer always comes first."""
        meta = _meta(written)
        rv = _rv(written)
        if rv is not None:
            ns, name = meta.get("namespace", ""), meta.get("name", "")
            seen = self._workloads.get(name, ns)
            seen_rv = _rv(seen) if seen is not None else None
            if seen_rv is not None and seen_rv >= rv:
                return
            self._written_rv[(ns, name)] = rv
        self.scheduler.upsert_workload(written)

    async def _admit(self, decision: Admit) -> bool:
        ns, name = decision.namespace, decision.name
        wl = self._workloads.get(name, ns)
        if wl is None:
            self.scheduler.forget(ns, name)
            return False
        if self._block_admission and self._not_ready - {(ns, name)}:
            # blockAdmission: nothing new is admitted while an admitted workload waits for its pods
            self.scheduler.forget(ns, name)
            self._queue_pending(
                Pending(
                    ns,
                    name,
                    "WaitingForPodsReady",
                    "Waiting for all admitted workloads to be in PodsReady condition",
                    (wl.get("status") or {}).get("resourceRequests") or [],
                )
            )
            return False
        self._pending_out.pop((ns, name), None)
        now = self._clock.now()
        generation = _meta(wl).get("generation")
        spec_changed = False

        def edit(status: JSONDict, obj: JSONDict) -> bool:
            nonlocal spec_changed
            if has_quota(obj) or is_finished(obj):
                return False
            if _meta(obj).get("generation") != generation:
                spec_changed = True  # the decision was made on another spec: let the engine see this one
                return False
            reserve_quota(status, decision.admission, decision.admission_checks, now)
            return True

        try:
            # One retry on Conflict, on the stored object: the usual cause is our own pending-status
            # write racing the decision, and the edit re-checks quota, Finished and the spec's generation.
            written = await update_status(self._client, WORKLOADS, wl, edit, retries=1)
        except NotFound:
            self.scheduler.forget(ns, name)
            return False
        except ApiError as exc:
            # No wake-up: the informer's newer version of the object wakes the loop, and an immediate
            # retry on the same stale cache would conflict again.
            log.info("admitting %s/%s failed (%s); forgetting the assumption", ns, name, exc)
            self.scheduler.forget(ns, name)
            return False
        if spec_changed:
            self.scheduler.forget(ns, name)
            return False
        if written is None:
            # the cached object already holds quota or is finished: resync the engine with it
            # (no wake-up: re-admitting it every cycle would be a busy loop)
            self.scheduler.forget(ns, name)
            self.scheduler.upsert_workload(wl)
            return False
        self._told(written)
        waited = max(0, int(now - parse_time(_meta(wl).get("creationTimestamp") or "1970-01-01T00:00:00Z")))
        cq = decision.cluster_queue
        self._recorder.record(
            written,
            "Normal",
            "QuotaReserved",
            f"Quota reserved in ClusterQueue {cq}, wait time since queued was {waited}s",
        )
        if not decision.admission_checks:
            self._recorder.record(
                written, "Normal", "Admitted", f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s"
            )
        observe.quota_reserved(self._metrics, written, cq, now, admitted_too=not decision.admission_checks)
        return True

    async def _preempt(self, decision: Preempt) -> None:
        wl = self._workloads.get(decision.name, decision.namespace)
        if wl is None:
            return
        now = self._clock.now()
        event_reason = ""

        def edit(status: JSONDict, obj: JSONDict) -> bool:
            nonlocal event_reason
            if not has_quota(obj) or is_evicted(obj):
                return False
            event_reason = prepare_eviction(
                status, "Preempted", decision.message, now, preempted_reason=decision.reason
            )
            return True

        try:
            written = await update_status(self._client, WORKLOADS, wl, edit)
        except ApiError as exc:
            log.info("preempting %s/%s failed: %s", decision.namespace, decision.name, exc)
            self.wake()
            return
        if written is not None:
            self._told(written)
            self._recorder.record(written, "Normal", "Preempted", decision.message)
            self._recorder.record(written, "Normal", event_reason, decision.message)
            observe.preempted(
                self._metrics,
                written,
                f"{decision.preemptor_namespace}/{decision.preemptor_name}",
                decision.preemptor_cluster_queue,
                decision.reason,
            )
            observe.evicted(self._metrics, written, "Preempted", "", decision.message)

    def _pending_differs(self, pending: Pending) -> bool:
        wl = self._workloads.get(pending.name, pending.namespace)
        if wl is None or has_quota(wl):
            return False
        status = wl.get("status") or {}
        for cond in status.get("conditions") or []:
            if cond.get("type") == "QuotaReserved":
                return bool(
                    cond.get("status") != "False"
                    or cond.get("reason") != pending.reason
                    or cond.get("message") != pending.message
                    or status.get("resourceRequests") != pending.resource_requests
                )
        return True

    def _queue_pending(self, pending: Pending) -> None:
        """Hand a pending decision to the writer; the latest one per workload wins."""
        key = (pending.namespace, pending.name)
        if key not in self._pending_out:
            ready = self._pending_written.get(key, -PENDING_REFRESH) + PENDING_REFRESH
            heapq.heappush(self._pending_due, (ready, key))
        self._pending_out[key] = pending
        self._pending_wake.set()

    async def _pending_writer(self) -> None:
        """Write pending decisions, at most one per workload per ``PENDING_REFRESH`` seconds (the
        first at once): a deep queue's messages ("N more needed") change with every admission, and
        each write also races the admissions decided meanwhile (a Conflict costs a retry)."""
        loop = asyncio.get_running_loop()
        due_heap = self._pending_due
        while True:
            now = loop.time()
            batch: list[Pending] = []
            while due_heap and due_heap[0][0] <= now and len(batch) < 64:
                _, key = heapq.heappop(due_heap)
                if key not in self._pending_out:
                    continue  # admitted, deleted or written since it was queued
                ready = self._pending_written.get(key, -PENDING_REFRESH) + PENDING_REFRESH
                if ready > now:  # a stale heap entry of a key queued again after a write
                    heapq.heappush(due_heap, (ready, key))
                    continue
                pending = self._pending_out.pop(key)
                self._pending_written[key] = now
                batch.append(pending)
            if batch:
                await asyncio.gather(*(self._write_pending(p) for p in batch))
                continue
            wait = max(0.0, due_heap[0][0] - now) if due_heap else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._pending_wake.wait()
            self._pending_wake.clear()
            if len(self._pending_written) > 2 * len(self._pending_out) + 10_000:
                horizon = loop.time() - PENDING_REFRESH
                self._pending_written = {k: t for k, t in self._pending_written.items() if t > horizon}

    async def _write_pending(self, pending: Pending) -> None:
        wl = self._workloads.get(pending.name, pending.namespace)
        if wl is None:
            return
        now = self._clock.now()

        def edit(status: JSONDict, obj: JSONDict) -> bool:
            if has_quota(obj) or is_finished(obj):
                return False
            return set_pending(status, pending.reason, pending.message, pending.resource_requests, now)

        try:
            written = await update_status(self._client, WORKLOADS, wl, edit)
        except ApiError as exc:
            log.debug("pending status of %s/%s not written: %s", pending.namespace, pending.name, exc)
            return
        if written is not None:
            self._recorder.record(written, "Warning", pending.reason, pending.message)
