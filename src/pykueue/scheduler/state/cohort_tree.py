"""The quota tree: ClusterQueues and Cohorts as resource nodes, and Kueue's quota primitives.

Owns SubtreeQuota, localQuota (guaranteed quota), Usage, Available and PotentialAvailable per
(flavor, resource) exactly as Kueue's hierarchical cohorts define them, and the incremental propagation of usage
up the tree. The cache (``cache.py``) rebuilds the tree's *shape* when a CQ or Cohort changes
(rare) and moves usage through ``add_usage`` when a workload is admitted/released (hot), which
costs O(depth) and never recounts the world.

Invariant: for every cohort C and fr, ``C.usage[fr] == Σ_child max(0, child.usage[fr] -
child.local[fr])`` and ``C.subtree[fr] == C.nominal + Σ_child (child.subtree - child.local)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .resource_amounts import FlavorResource

__all__ = ["CohortNode", "Quota", "ResourceNode"]


class Quota:
    __slots__ = ("borrowing_limit", "lending_limit", "nominal")

    def __init__(self, nominal: int, borrowing_limit: int | None = None, lending_limit: int | None = None) -> None:
        self.nominal = nominal
        self.borrowing_limit = borrowing_limit
        self.lending_limit = lending_limit


class ResourceNode:
    """A node of the quota tree (CQ or cohort)."""

    __slots__ = ("epoch", "fair_weight", "local", "name", "parent", "quotas", "subtree", "usage")

    is_cq = False

    def __init__(self, name: str) -> None:
        self.epoch = 0
        """On a tree's root: bumped whenever the workloads holding quota anywhere in the tree change
        (admitted, released, replaced, re-marked) or a preemption is issued against one of them. A
        preemption search that ran at the same epoch (and the same shape, ``Cache.version``) saw the
        same candidates and the same usage."""
        self.name = name
        self.parent: CohortNode | None = None
        self.quotas: dict[FlavorResource, Quota] = {}
        self.subtree: dict[FlavorResource, int] = {}
        self.local: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = {}
        self.fair_weight = 1.0

    # -- structure ---------------------------------------------------------------------------
    def path_to_root(self) -> Iterator[CohortNode]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> ResourceNode:
        node: ResourceNode = self
        while node.parent is not None:
            node = node.parent
        return node

    # -- quota primitives -------------------------------------------------------------------
    def nominal(self, fr: FlavorResource) -> int:
        q = self.quotas.get(fr)
        return q.nominal if q is not None else 0

    def borrowing_with(self, fr: FlavorResource, val: int) -> bool:
        """Would ``val`` more usage take this node above its subtree quota?"""
        return self.usage.get(fr, 0) + val > self.subtree.get(fr, 0)

    def local_available(self, fr: FlavorResource) -> int:
        return max(0, self.local.get(fr, 0) - self.usage.get(fr, 0))

    def available(self, fr: FlavorResource) -> int:
        parent = self.parent
        usage = self.usage.get(fr, 0)
        if parent is None:
            value = self.subtree.get(fr, 0) - usage
        else:
            local = self.local.get(fr, 0) if self.local else 0
            parent_available = parent.available(fr)
            q = self.quotas.get(fr) if self.quotas else None
            if q is not None and q.borrowing_limit is not None:
                stored_in_parent = self.subtree.get(fr, 0) - local
                used_in_parent = max(0, usage - local)
                parent_available = min(parent_available, stored_in_parent - used_in_parent + q.borrowing_limit)
            free = local - usage
            value = free + parent_available if free > 0 else parent_available
        if self.is_cq and value < 0:
            return 0
        return value

    def potential_available(self, fr: FlavorResource) -> int:
        parent = self.parent
        if parent is None:
            return self.subtree.get(fr, 0)
        value = self.local.get(fr, 0) + parent.potential_available(fr)
        q = self.quotas.get(fr)
        if q is not None and q.borrowing_limit is not None:
            value = min(value, self.subtree.get(fr, 0) + q.borrowing_limit)
        return value

    def is_within_nominal(self, frs: Iterable[FlavorResource]) -> bool:
        """Usage ≤ subtree quota on every fr in ``frs`` (IsWithinNominalInResources)."""
        return all(self.usage.get(fr, 0) <= self.subtree.get(fr, 0) for fr in frs)

    def is_within_nominal_with(self, requests: dict[FlavorResource, int], frs: Iterable[FlavorResource]) -> bool:
        """Would usage + ``requests`` stay within the subtree quota on every fr in ``frs``?"""
        return all(self.usage.get(fr, 0) + requests.get(fr, 0) <= self.subtree.get(fr, 0) for fr in frs)

    # -- usage -------------------------------------------------------------------------------
    def add_usage(self, usage: dict[FlavorResource, int], sign: int = 1) -> None:
        """Add (sign=1) or remove (sign=-1) usage here and bubble the change to the root."""
        for fr, amount in usage.items():
            if amount:
                self.add_fr(fr, sign * amount)

    def add_fr(self, fr: FlavorResource, delta: int) -> None:
        node: ResourceNode = self
        while True:
            usage = node.usage
            old = usage.get(fr, 0)
            new = old + delta
            usage[fr] = new
            parent = node.parent
            if parent is None:
                return
            local = node.local.get(fr, 0) if node.local else 0
            above_new = new - local
            above_old = old - local
            delta = (above_new if above_new > 0 else 0) - (above_old if above_old > 0 else 0)
            if delta == 0:
                return
            node = parent


class CohortNode(ResourceNode):
    """A cohort (explicit object or implicit name); quota is extra capacity for its subtree."""

    __slots__ = ("child_cohorts", "child_cqs", "cyclic", "explicit", "height", "parent_name")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.child_cohorts: list[CohortNode] = []
        self.child_cqs: list[ResourceNode] = []
        self.explicit = False
        self.parent_name = ""
        self.cyclic = False
        self.height = 1

    def children(self) -> Iterator[ResourceNode]:
        yield from self.child_cohorts
        yield from self.child_cqs

    def compute_quotas(self) -> None:
        """Bottom-up SubtreeQuota/localQuota/usage for this subtree (after a shape change)."""
        subtree: dict[FlavorResource, int] = {fr: q.nominal for fr, q in self.quotas.items()}
        usage: dict[FlavorResource, int] = {}
        height = 1 if (self.child_cqs or self.child_cohorts) else 0
        for cohort in self.child_cohorts:
            cohort.compute_quotas()
            height = max(height, cohort.height + 1)
        for child in self.children():
            if child.is_cq:
                child.subtree = {fr: q.nominal for fr, q in child.quotas.items()}
                set_local(child)
            for fr, amount in child.subtree.items():
                subtree[fr] = subtree.get(fr, 0) + amount - child.local.get(fr, 0)
            for fr, amount in child.usage.items():
                extra = max(0, amount - child.local.get(fr, 0))
                if extra:
                    usage[fr] = usage.get(fr, 0) + extra
        self.subtree = subtree
        self.usage = usage
        self.height = height
        set_local(self)


def set_local(node: ResourceNode) -> None:
    """localQuota = max(0, SubtreeQuota − lendingLimit) where a lending limit is set."""
    local: dict[FlavorResource, int] = {}
    if node.parent is not None:
        for fr, q in node.quotas.items():
            if q.lending_limit is not None:
                local[fr] = max(0, node.subtree.get(fr, 0) - q.lending_limit)
    node.local = local


def find_height_of_lowest_subtree_that_fits(cq: ResourceNode, fr: FlavorResource, val: int) -> tuple[int, bool]:
    """Borrowing level for ``val`` more of ``fr`` in ``cq``, and whether a smaller-than-root
    subtree absorbs it (reclaim within the hierarchy is then possible)."""
    parent = cq.parent
    if parent is None or not cq.borrowing_with(fr, val):
        return 0, parent is not None
    remaining = val - cq.local_available(fr)
    node: CohortNode | None = parent
    while node is not None:
        if not node.borrowing_with(fr, remaining):
            return node.height, node.parent is not None
        remaining -= node.local_available(fr)
        node = node.parent
    top = parent
    while top.parent is not None:
        top = top.parent
    return top.height, False
