"""Fair-sharing preemption (Kueue's preemption with fair sharing): DRS-guided victim choice.

Owns the candidate set (own CQ per ``withinClusterQueue`` plus borrowing CQs of the whole tree
per ``reclaimWithinCohort``), the tournament that picks the target CQ with the highest share,
the strategies LessThanOrEqualToFinalShare / LessThanInitialShare evaluated at the almost-LCA,
the retry pass, and fill-back. Simulation is done on the live tree and undone before returning.
"""

from __future__ import annotations

from ...state.clusterqueue import NEVER, ClusterQueue
from ...state.cohort_tree import CohortNode, ResourceNode
from ...state.resource_amounts import FlavorResource
from ...state.workload_info import WorkloadInfo
from ...types import LESS_THAN_INITIAL_SHARE, FairSharingConfig
from ..fair_sharing import Share, share_key
from .common import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    PreemptionCtx,
    Target,
    candidate_sort_key,
    fill_back,
    restore_all,
    satisfies_policy,
    workload_fits,
)

__all__ = ["fair_targets"]


def _borrowing_on(node: ResourceNode, frs: set[FlavorResource]) -> bool:
    return any(node.usage.get(fr, 0) > node.subtree.get(fr, 0) for fr in frs)


def _candidates(ctx: PreemptionCtx) -> dict[str, list[WorkloadInfo]]:
    cq = ctx.cq
    out: dict[str, list[WorkloadInfo]] = {}
    if cq.within_cluster_queue != NEVER:
        own = [
            w
            for w in cq.workloads.values()
            if ctx.uses_needed(w) and satisfies_policy(cq.within_cluster_queue, ctx.wl, w)
        ]
        if own:
            out[cq.name] = own
    if cq.parent is not None and cq.reclaim_within_cohort != NEVER:
        for other in ctx.cache.tree_cqs(cq):
            if other is cq or not _borrowing_on(other, ctx.frs_need):
                continue
            found = [
                w
                for w in other.workloads.values()
                if ctx.uses_needed(w) and satisfies_policy(cq.reclaim_within_cohort, ctx.wl, w)
            ]
            if found:
                out[other.name] = found
    for _name, wls in out.items():
        wls.sort(key=lambda w: candidate_sort_key(ctx, w))
    return out


def _path(node: ResourceNode) -> list[ResourceNode]:
    """Root first, node last."""
    path = [node]
    path.extend(node.path_to_root())
    path.reverse()
    return path


def _almost_lca(a: ResourceNode, b: ResourceNode) -> tuple[ResourceNode, ResourceNode]:
    pa, pb = _path(a), _path(b)
    i = 0
    while i < len(pa) and i < len(pb) and pa[i] is pb[i]:
        i += 1
    return pa[min(i, len(pa) - 1)], pb[min(i, len(pb) - 1)]


class _Tournament:
    """Pick the CQ to take the next victim from: highest share first, walking from the root."""

    def __init__(self, ctx: PreemptionCtx, pools: dict[str, list[WorkloadInfo]]) -> None:
        self.ctx = ctx
        self.pools = pools
        self.preemptor_path = set(id(n) for n in _path(ctx.cq))

    def _has(self, node: ResourceNode) -> bool:
        if isinstance(node, ClusterQueue):
            return bool(self.pools.get(node.name))
        assert isinstance(node, CohortNode)
        return any(self._has(c) for c in node.children())

    def _eligible(self, node: ResourceNode) -> bool:
        if not self._has(node):
            return False
        return id(node) in self.preemptor_path or _borrowing_on(node, self.ctx.frs_need)

    def pick(self) -> ClusterQueue | None:
        root = self.ctx.cq.root()
        node: ResourceNode = root
        while isinstance(node, CohortNode):
            options = [c for c in node.children() if self._eligible(c)]
            if not options:
                return None
            node = max(options, key=self._rank)
        if isinstance(node, ClusterQueue) and self.pools.get(node.name):
            return node
        return None

    def _rank(self, node: ResourceNode) -> tuple[Share, int, tuple[int, ...]]:
        share = share_key(node)
        if isinstance(node, CohortNode):
            return (share, 1, ())
        first = self.pools[node.name][0]
        key = candidate_sort_key(self.ctx, first)
        # lower candidate ordering wins ties: negate the sortable parts
        return (share, 0, (-key[0], -key[1], -int(key[3])))


def fair_targets(ctx: PreemptionCtx, config: FairSharingConfig) -> list[Target]:
    pools = _candidates(ctx)
    if not pools:
        return []
    strategies = config.preemption_strategies or ("LessThanOrEqualToFinalShare", LESS_THAN_INITIAL_SHARE)
    cq = ctx.cq
    targets: list[Target] = []
    retry: dict[str, list[WorkloadInfo]] = {}
    tournament = _Tournament(ctx, pools)
    fits = False
    while not fits:
        target_cq = tournament.pick()
        if target_cq is None:
            break
        pool = pools[target_cq.name]
        if target_cq is cq:
            victim = pool.pop(0)
            ctx.remove(victim)
            targets.append(Target(victim, IN_CLUSTER_QUEUE))
            fits = workload_fits(ctx, True)
            continue
        if cq.is_within_nominal_with(ctx.requests, ctx.frs_need):
            victim = pool.pop(0)
            ctx.remove(victim)
            targets.append(Target(victim, IN_COHORT_RECLAMATION))
            fits = workload_fits(ctx, True)
            continue
        taken = False
        while pool:
            victim = pool.pop(0)
            if _strategy_passes(ctx, target_cq, victim, strategies[0]):
                ctx.remove(victim)
                targets.append(Target(victim, IN_COHORT_FAIR_SHARING))
                fits = workload_fits(ctx, True)
                taken = True
                break
            retry.setdefault(target_cq.name, []).append(victim)
        if not taken:
            continue
    if not fits and len(strategies) > 1 and retry:
        pools.clear()
        pools.update(retry)
        while not fits:
            target_cq = tournament.pick()
            if target_cq is None:
                break
            victim = pools[target_cq.name].pop(0)
            if _strategy_passes(ctx, target_cq, victim, strategies[1]):
                ctx.remove(victim)
                targets.append(Target(victim, IN_COHORT_FAIR_SHARING))
                fits = workload_fits(ctx, True)
    if not fits:
        restore_all(ctx, targets)
        return []
    targets = fill_back(ctx, targets, True)
    restore_all(ctx, targets)
    return targets


def _strategy_passes(ctx: PreemptionCtx, target_cq: ClusterQueue, victim: WorkloadInfo, strategy: str) -> bool:
    preemptor_side, target_side = _almost_lca(ctx.cq, target_cq)
    preemptor_new = share_key(preemptor_side, ctx.requests)
    target_old = share_key(target_side)
    removal = {fr: -amount for fr, amount in victim.usage.items()}
    target_new = share_key(target_side, removal)
    if strategy == LESS_THAN_INITIAL_SHARE:
        return preemptor_new < target_old
    return preemptor_new <= target_new
