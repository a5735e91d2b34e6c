"""Preemption: who must be evicted so a workload fits (Kueue's preemption), classic or fair sharing.

``Preemptor`` is the entry point the cycle and the flavor assigner's oracle use; it builds the
search context and dispatches to the classic or the fair-sharing strategy.
"""

from __future__ import annotations

from collections.abc import Callable

from ...state.cache import Cache
from ...state.clusterqueue import NEVER, ClusterQueue
from ...state.cohort_tree import find_height_of_lowest_subtree_that_fits
from ...state.resource_amounts import FlavorResource
from ...state.workload_info import WorkloadInfo, WorkloadKey
from ...types import FairSharingConfig
from ..flavor_assigner import Granular
from .classic import classic_targets
from .common import PreemptionCtx, Target, preemption_message, queue_path
from .fair import fair_targets

__all__ = ["PreemptionCtx", "Preemptor", "Target", "preemption_message", "queue_path"]

_ANSWERS_KEPT = 50_000
"""Preemptors with remembered answers before the memory is dropped (a safety bound)."""


class Preemptor:
    def __init__(
        self,
        cache: Cache,
        fair_sharing: FairSharingConfig | None,
        evicted: set[WorkloadKey],
        now: Callable[[], float],
        afs_usage: Callable[[WorkloadInfo], float] | None = None,
    ) -> None:
        self.cache = cache
        self.fair_sharing = fair_sharing
        self.evicted = evicted
        self.now = now
        self.afs_usage = afs_usage
        self.excluded: set[WorkloadKey] = set()
        """Set by the cycle while it recomputes an entry with this cycle's victims removed."""
        self.memo: dict[tuple[object, ...], list[Target]] | None = None
        """Set by the cycle around one nomination, while the quota tree cannot change: the flavor
        assigner's oracle and the nomination's own target search ask the same question for a
        single-resource preemptor, and the second asking reuses the first answer."""
        self.committed = False
        """Set by the cycle while it nominates: the quota tree holds exactly the cache's workloads
        (no round overlay, no victims lifted), so a search's answer depends only on the preemptor,
        the shape (``cache.version``) and the tree's ``epoch``."""
        self.answers: dict[WorkloadKey, dict[tuple[object, ...], tuple[WorkloadInfo, int, int, list[Target]]]] = {}
        """The last answer to each question asked while a round nominated, with the preemptor's record,
        ``cache.version`` and the tree's epoch it was found at. Asked again with all three unchanged,
        the answer is the same (no candidates, or the same victims): a head without candidates in a
        StrictFIFO queue, or a preemptor waiting for its victims to leave, is not searched again at
        every cycle. Any admission, release, re-marked workload or issued preemption in the tree, or
        a shape change, makes the next asking search again. Kept per preemptor until it leaves the
        queues (``forget``)."""

    def context(
        self, wl: WorkloadInfo, cq: ClusterQueue, requests: dict[FlavorResource, int], frs_need: set[FlavorResource]
    ) -> PreemptionCtx:
        return PreemptionCtx(
            self.cache,
            wl,
            cq,
            requests,
            frs_need,
            self.evicted,
            self.now(),
            self.afs_usage if cq.afs else None,
            self.excluded,
        )

    @staticmethod
    def may_preempt(cq: ClusterQueue) -> bool:
        """Does any policy of ``cq`` allow a candidate? (Without one there is nothing to search,
        nor a context to build.)"""
        return cq.within_cluster_queue != NEVER or (cq.parent is not None and cq.reclaim_within_cohort != NEVER)

    def targets(self, ctx: PreemptionCtx) -> list[Target]:
        if not self.may_preempt(ctx.cq):
            return []
        memo = self.memo
        if memo is None:
            return self._fresh(ctx)
        key = (ctx.wl.key, ctx.cq.name, frozenset(ctx.requests.items()), frozenset(ctx.frs_need))
        found = memo.get(key)
        if found is None:
            found = memo[key] = self._fresh(ctx, key)
        return found

    def _fresh(self, ctx: PreemptionCtx, key: tuple[object, ...] | None = None) -> list[Target]:
        """The search's answer, or the remembered one when nothing the search reads has changed.

        Only classic preemption without Admission Fair Sharing is remembered (fair sharing and AFS
        read usage that decays with time), and only while the round nominates (``committed``): then
        the quota tree holds the cache's workloads and nothing else."""
        if not self.committed or self.fair_sharing is not None or ctx.afs_usage is not None or ctx.excluded:
            return self._search(ctx)
        if key is None:
            key = (ctx.wl.key, ctx.cq.name, frozenset(ctx.requests.items()), frozenset(ctx.frs_need))
        epoch = ctx.cq.root().epoch
        version = self.cache.version
        mine = self.answers.get(ctx.wl.key)
        if mine is None:
            if len(self.answers) >= _ANSWERS_KEPT:  # a safety bound: ``forget`` keeps it small
                self.answers.clear()
            mine = self.answers[ctx.wl.key] = {}
        seen = mine.get(key)
        if seen is not None and seen[0] is ctx.wl and seen[1] == version and seen[2] == epoch:
            return seen[3]
        found = self._search(ctx)
        mine[key] = (ctx.wl, version, epoch, found)
        return found

    def forget(self, key: WorkloadKey) -> None:
        """``key`` left the queues (admitted, finished, deleted): its remembered answers go."""
        if self.answers:
            self.answers.pop(key, None)

    def _search(self, ctx: PreemptionCtx) -> list[Target]:
        if self.fair_sharing is not None:
            return fair_targets(ctx, self.fair_sharing)
        return classic_targets(ctx)

    def oracle(self, cq: ClusterQueue, wl: WorkloadInfo, fr: FlavorResource, val: int) -> tuple[Granular, int]:
        """SimulatePreemption for one fr: can preemption free ``val``, and from whom?"""
        if not self.may_preempt(cq):
            return Granular.NO_CANDIDATES, find_height_of_lowest_subtree_that_fits(cq, fr, val)[0]
        ctx = self.context(wl, cq, {fr: val}, {fr})
        targets = self.targets(ctx)
        if not targets:
            borrow, _ = find_height_of_lowest_subtree_that_fits(cq, fr, val)
            return Granular.NO_CANDIDATES, borrow
        for t in targets:
            ctx.remove(t.wl)
        borrow, _ = find_height_of_lowest_subtree_that_fits(cq, fr, val)
        for t in targets:
            ctx.restore(t.wl)
        if any(t.wl.cq_name == cq.name for t in targets):
            return Granular.PREEMPT, borrow
        return Granular.RECLAIM, borrow
