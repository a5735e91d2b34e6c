"""The queue manager: per-ClusterQueue heaps of pending workloads, inadmissible parking, backoff.

Owns where every pending workload waits (spec §3.1–3.2): the active heap of its ClusterQueue
(ordered by [sticky preemptor], [AFS LocalQueue usage], priority desc, queue-order timestamp,
UID), the inadmissible set (failed and waiting for a requeue trigger), or the parked set
(``requeueAt`` in the future / ``Requeued=False``). The engine feeds it upserts and requeue
triggers; the cycle pops heads and hands failures back with ``requeue``.

Heaps use ``heapq`` with lazy deletion: a heap item is live only while ``members[key] is item``,
so an update is O(log n) and a removal O(1).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any

from .clusterqueue import BEST_EFFORT_FIFO
from .workload import WorkloadInfo, WorkloadKey

__all__ = ["ClusterQueueQueue", "LocalQueue", "QueueManager"]

HeapItem = tuple[int, float, str, int, WorkloadKey]


class LocalQueue:
    __slots__ = ("afs_consumed", "afs_last_update", "afs_penalty", "cq_name", "name", "namespace",
                 "pending", "stop_policy", "weight")

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace = namespace
        self.name = name
        self.cq_name = ""
        self.stop_policy = "None"
        self.weight = 1.0
        self.pending = 0
        self.afs_consumed: dict[str, float] = {}
        self.afs_penalty: dict[str, float] = {}
        self.afs_last_update: float | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


class ClusterQueueQueue:
    """The waiting room of one ClusterQueue."""

    __slots__ = ("by_hash", "failed", "heap", "inadmissible", "members", "name", "parked", "seq", "sticky",
                 "strategy")

    def __init__(self, name: str) -> None:
        self.name = name
        self.strategy = BEST_EFFORT_FIFO
        self.heap: list[tuple[HeapItem, WorkloadInfo]] = []
        self.members: dict[WorkloadKey, tuple[HeapItem, WorkloadInfo]] = {}
        self.inadmissible: dict[WorkloadKey, WorkloadInfo] = {}
        self.parked: dict[WorkloadKey, WorkloadInfo] = {}
        self.sticky: WorkloadKey | None = None
        self.seq = 0
        self.by_hash: dict[int, set[WorkloadKey]] = {}
        """Heap members by scheduling-equivalence hash (SchedulingEquivalenceHashing)."""
        self.failed: dict[int, str] = {}
        """Hashes that recently failed (NoFit / no candidates) → the QuotaReserved reason."""

    def __len__(self) -> int:
        return len(self.members) + len(self.inadmissible) + len(self.parked)

    def push(self, wl: WorkloadInfo) -> None:
        self.seq += 1
        entry = ((-wl.priority, wl.timestamp, wl.uid, self.seq, wl.key), wl)
        self.members[wl.key] = entry
        bucket = self.by_hash.get(wl.shape_hash)
        if bucket is None:
            self.by_hash[wl.shape_hash] = {wl.key}
        else:
            bucket.add(wl.key)
        heapq.heappush(self.heap, entry)
        if len(self.heap) > 2 * len(self.members) + 64:
            self.heap = [e for e in self.heap if self.members.get(e[0][4]) is e]
            heapq.heapify(self.heap)

    def _unindex(self, wl: WorkloadInfo) -> None:
        bucket = self.by_hash.get(wl.shape_hash)
        if bucket is not None:
            bucket.discard(wl.key)
            if not bucket:
                del self.by_hash[wl.shape_hash]

    def bulk_move(self, shape_hash: int, reason: str) -> list[WorkloadInfo]:
        """An equivalent workload failed: park every heap member of that shape as inadmissible
        and divert new arrivals of that shape too, until the next inadmissible requeue."""
        self.failed[shape_hash] = reason
        moved: list[WorkloadInfo] = []
        for key in self.by_hash.pop(shape_hash, ()):
            entry = self.members.pop(key, None)
            if entry is not None:
                self.inadmissible[key] = entry[1]
                moved.append(entry[1])
        return moved

    def discard(self, key: WorkloadKey) -> WorkloadInfo | None:
        entry = self.members.pop(key, None)
        if entry is not None:
            self._unindex(entry[1])
            return entry[1]
        wl = self.inadmissible.pop(key, None)
        if wl is not None:
            return wl
        return self.parked.pop(key, None)

    def contains(self, key: WorkloadKey) -> bool:
        return key in self.members or key in self.inadmissible or key in self.parked

    def has_active(self) -> bool:
        return bool(self.members)

    def pop(self, afs_usage: Callable[[WorkloadInfo], float] | None = None) -> WorkloadInfo | None:
        """Remove and return the head, or None."""
        sticky = self.sticky
        if sticky is not None and sticky in self.members:
            wl = self.members.pop(sticky)[1]
            self._unindex(wl)
            return wl
        if afs_usage is not None:
            if not self.members:
                return None
            best = min(self.members.values(), key=lambda e: (afs_usage(e[1]), e[0]))
            del self.members[best[1].key]
            self._unindex(best[1])
            return best[1]
        heap = self.heap
        members = self.members
        while heap:
            entry = heapq.heappop(heap)
            key = entry[0][4]
            if members.get(key) is entry:
                del members[key]
                self._unindex(entry[1])
                return entry[1]
        return None

    def all_pending(self) -> Iterable[WorkloadInfo]:
        for _, wl in self.members.values():
            yield wl
        yield from self.inadmissible.values()
        yield from self.parked.values()


class QueueManager:
    """All ClusterQueue queues plus the LocalQueue → ClusterQueue routing."""

    def __init__(self) -> None:
        self.cqs: dict[str, ClusterQueueQueue] = {}
        self.local_queues: dict[tuple[str, str], LocalQueue] = {}
        self.location: dict[WorkloadKey, str] = {}
        self.by_lq: dict[tuple[str, str], dict[WorkloadKey, WorkloadInfo]] = {}
        self.timers: list[tuple[float, WorkloadKey]] = []
        self.bypassed: dict[WorkloadKey, tuple[WorkloadInfo, str]] = {}
        """New arrivals diverted to inadmissible by a failed equivalent (reported once)."""

    # -- routing -----------------------------------------------------------------------------
    def target_cq(self, wl: WorkloadInfo) -> str | None:
        lq = self.local_queues.get(wl.lq_key)
        if lq is None or lq.stop_policy != "None" or lq.cq_name not in self.cqs:
            return None
        return lq.cq_name

    def track(self, wl: WorkloadInfo) -> None:
        """Remember a pending workload by its LocalQueue, queued or not."""
        self.by_lq.setdefault(wl.lq_key, {})[wl.key] = wl

    def untrack(self, wl: WorkloadInfo) -> None:
        bucket = self.by_lq.get(wl.lq_key)
        if bucket is not None:
            bucket.pop(wl.key, None)
            if not bucket:
                del self.by_lq[wl.lq_key]

    def add(self, wl: WorkloadInfo, now: float, immediate: bool = True) -> bool:
        """Queue a pending workload in its CQ (heap, inadmissible or parked). False if no CQ."""
        self.remove(wl.key)
        cq_name = self.target_cq(wl)
        if cq_name is None:
            return False
        q = self.cqs[cq_name]
        if wl.requeued_false or (wl.requeue_at is not None and wl.requeue_at > now):
            q.parked[wl.key] = wl
            if wl.requeue_at is not None and not wl.requeued_false:
                heapq.heappush(self.timers, (wl.requeue_at, wl.key))
        elif immediate and wl.shape_hash in q.failed and q.strategy == BEST_EFFORT_FIFO:
            q.inadmissible[wl.key] = wl
            self.bypassed[wl.key] = (wl, q.failed[wl.shape_hash])
        elif immediate:
            q.push(wl)
        else:
            q.inadmissible[wl.key] = wl
        self.location[wl.key] = cq_name
        self._count(wl, 1)
        return True

    def remove(self, key: WorkloadKey) -> WorkloadInfo | None:
        cq_name = self.location.pop(key, None)
        if cq_name is None:
            return None
        q = self.cqs.get(cq_name)
        wl = q.discard(key) if q is not None else None
        if q is not None and q.sticky == key:
            q.sticky = None
        if wl is not None:
            self._count(wl, -1)
        return wl

    def _count(self, wl: WorkloadInfo, delta: int) -> None:
        lq = self.local_queues.get(wl.lq_key)
        if lq is not None:
            lq.pending += delta

    def requeue(self, wl: WorkloadInfo, immediate: bool) -> None:
        """Hand a popped head back: to the heap (``immediate``) or to the inadmissible set."""
        cq_name = self.location.get(wl.key)
        if cq_name is None:
            return
        q = self.cqs[cq_name]
        if immediate:
            q.push(wl)
        else:
            q.inadmissible[wl.key] = wl

    # -- triggers ----------------------------------------------------------------------------
    def queue_inadmissible(self, cq_names: Iterable[str], ns_ok: Callable[[str, WorkloadInfo], bool]) -> None:
        """QueueInadmissibleWorkloads: move inadmissible workloads back to their heaps."""
        for name in cq_names:
            q = self.cqs.get(name)
            if q is None:
                continue
            q.failed.clear()
            if not q.inadmissible:
                continue
            keep: dict[WorkloadKey, WorkloadInfo] = {}
            for key, wl in q.inadmissible.items():
                if ns_ok(name, wl):
                    q.push(wl)
                else:
                    keep[key] = wl
            q.inadmissible = keep

    def wake(self, now: float) -> set[str]:
        """Move parked workloads whose backoff expired to their heaps; returns touched CQs."""
        touched: set[str] = set()
        timers = self.timers
        while timers and timers[0][0] <= now:
            _, key = heapq.heappop(timers)
            cq_name = self.location.get(key)
            if cq_name is None:
                continue
            q = self.cqs[cq_name]
            wl = q.parked.get(key)
            if wl is None or wl.requeued_false or (wl.requeue_at is not None and wl.requeue_at > now):
                continue
            del q.parked[key]
            q.push(wl)
            touched.add(cq_name)
        return touched

    def pending_of_lq(self, key: tuple[str, str]) -> list[WorkloadInfo]:
        return list(self.by_lq.get(key, {}).values())

    def describe(self) -> dict[str, Any]:  # pragma: no cover - debugging aid
        return {name: len(q) for name, q in self.cqs.items()}
