"""Read side of the engine for Kueue's gauges: one snapshot of every queue and cohort.

Owns :func:`gauge_snapshot`, the numbers behind ``kueue_pending_workloads``, the reserving and
admitted counts, the ClusterQueue status, the per-flavor quotas (nominal, borrowing and lending
limits), reservations and usage of ClusterQueues, LocalQueues and cohorts. Pure and read-only; it
costs O(queues x flavors + pending workloads) and is meant to be called when metrics are scraped,
never by the scheduling cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .state.cache import Cache
from .state.pending_queues import QueueManager
from .state.resource_amounts import FlavorResource

__all__ = ["ClusterQueueGauges", "CohortGauges", "GaugeSnapshot", "LocalQueueGauges", "QuotaLine", "gauge_snapshot"]


@dataclass(frozen=True, slots=True)
class QuotaLine:
    """One (flavor, resource) of a ClusterQueue: amounts in the engine's units (cpu in milli)."""

    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    """None: no limit."""
    lending_limit: int | None
    reserved: int
    used: int


@dataclass(frozen=True, slots=True)
class ClusterQueueGauges:
    name: str
    cohort: str
    root_cohort: str
    status: str
    """Kueue's metric status: ``active``, ``pending`` (inactive) or ``terminating`` (being deleted)."""
    pending_active: int
    pending_inadmissible: int
    reserving: int
    admitted: int
    quotas: list[QuotaLine]


@dataclass(frozen=True, slots=True)
class LocalQueueGauges:
    namespace: str
    name: str
    cluster_queue: str
    active: bool
    pending_active: int
    pending_inadmissible: int
    reserving: int
    admitted: int
    reserved: dict[FlavorResource, int]
    used: dict[FlavorResource, int]


@dataclass(frozen=True, slots=True)
class CohortGauges:
    name: str
    parent: str
    root: str
    admitted: int
    """Admitted workloads of every ClusterQueue in the cohort's subtree."""
    quota: dict[FlavorResource, int]
    """SubtreeQuota: the cohort's own quota plus what its children can lend."""
    reserved: dict[FlavorResource, int]
    """Reservations of the subtree that its members' own (lendable-excluded) quota does not cover."""


@dataclass(slots=True)
class GaugeSnapshot:
    cluster_queues: list[ClusterQueueGauges] = field(default_factory=list)
    local_queues: list[LocalQueueGauges] = field(default_factory=list)
    cohorts: list[CohortGauges] = field(default_factory=list)


def gauge_snapshot(cache: Cache, queues: QueueManager) -> GaugeSnapshot:
    """Every ClusterQueue, LocalQueue and cohort in ``cache`` and ``queues``, in name order."""
    cache.ensure_fresh()
    out = GaugeSnapshot()
    active_of: dict[str, bool] = {}
    admitted_of: dict[str, int] = {}
    for name in sorted(cache.cqs):
        cq = cache.cqs[name]
        active = cache.cq_status(cq)[0]
        active_of[name] = active
        admitted_of[name] = cq.admitted_count
        q = queues.cqs.get(name)
        pending = len(q) if q is not None else 0
        pending_active = q.active if q is not None else 0
        parent = cq.parent
        quotas = [
            QuotaLine(
                f,
                r,
                quota.nominal,
                quota.borrowing_limit,
                quota.lending_limit,
                cq.usage.get((f, r), 0),
                cq.admitted_usage.get((f, r), 0),
            )
            for (f, r), quota in cq.quotas.items()
        ]
        status = "terminating" if cq.deleting else "active" if active else "pending"
        out.cluster_queues.append(
            ClusterQueueGauges(
                name,
                parent.name if parent is not None else "",
                cq.root().name if parent is not None else "",
                status,
                pending_active,
                pending - pending_active,
                len(cq.workloads),
                cq.admitted_count,
                quotas,
            )
        )
    for key in sorted(queues.local_queues):
        lq = queues.local_queues[key]
        lq_cq = cache.cqs.get(lq.cq_name)
        q = queues.cqs.get(lq.cq_name)
        waiting = queues.by_lq.get(key) or {}
        # active: in the ClusterQueue's heap (as its own count is); parked and inadmissible ones are not
        active_count = (
            sum(1 for wk in waiting if wk in q.index and not q.is_inadmissible(wk)) if waiting and q is not None else 0
        )
        inadmissible = len(waiting) - active_count
        reserved: dict[FlavorResource, int] = {}
        used: dict[FlavorResource, int] = {}
        reserving = admitted = 0
        if lq_cq is not None:
            for fr in lq_cq.quotas:
                reserved[fr] = used[fr] = 0
            for wl in lq_cq.workloads.values():
                if wl.lq_key != key:
                    continue
                reserving += 1
                admitted += 1 if wl.admitted else 0
                for fr, value in wl.usage.items():
                    reserved[fr] = reserved.get(fr, 0) + value
                    if wl.admitted:
                        used[fr] = used.get(fr, 0) + value
        active = lq.stop_policy == "None" and active_of.get(lq.cq_name, False)
        out.local_queues.append(
            LocalQueueGauges(
                lq.namespace,
                lq.name,
                lq.cq_name,
                active,
                len(waiting) - inadmissible,
                inadmissible,
                reserving,
                admitted,
                reserved,
                used,
            )
        )
    for name in sorted(cache.cohorts):
        cohort = cache.cohorts[name]
        admitted_total = 0
        stack = [cohort]
        while stack:
            node = stack.pop()
            stack.extend(node.child_cohorts)
            admitted_total += sum(admitted_of.get(c.name, 0) for c in node.child_cqs)
        parent = cohort.parent
        out.cohorts.append(
            CohortGauges(
                name,
                parent.name if parent is not None else "",
                cohort.root().name,
                admitted_total,
                dict(cohort.subtree),
                dict(cohort.usage),
            )
        )
    return out
