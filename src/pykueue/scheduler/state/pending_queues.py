"""The queue manager: per-ClusterQueue heaps of pending workloads, inadmissible parking, backoff.

Owns where every pending workload waits (Kueue's queueing rules): the active heap of its ClusterQueue
(ordered by [sticky preemptor], [AFS LocalQueue usage], priority desc, queue-order timestamp,
UID), the inadmissible set (failed and waiting for a requeue trigger), or the parked set
(``requeueAt`` in the future / ``Requeued=False``). The engine feeds it upserts and requeue
triggers; the cycle pops heads and hands failures back with ``requeue``.

Heaps (and each shape group's sorted run of in-order arrivals) use lazy deletion: an item is live
only while ``members[key] is item``, so an update is O(log n) and a removal O(1). Items hold only
the sort key (ints, floats, strings), never the record: the garbage collector untracks such
tuples, so a large queue costs one tracked object per workload (its record), not two.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .clusterqueue import BEST_EFFORT_FIFO
from .workload_info import WorkloadInfo, WorkloadKey

__all__ = ["ClusterQueueQueue", "LocalQueue", "QueueManager"]

HeapItem = tuple[int, float, str, int, WorkloadKey]


class LocalQueue:
    __slots__ = (
        "afs_consumed",
        "afs_last_update",
        "afs_penalty",
        "cq_name",
        "name",
        "namespace",
        "pending",
        "stop_policy",
        "weight",
    )

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


class _Group:
    """Queued workloads of one scheduling shape (SchedulingEquivalenceHashing), kept in their own
    heap so a failed shape is parked and requeued in O(1) instead of member by member.

    Members are ordered by their heap item; most arrive in that order already (same priority,
    later creation), so items not smaller than the last arrival go to ``run``, a deque that is
    sorted by construction, and only the others (a higher priority, a head handed back) to
    ``heap``. The head is the smaller of the two fronts: the same order as one heap, without
    sifting through ~log2(n) cold items per push and pop."""

    __slots__ = ("entry", "heap", "inadmissible", "members", "reason", "reported_reason", "run", "unreported", "wls")

    def __init__(self) -> None:
        self.heap: list[HeapItem] = []
        self.run: deque[HeapItem] = deque()
        self.members: dict[WorkloadKey, HeapItem] = {}
        self.wls: dict[WorkloadKey, WorkloadInfo] = {}
        self.entry: tuple[HeapItem, int, _Group] | None = None
        self.inadmissible = False
        self.reason = ""
        self.reported_reason = ""
        """The reason the members' statuses were last told (parked with it)."""
        self.unreported: dict[WorkloadKey, WorkloadInfo] = {}
        """Members whose status does not say ``reported_reason`` yet."""

    def add(self, item: HeapItem) -> None:
        run = self.run
        if not run or item >= run[-1]:
            run.append(item)
        else:
            heapq.heappush(self.heap, item)

    def top(self) -> HeapItem | None:
        """The live item with the smallest key (stale items at either front are dropped)."""
        heap, run, members = self.heap, self.run, self.members
        while run and members.get(run[0][4]) is not run[0]:
            run.popleft()
        while heap and members.get(heap[0][4]) is not heap[0]:
            heapq.heappop(heap)
        if not heap:
            return run[0] if run else None
        if run and run[0] < heap[0]:
            return run[0]
        return heap[0]

    def pop_top(self, top: HeapItem) -> None:
        """Drop ``top`` (what ``top()`` just returned) from the front that holds it."""
        run = self.run
        if run and run[0] is top:
            run.popleft()
        else:
            heapq.heappop(self.heap)


class ClusterQueueQueue:
    """The waiting room of one ClusterQueue.

    Active workloads live in per-shape groups; the CQ heap orders the groups by their best
    member (a k-way merge), which yields exactly the single-heap order. A group parked by an
    equivalent's failure leaves the CQ heap as a whole; ``inadmissible`` holds workloads parked
    one by one (namespace mismatch, failed checks, hashing off); ``parked`` waits for backoff.
    """

    __slots__ = ("active", "groups", "heap", "inadmissible", "index", "name", "parked", "seq", "sticky", "strategy")

    def __init__(self, name: str) -> None:
        self.name = name
        self.strategy = BEST_EFFORT_FIFO
        self.heap: list[tuple[HeapItem, int, _Group]] = []
        self.groups: dict[int, _Group] = {}
        self.index: dict[WorkloadKey, _Group] = {}
        self.active = 0
        """Members of groups that are not parked (what a head can be popped from)."""
        self.inadmissible: dict[WorkloadKey, WorkloadInfo] = {}
        self.parked: dict[WorkloadKey, WorkloadInfo] = {}
        self.sticky: WorkloadKey | None = None
        self.seq = 0

    def __len__(self) -> int:
        return len(self.index) + len(self.inadmissible) + len(self.parked)

    # -- group bookkeeping -----------------------------------------------------------------------
    def _repush(self, group: _Group) -> None:
        """(Re)place the group in the CQ heap under its current best member."""
        top = group.top()
        if top is None or group.inadmissible:
            group.entry = None
            return
        entry = group.entry
        if entry is not None and entry[0] == top:
            return
        self.seq += 1
        group.entry = (top, self.seq, group)
        heapq.heappush(self.heap, group.entry)
        if len(self.heap) > 2 * len(self.groups) + 64:
            self.heap = [e for e in self.heap if e[2].entry is e]
            heapq.heapify(self.heap)

    def push(self, wl: WorkloadInfo, quiet: bool = False) -> bool:
        """Queue ``wl``; returns False if it joined a parked (failed) group instead. ``quiet``:
        its status already says why (a status write of an unchanged parked workload)."""
        self.seq += 1
        item: HeapItem = (-wl.priority, wl.timestamp, wl.uid, self.seq, wl.key)
        group = self.groups.get(wl.shape_hash)
        if group is None:
            group = self.groups[wl.shape_hash] = _Group()
        group.members[wl.key] = item
        group.wls[wl.key] = wl
        group.add(item)
        self.index[wl.key] = group
        if not quiet:
            group.unreported[wl.key] = wl
        if group.inadmissible:
            return False
        self.active += 1
        entry = group.entry
        if entry is None or item < entry[0]:
            self._repush(group)
        return True

    def _take(self, group: _Group, key: WorkloadKey) -> WorkloadInfo | None:
        item = group.members.pop(key, None)
        if item is None:
            return None
        wl = group.wls.pop(key)
        del self.index[key]
        group.unreported.pop(key, None)
        if not group.inadmissible:
            self.active -= 1
        if not group.members:
            group.entry = None
            if not group.inadmissible:  # a parked shape stays known: new arrivals are parked too
                self.groups.pop(wl.shape_hash, None)
        elif not group.inadmissible and group.entry is not None and group.entry[0] == item:
            self._repush(group)
        return wl

    def bulk_move(self, shape_hash: int, reason: str) -> list[WorkloadInfo]:
        """An equivalent workload failed: park its whole shape until the next inadmissible
        requeue. Returns the members whose status has not said so yet."""
        group = self.groups.get(shape_hash)
        if group is None:
            group = self.groups[shape_hash] = _Group()
        if not group.inadmissible:
            group.inadmissible = True
            self.active -= len(group.members)
            group.entry = None
        group.reason = reason
        if reason != group.reported_reason:
            group.reported_reason = reason
            out = list(group.wls.values())
        else:
            out = list(group.unreported.values())
        group.unreported.clear()
        return out

    def is_inadmissible(self, key: WorkloadKey) -> bool:
        group = self.index.get(key)
        return key in self.inadmissible or (group is not None and group.inadmissible)

    def failed_reason(self, key: WorkloadKey) -> str | None:
        group = self.index.get(key)
        return group.reason if group is not None and group.inadmissible else None

    # -- queue operations --------------------------------------------------------------------------
    def discard(self, key: WorkloadKey) -> WorkloadInfo | None:
        group = self.index.get(key)
        if group is not None:
            return self._take(group, key)
        wl = self.inadmissible.pop(key, None)
        if wl is not None:
            return wl
        return self.parked.pop(key, None)

    def contains(self, key: WorkloadKey) -> bool:
        return key in self.index or key in self.inadmissible or key in self.parked

    def has_active(self) -> bool:
        return self.active > 0

    def pop(self, afs_usage: Callable[[WorkloadInfo], float] | None = None) -> WorkloadInfo | None:
        """Remove and return the head, or None."""
        sticky = self.sticky
        if sticky is not None:
            group = self.index.get(sticky)
            if group is not None and not group.inadmissible:
                return self._take(group, sticky)
        if afs_usage is not None:
            best: tuple[tuple[float, HeapItem], _Group, WorkloadKey] | None = None
            for group in self.groups.values():
                if group.inadmissible:
                    continue
                for key, item in group.members.items():
                    rank = (afs_usage(group.wls[key]), item)
                    if best is None or rank < best[0]:
                        best = (rank, group, key)
            return self._take(best[1], best[2]) if best is not None else None
        heap = self.heap
        while heap:
            entry = heap[0]
            group = entry[2]
            if group.entry is not entry:  # stale: the group moved or was parked since
                heapq.heappop(heap)
                continue
            top = group.top()
            if top is None:
                group.entry = None
                heapq.heappop(heap)
                continue
            # the head leaves now: drop it from its group at once (no stale item left behind
            # for the next ``top`` to skip) and put the group back under its next member
            group.pop_top(top)
            key = top[4]
            del group.members[key]
            wl = group.wls.pop(key)
            del self.index[key]
            if group.unreported:
                group.unreported.pop(key, None)
            self.active -= 1
            following = group.top() if group.members else None
            if following is None:
                group.entry = None
                heapq.heappop(heap)
                self.groups.pop(wl.shape_hash, None)
            else:
                self.seq += 1
                group.entry = (following, self.seq, group)
                heapq.heapreplace(heap, group.entry)
            return wl
        return None

    def requeue_groups(self) -> None:
        """Inadmissible requeue: every parked shape becomes eligible again."""
        for shape, group in list(self.groups.items()):
            if group.inadmissible:
                group.inadmissible = False
                group.reason = ""
                if not group.members:
                    del self.groups[shape]
                    continue
                self.active += len(group.members)
                self._repush(group)

    def active_members(self) -> Iterable[WorkloadInfo]:
        for group in self.groups.values():
            if not group.inadmissible:
                yield from group.wls.values()

    def all_pending(self) -> Iterable[WorkloadInfo]:
        for group in self.groups.values():
            yield from group.wls.values()
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
        self.retired_seq = 0
        """Pushes counted by queues of deleted CQs (statistics)."""
        self.bypassed: dict[WorkloadKey, tuple[WorkloadInfo, str]] = {}
        """New arrivals diverted to inadmissible by a failed equivalent (reported once)."""

    # -- ClusterQueue and LocalQueue objects ---------------------------------------------------
    def upsert_cluster_queue(self, name: str, strategy: str) -> ClusterQueueQueue:
        """The queue of ClusterQueue ``name`` (created empty if new), ordered by ``strategy``."""
        q = self.cqs.get(name)
        if q is None:
            q = self.cqs[name] = ClusterQueueQueue(name)
        q.strategy = strategy
        return q

    def delete_cluster_queue(self, name: str) -> list[WorkloadInfo]:
        """Drop the queue of a deleted ClusterQueue; returns the workloads it held (now unqueued,
        still tracked by their LocalQueue)."""
        q = self.cqs.pop(name, None)
        if q is None:
            return []
        self.retired_seq += q.seq
        dropped = list(q.all_pending())
        for wl in dropped:
            self.location.pop(wl.key, None)
            self._count(wl, -1)
        return dropped

    def upsert_local_queue(self, key: tuple[str, str]) -> LocalQueue:
        """The LocalQueue record for ``key`` (created if new); the caller routes its workloads."""
        lq = self.local_queues.get(key)
        if lq is None:
            lq = self.local_queues[key] = LocalQueue(*key)
        return lq

    def delete_local_queue(self, key: tuple[str, str]) -> bool:
        return self.local_queues.pop(key, None) is not None

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

    def add(self, wl: WorkloadInfo, now: float, immediate: bool = True, quiet: bool = False) -> bool:
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
        elif immediate:
            if not q.push(wl, quiet) and not quiet:
                reason = q.failed_reason(wl.key)
                if reason:
                    self.bypassed[wl.key] = (wl, reason)
        else:
            q.inadmissible[wl.key] = wl
        self.location[wl.key] = cq_name
        self._count(wl, 1)
        return True

    def forget_taken(self, wl: WorkloadInfo) -> None:
        """``wl`` was popped as a head and is leaving for good (admitted): drop its location and
        LocalQueue tracking (the CQ queue no longer holds it, so nothing else to look up)."""
        key = wl.key
        cq_name = self.location.pop(key, None)
        if cq_name is None:
            return
        q = self.cqs.get(cq_name)
        if q is not None:
            if q.sticky == key:
                q.sticky = None
            if key in q.index:  # not expected (heads are popped first), but never leave it queued
                q.discard(key)
        lq_key = wl.lq_key
        lq = self.local_queues.get(lq_key)
        if lq is not None:
            lq.pending -= 1
        bucket = self.by_lq.get(lq_key)
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del self.by_lq[lq_key]

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
            q.requeue_groups()
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

    def take_bypassed(self) -> list[tuple[WorkloadInfo, str]]:
        """The arrivals diverted since the last call (each reported once), still queued."""
        out = [(wl, reason) for wl, reason in self.bypassed.values() if wl.key in self.location]
        self.bypassed.clear()
        return out

    def keep_sticky(self, key: WorkloadKey) -> None:
        """``key`` stays its ClusterQueue's next head (a preemptor whose record was replaced)."""
        cq_name = self.location.get(key)
        if cq_name is not None:
            self.cqs[cq_name].sticky = key

    def pending_of_lq(self, key: tuple[str, str]) -> list[WorkloadInfo]:
        return list(self.by_lq.get(key, {}).values())

    def describe(self) -> dict[str, Any]:  # pragma: no cover - debugging aid
        return {name: len(q) for name, q in self.cqs.items()}
