"""Read side of the engine: what status writers, the visibility API and `why` ask for.

Owns the translation of the engine's state into ``PendingInfo`` (pending positions in heap order,
as Kueue's visibility API), ``QueueUsage`` (ClusterQueue and LocalQueue status: flavorsReservation,
flavorsUsage, counts) and the fair sharing ``weightedShare``. Pure functions over the quota cache
and the queue manager they are given; nothing here changes state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .algorithm.fair_sharing import weighted_share_status
from .state.cache import Cache
from .state.clusterqueue import ClusterQueue
from .state.cohort_tree import ResourceNode
from .state.pending_queues import QueueManager
from .state.workload_info import WorkloadInfo, WorkloadKey
from .types import PendingInfo, QueueUsage

__all__ = ["cluster_queue_usage", "local_queue_usage", "pending_workloads", "weighted_share"]

Usage = dict[str, dict[str, tuple[int, int]]]


def pending_workloads(
    queues: QueueManager,
    cache: Cache,
    afs_usage: Callable[[WorkloadInfo], float] | None,
    cluster_queue: str,
    offset: int = 0,
    limit: int | None = None,
    local_queue: tuple[str, str] | None = None,
) -> list[PendingInfo]:
    """Pending workloads of the CQ (heap, inadmissible, parked) in the order the queue pops them:
    the page ``[offset, offset + limit)`` of all of them, or of one LocalQueue's (positions in both
    always count from the queue's head).

    The order is the queue's own: each queued workload's heap item (priority, queue-order time, UID)
    as pushed, the same tuple for the inadmissible and parked ones, sorted natively; only a sticky
    preemptor or Admission Fair Sharing (which reorder the pops) take the slower keyed sort. Only the
    prefix up to the page's end is turned into records, so a short page of a deep queue stays cheap.
    ``afs_usage`` is None when Admission Fair Sharing is off.
    """
    q = queues.cqs.get(cluster_queue)
    if q is None:
        return []
    cq = cache.cqs.get(cluster_queue)
    afs = cq is not None and cq.afs and afs_usage is not None
    ordered: list[WorkloadKey]
    if afs or q.sticky is not None:
        usage_of = afs_usage if afs else None

        def rank(wl: WorkloadInfo) -> tuple[int, float, int, float, str]:
            usage = usage_of(wl) if usage_of is not None else 0.0
            return (0 if q.sticky == wl.key else 1, usage, -wl.priority, wl.timestamp, wl.uid)

        ordered = [wl.key for wl in sorted(q.all_pending(), key=rank)]
    else:
        items: list[tuple[int, float, str, int, WorkloadKey]] = [
            item for group in q.groups.values() for item in group.members.values()
        ]
        for waiting in (q.inadmissible, q.parked):
            items.extend((-wl.priority, wl.timestamp, wl.uid, 0, wl.key) for wl in waiting.values())
        items.sort()
        ordered = [item[4] for item in items]

    def find(key: WorkloadKey) -> WorkloadInfo:
        group = q.index.get(key)
        if group is not None:
            return group.wls[key]
        return q.inadmissible.get(key) or q.parked[key]

    out: list[PendingInfo] = []
    if local_queue is not None:
        members = queues.by_lq.get(local_queue) or {}
        position = 0
        for index, key in enumerate(ordered):
            if key not in members:
                continue
            if position >= offset:
                if limit is not None and len(out) >= limit:
                    break
                out.append(_info(find(key), index, position))
            position += 1
        return out
    end = len(ordered) if limit is None else min(len(ordered), offset + limit)
    per_lq: dict[tuple[str, str], int] = {}
    for index in range(end):
        wl = find(ordered[index])
        position = per_lq.get(wl.lq_key, 0)
        per_lq[wl.lq_key] = position + 1
        if index >= offset:
            out.append(_info(wl, index, position))
    return out


def _info(wl: WorkloadInfo, index: int, position: int) -> PendingInfo:
    base = int(((wl.obj.get("spec") or {}).get("priority")) or 0)
    return PendingInfo(
        wl.namespace, wl.name, wl.uid, wl.queue_name, base, wl.creation_str, index, position, wl.owner_references
    )


def _by_flavor(cq: ClusterQueue, usage: Mapping[tuple[str, str], int]) -> Usage:
    out: Usage = {}
    for group in cq.resource_groups:
        for flavor in group.flavors:
            for res in group.covered:
                total = usage.get((flavor, res), 0)
                out.setdefault(flavor, {})[res] = (total, max(0, total - cq.nominal((flavor, res))))
    for (flavor, res), total in usage.items():
        if total and res not in out.get(flavor, {}):
            out.setdefault(flavor, {})[res] = (total, total)
    return out


def cluster_queue_usage(queues: QueueManager, cache: Cache, name: str) -> QueueUsage:
    cq = cache.cqs.get(name)
    if cq is None:
        return QueueUsage({}, {}, 0, 0, 0)
    q = queues.cqs.get(name)
    return QueueUsage(
        reservation=_by_flavor(cq, cq.usage),
        usage=_by_flavor(cq, cq.admitted_usage),
        pending_workloads=len(q) if q is not None else 0,
        reserving_workloads=len(cq.workloads),
        admitted_workloads=cq.admitted_count,
    )


def local_queue_usage(queues: QueueManager, cache: Cache, namespace: str, name: str) -> QueueUsage:
    lq = queues.local_queues.get((namespace, name))
    if lq is None:
        return QueueUsage({}, {}, 0, 0, 0)
    reservation: Usage = {}
    usage: Usage = {}
    reserving = admitted = 0
    cq = cache.cqs.get(lq.cq_name)
    if cq is not None:
        for flavor, res in cq.quotas:
            reservation.setdefault(flavor, {})[res] = (0, 0)
            usage.setdefault(flavor, {})[res] = (0, 0)
        for wl in cq.workloads.values():
            if wl.lq_key != lq.key:
                continue
            reserving += 1
            admitted += 1 if wl.admitted else 0
            for (flavor, res), value in wl.usage.items():
                total = reservation.setdefault(flavor, {}).get(res, (0, 0))[0]
                reservation[flavor][res] = (total + value, 0)
                if wl.admitted:
                    total = usage.setdefault(flavor, {}).get(res, (0, 0))[0]
                    usage[flavor][res] = (total + value, 0)
    # Pending: every waiting workload of the LocalQueue, queued in its CQ or not (Kueue's
    # LocalQueue keeps them while its ClusterQueue is missing, and counts them).
    pending = len(queues.by_lq.get(lq.key) or ())
    return QueueUsage(reservation, usage, pending, reserving, admitted)


def weighted_share(cache: Cache, kind: str, name: str) -> int:
    is_cq = kind.lower() in ("clusterqueue", "cq")
    node: ResourceNode | None = cache.cqs.get(name) if is_cq else cache.cohorts.get(name)
    return weighted_share_status(node) if node is not None else 0
