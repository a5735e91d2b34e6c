"""Classic preemption (fair sharing off): candidates, variants, attempts and minimal target sets.

Owns Kueue's classic preemption: same-CQ candidates per ``withinClusterQueue``; cohort candidates
walked from the parent to the root with hierarchical advantage; the variants (WithinCQ,
HierarchicalReclaim, ReclaimWithoutBorrowing, ReclaimWhileBorrowing) and their reasons; the
attempt order with/without borrowing; greedy removal until the preemptor fits, then fill-back.
All simulation happens on the live quota tree and is undone before returning.

Cost: which ClusterQueues may give victims is decided per search (O(ClusterQueues of the cohort));
their workloads are drawn from rankings each ClusterQueue keeps (``ClusterQueue.ranked``), merged
lazily, so a search that succeeds after a few victims touches a few workloads, not every admitted
workload of the cohort. The order is exactly Kueue's (a stable sort of all candidates by
CandidatesOrdering): tests/scheduler/unit/test_preemption_candidates.py holds it to that.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from enum import IntEnum
from itertools import chain
from operator import itemgetter

from ...state.clusterqueue import NEVER, ClusterQueue, Rank
from ...state.cohort_tree import CohortNode, ResourceNode
from ...state.resource_amounts import FlavorResource
from ...state.workload_info import WorkloadInfo
from .common import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    PreemptionCtx,
    Target,
    candidate_sort_key,
    fill_back,
    restore_all,
    satisfies_policy,
    workload_fits,
)

__all__ = ["classic_targets", "queue_under_nominal"]


class Variant(IntEnum):
    NEVER = 0
    WITHIN_CQ = 1
    HIERARCHICAL_RECLAIM = 2
    RECLAIM_WITHOUT_BORROWING = 3
    RECLAIM_WHILE_BORROWING = 4


_REASONS = {
    Variant.WITHIN_CQ: IN_CLUSTER_QUEUE,
    Variant.HIERARCHICAL_RECLAIM: IN_COHORT_RECLAMATION,
    Variant.RECLAIM_WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
    Variant.RECLAIM_WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING,
}

Candidate = tuple[WorkloadInfo, CohortNode | None, Variant]

_RANK = itemgetter(0)


def _classify(ctx: PreemptionCtx, wl: WorkloadInfo, advantage: bool) -> Variant:
    if not ctx.uses_needed(wl):
        return Variant.NEVER
    cq = ctx.cq
    same = wl.cq_name == cq.name
    policy = cq.within_cluster_queue if same else cq.reclaim_within_cohort
    if not satisfies_policy(policy, ctx.wl, wl):
        return Variant.NEVER
    if same:
        return Variant.WITHIN_CQ
    if advantage:
        return Variant.HIERARCHICAL_RECLAIM
    if cq.borrow_within_cohort == NEVER:
        return Variant.RECLAIM_WITHOUT_BORROWING
    threshold = cq.max_priority_threshold
    if wl.priority >= ctx.wl.priority or (threshold is not None and wl.priority > threshold):
        return Variant.RECLAIM_WITHOUT_BORROWING
    return Variant.RECLAIM_WHILE_BORROWING


class _Source:
    """One ClusterQueue whose workloads a search may take as victims, with how it reaches them:
    ``lca`` (the cohort where the preemptor's and the candidate's paths meet) and ``advantage``
    (the hierarchical advantage there). Its candidates are drawn lazily, in ``ClusterQueue.ranked``
    order."""

    __slots__ = ("advantage", "cq", "lca")

    def __init__(self, cq: ClusterQueue, lca: CohortNode | None, advantage: bool) -> None:
        self.cq = cq
        self.lca = lca
        self.advantage = advantage


def _from_cq(
    ctx: PreemptionCtx, cq: ClusterQueue, lca: CohortNode | None, advantage: bool, out: list[_Source]
) -> None:
    out.append(_Source(cq, lca, advantage))


def _drawn(ctx: PreemptionCtx, src: _Source, evicted: bool) -> Iterator[tuple[Rank, Candidate]]:
    """``src``'s candidates that are (``evicted``) or are not marked evicted, lowest rank first."""
    is_evicted = ctx.is_evicted
    lca, advantage = src.lca, src.advantage
    for rank, wl in src.cq.ranked():
        if is_evicted(wl) != evicted:
            continue
        variant = _classify(ctx, wl, advantage)
        if variant != Variant.NEVER:
            yield rank, (wl, lca, variant)


def _merged(ctx: PreemptionCtx, sources: list[_Source], evicted: bool) -> Iterator[Candidate]:
    """The candidates of ``sources`` in the order a stable sort of all of them by rank gives
    (ties: the earlier source first, then the ClusterQueue's own order), drawn one at a time."""
    if len(sources) == 1:
        return (cand for _, cand in _drawn(ctx, sources[0], evicted))
    if not sources:
        return iter(())
    return (cand for _, cand in heapq.merge(*(_drawn(ctx, s, evicted) for s in sources), key=_RANK))


class _Pulled:
    """A candidate stream pulled on demand and kept: iterated again (a second attempt), it replays
    what was pulled and then goes on pulling; ``bool`` pulls at most one."""

    __slots__ = ("items", "source")

    def __init__(self, source: Iterator[Candidate]) -> None:
        self.items: list[Candidate] = []
        self.source: Iterator[Candidate] | None = source

    def _pull(self) -> bool:
        source = self.source
        if source is None:
            return False
        for cand in source:
            self.items.append(cand)
            return True
        self.source = None
        return False

    def __bool__(self) -> bool:
        return bool(self.items) or self._pull()

    def __iter__(self) -> Iterator[Candidate]:
        items = self.items
        i = 0
        while i < len(items) or self._pull():
            yield items[i]
            i += 1


def _marked_queues(ctx: PreemptionCtx) -> set[str]:
    """ClusterQueues holding a workload whose preemption was already issued (expected to release)."""
    reserved = ctx.cache.reserved
    out: set[str] = set()
    for key in ctx.evicted:
        wl = reserved.get(key)
        if wl is not None:
            out.add(wl.cq_name)
    return out


def _fits_in_quota(node: ResourceNode, requests: dict[FlavorResource, int]) -> tuple[bool, dict[FlavorResource, int]]:
    fits = True
    remaining: dict[FlavorResource, int] = {}
    for fr, value in requests.items():
        usage = node.usage.get(fr, 0)
        quota = node.subtree.get(fr, 0)
        if usage + value > quota:
            fits = False
        remaining[fr] = max(0, value - max(0, quota - usage))
    return fits, remaining


def _collect_subtree(
    ctx: PreemptionCtx,
    node: CohortNode,
    lca: CohortNode,
    skip: CohortNode | None,
    advantage: bool,
    out: list[_Source],
) -> None:
    for child in node.child_cohorts:
        if child is skip or child.is_within_nominal(ctx.frs_need):
            continue
        _collect_subtree(ctx, child, lca, skip, advantage, out)
    for child_cq in node.child_cqs:
        if child_cq is ctx.cq or not isinstance(child_cq, ClusterQueue):
            continue
        if not child_cq.is_within_nominal(ctx.frs_need):
            _from_cq(ctx, child_cq, lca, advantage, out)


def _collect_hierarchical(ctx: PreemptionCtx, *, with_priority: bool = True) -> tuple[list[_Source], list[_Source]]:
    """ClusterQueues of the cohort whose workloads may be candidates, in Kueue's walk order: those
    of subtrees where the preemptor has the hierarchical advantage, and the others (``priority``;
    not collected when ``with_priority`` is False). Which ClusterQueues qualify is decided here,
    before the search changes any usage."""
    hierarchy: list[_Source] = []
    priority: list[_Source] = []
    cq = ctx.cq
    if cq.parent is None or cq.reclaim_within_cohort == NEVER:
        return hierarchy, priority
    advantage, remaining = _fits_in_quota(cq, ctx.requests)
    previous: CohortNode | None = None
    for root in cq.path_to_root():
        if advantage or with_priority:
            _collect_subtree(ctx, root, root, previous, advantage, hierarchy if advantage else priority)
        fits, remaining = _fits_in_quota(root, remaining)
        advantage = advantage or fits
        previous = root
    return hierarchy, priority


def queue_under_nominal(ctx: PreemptionCtx) -> bool:
    cq = ctx.cq
    return all(cq.usage.get(fr, 0) < cq.nominal(fr) for fr in ctx.frs_need)


def _valid(ctx: PreemptionCtx, cand: Candidate, borrow: bool) -> bool:
    wl, lca, variant = cand
    if wl.cq_name == ctx.cq.name:
        return True
    if borrow and variant == Variant.RECLAIM_WITHOUT_BORROWING:
        return False
    cq = ctx.cache.cqs[wl.cq_name]
    if cq.is_within_nominal(ctx.frs_need):
        return False
    for node in cq.path_to_root():
        if node is lca:
            break
        if node.is_within_nominal(ctx.frs_need):
            return False
    return True


def _minimal(ctx: PreemptionCtx, candidates: Iterable[Candidate], allow_borrowing: bool) -> list[Target]:
    targets: list[Target] = []
    for cand in candidates:
        if not _valid(ctx, cand, allow_borrowing):
            continue
        ctx.remove(cand[0])
        targets.append(Target(cand[0], _REASONS[cand[2]]))
        if workload_fits(ctx, allow_borrowing):
            targets = fill_back(ctx, targets, allow_borrowing)
            restore_all(ctx, targets)
            return targets
    restore_all(ctx, targets)
    return []


def classic_targets(ctx: PreemptionCtx, *, prune: bool = True) -> list[Target]:
    """The minimal victim set for ``ctx``'s preemptor, or [] if none frees enough.

    ``prune`` skips a search that cannot succeed: with ``borrowWithinCohort`` off and the
    preemptor's CQ at or over its nominal quota, only the attempt that allows borrowing runs, and it
    refuses every cohort candidate reclaimed without borrowing, so those (every other CQ's admitted
    workloads, outside hierarchical advantage) are not collected at all. This is the common failing
    head of a saturated cohort with ``reclaimWithinCohort`` set: profiled at ~3 % of the server's
    time in the baseline's drain. The answer is the same either way (property-tested with ``prune=False``).
    """
    cq = ctx.cq
    forbidden = cq.borrow_within_cohort == NEVER
    borrow_only = forbidden and not queue_under_nominal(ctx)
    own: list[_Source] = []
    if cq.within_cluster_queue != NEVER:
        _from_cq(ctx, cq, None, False, own)
    hierarchy_sources, priority_sources = _collect_hierarchical(ctx, with_priority=not (prune and borrow_only))

    def key(c: Candidate) -> tuple[int, int, float, int, float, str]:
        return candidate_sort_key(ctx, c[0])

    # the preemptor's own ClusterQueue: few workloads, and with Admission Fair Sharing its own key
    same: list[Candidate] = []
    for src in own:
        for wl in src.cq.workloads.values():
            variant = _classify(ctx, wl, False)
            if variant != Variant.NEVER:
                same.append((wl, None, variant))
    same.sort(key=key)
    # Kueue's order: the evicted candidates of each group, then the others; within a group by rank.
    # Evicted ones can only be in ClusterQueues marked so or holding an issued preemption's victim.
    marked = _marked_queues(ctx) if ctx.evicted else set()

    def evicted_of(sources: list[_Source]) -> _Pulled:
        return _Pulled(_merged(ctx, [s for s in sources if s.cq.name in marked or s.cq.holds_evicted()], True))

    is_evicted = ctx.is_evicted
    streams = [
        evicted_of(hierarchy_sources),
        evicted_of(priority_sources),
        _Pulled(iter([c for c in same if is_evicted(c[0])])),
        _Pulled(_merged(ctx, hierarchy_sources, False)),
        _Pulled(_merged(ctx, priority_sources, False)),
        _Pulled(iter([c for c in same if not is_evicted(c[0])])),
    ]
    hierarchy = bool(streams[0]) or bool(streams[3])
    priority = bool(streams[1]) or bool(streams[4])
    if not hierarchy and not priority and not same:
        return []
    ordered = _Pulled(chain.from_iterable(streams))
    if (not hierarchy and not priority) or borrow_only:
        attempts = [True]
    elif forbidden and not hierarchy:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for allow in attempts:
        targets = _minimal(ctx, ordered, allow)
        if targets:
            return targets
    return []
