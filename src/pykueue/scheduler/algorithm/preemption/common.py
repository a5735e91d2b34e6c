"""Shared preemption vocabulary: targets, policies, candidate ordering and the fit test (Kueue's preemption).

Owns the rules both strategies (classic and fair sharing) agree on: when a preemption policy
allows a candidate, the order in which candidates are tried, how a removal is simulated on the
live quota tree (and undone), and Kueue's preemption messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ...state.cache import Cache
from ...state.clusterqueue import ANY, LOWER_OR_NEWER_EQUAL, LOWER_PRIORITY, ClusterQueue
from ...state.resource_amounts import FlavorResource
from ...state.workload_info import WorkloadInfo, WorkloadKey

__all__ = [
    "IN_CLUSTER_QUEUE",
    "IN_COHORT_FAIR_SHARING",
    "IN_COHORT_RECLAIM_WHILE_BORROWING",
    "IN_COHORT_RECLAMATION",
    "PreemptionCtx",
    "Target",
    "candidate_sort_key",
    "preemption_message",
    "satisfies_policy",
    "workload_fits",
]

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"

HUMAN_REASONS = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}


class Target:
    __slots__ = ("reason", "wl")

    def __init__(self, wl: WorkloadInfo, reason: str) -> None:
        self.wl = wl
        self.reason = reason

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Target({self.wl.key}, {self.reason})"


class PreemptionCtx:
    """Everything one preemption search needs about the preemptor."""

    __slots__ = ("afs_usage", "cache", "cq", "evicted", "excluded", "frs_need", "now", "requests", "wl")

    def __init__(
        self,
        cache: Cache,
        wl: WorkloadInfo,
        cq: ClusterQueue,
        requests: dict[FlavorResource, int],
        frs_need: set[FlavorResource],
        evicted: set[WorkloadKey],
        now: float,
        afs_usage: Callable[[WorkloadInfo], float] | None = None,
        excluded: set[WorkloadKey] | None = None,
    ) -> None:
        self.cache = cache
        self.wl = wl
        self.cq = cq
        self.requests = requests
        self.frs_need = frs_need
        self.evicted = evicted
        self.now = now
        self.afs_usage = afs_usage
        self.excluded: set[WorkloadKey] = excluded or set()
        """Workloads already chosen as victims this cycle (removed from the simulation)."""

    def is_evicted(self, wl: WorkloadInfo) -> bool:
        return wl.evicted or wl.key in self.evicted

    def uses_needed(self, wl: WorkloadInfo) -> bool:
        return wl.key not in self.excluded and any(fr in self.frs_need for fr in wl.usage)

    def remove(self, wl: WorkloadInfo) -> None:
        self.cache.cqs[wl.cq_name].add_usage(wl.usage, -1)

    def restore(self, wl: WorkloadInfo) -> None:
        self.cache.cqs[wl.cq_name].add_usage(wl.usage, 1)


def satisfies_policy(policy: str, preemptor: WorkloadInfo, candidate: WorkloadInfo) -> bool:
    if policy == LOWER_PRIORITY:
        return candidate.priority < preemptor.priority
    if policy == LOWER_OR_NEWER_EQUAL:
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and preemptor.timestamp < candidate.timestamp
        )
    return policy == ANY


def candidate_sort_key(ctx: PreemptionCtx, wl: WorkloadInfo) -> tuple[int, int, float, int, float, str]:
    """CandidatesOrdering: evicted first, other CQs first, [AFS] heavier LQ first, lower
    priority first, most recently reserved first, UID."""
    afs = 0.0
    if ctx.afs_usage is not None and wl.cq_name == ctx.cq.name:
        afs = -ctx.afs_usage(wl)
    return (
        0 if ctx.is_evicted(wl) else 1,
        1 if wl.cq_name == ctx.cq.name else 0,
        afs,
        wl.priority,
        -wl.quota_reserved_time,
        wl.uid,
    )


def workload_fits(ctx: PreemptionCtx, allow_borrowing: bool) -> bool:
    cq = ctx.cq
    for fr, value in ctx.requests.items():
        if not allow_borrowing and cq.borrowing_with(fr, value):
            return False
        if value > cq.available(fr):
            return False
    return True


def fill_back(ctx: PreemptionCtx, targets: list[Target], allow_borrowing: bool) -> list[Target]:
    """Re-add targets from the second-to-last backwards while the preemptor still fits."""
    for i in range(len(targets) - 2, -1, -1):
        ctx.restore(targets[i].wl)
        if workload_fits(ctx, allow_borrowing):
            targets[i] = targets[-1]
            targets.pop()
        else:
            ctx.remove(targets[i].wl)
    return targets


def restore_all(ctx: PreemptionCtx, targets: Iterable[Target]) -> None:
    for t in targets:
        ctx.restore(t.wl)


def preemption_message(preemptor: WorkloadInfo, reason: str, preemptor_path: str, preemptee_path: str) -> str:
    labels = (preemptor.obj.get("metadata") or {}).get("labels") or {}
    job_uid = labels.get("kueue.x-k8s.io/job-uid") or "UNKNOWN"
    return (
        f"Preempted to accommodate a workload (UID: {preemptor.uid or 'UNKNOWN'}, JobUID: {job_uid}) "
        f"due to {HUMAN_REASONS.get(reason, 'UNKNOWN')}; preemptor path: {preemptor_path or 'UNKNOWN'}; "
        f"preemptee path: {preemptee_path or 'UNKNOWN'}"
    )


def queue_path(cq: ClusterQueue) -> str:
    """/root-cohort/…/cq, as Kueue prints it in preemption messages."""
    names = [cq.name] + [c.name for c in cq.path_to_root()]
    return "/" + "/".join(reversed(names))
