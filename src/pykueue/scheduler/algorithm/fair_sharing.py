"""Fair sharing values: Dominant Resource Share (DRS) and weighted share of CQs and cohorts (Kueue's fair sharing).

Owns the arithmetic every fair-sharing decision is made of: per resource the amount borrowed
above the node's subtree quota, divided by what the parent could lend; the weighted share and
the comparison in which zero-weight borrowers are worst. Pure functions over the quota tree,
with an optional extra request (an incoming workload) or removal (a preemption candidate).
"""

from __future__ import annotations

import math

from ..state.cohort_tree import ResourceNode
from ..state.resource_amounts import FlavorResource

__all__ = ["Share", "dominant_resource_share", "share_key", "weighted_share_status"]

Share = tuple[int, float, float]
"""Comparable share: (1 if infinite else 0, weighted value, unweighted DRS). Larger is worse."""


def _lendable(node: ResourceNode) -> dict[str, int]:
    root = node.root()
    lendable: dict[str, int] = {}
    for fr in root.subtree:
        lendable[fr[1]] = lendable.get(fr[1], 0) + node.potential_available(fr)
    return lendable


def dominant_resource_share(node: ResourceNode, extra: dict[FlavorResource, int] | None = None) -> tuple[float, str]:
    """(DRS in per-mille, dominant resource) of ``node`` with ``extra`` usage added (may be
    negative to simulate a removal). Roots and non-borrowing nodes have DRS 0.

    The ratio is exact (not truncated to whole per-mille), as Kueue compares shares: two queues
    borrowing 111.1 and 111.9 per mille are not tied. Only the reported status rounds."""
    parent = node.parent
    if parent is None:
        return 0, ""
    borrowed: dict[str, int] = {}
    keys = set(node.subtree) | set(node.usage)
    if extra:
        keys |= set(extra)
    for fr in keys:
        amount = node.usage.get(fr, 0) + (extra.get(fr, 0) if extra else 0) - node.subtree.get(fr, 0)
        if amount > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + amount
    if not borrowed:
        return 0, ""
    lendable = _lendable(parent)
    drs = 0.0
    dominant = ""
    for res in sorted(borrowed):
        total = lendable.get(res, 0)
        if total <= 0:
            continue
        ratio = borrowed[res] * 1000 / total
        if ratio > drs or not dominant:
            drs, dominant = ratio, res
    return drs, dominant


def _is_borrowing(node: ResourceNode, extra: dict[FlavorResource, int] | None) -> bool:
    keys = set(node.usage) | (set(extra) if extra else set())
    return any(node.usage.get(fr, 0) + (extra.get(fr, 0) if extra else 0) > node.subtree.get(fr, 0) for fr in keys)


def share_key(node: ResourceNode, extra: dict[FlavorResource, int] | None = None) -> Share:
    drs, _ = dominant_resource_share(node, extra)
    weight = node.fair_weight
    if weight <= 0:
        if node.parent is not None and _is_borrowing(node, extra):
            return (1, math.inf, drs)
        return (0, 0.0, drs)
    return (0, drs / weight, drs)


def weighted_share_status(node: ResourceNode) -> int:
    """`status.fairSharing.weightedShare`: the exact weighted share rounded up to an integer (as
    Kueue reports it: 111.1 per mille is 112), MaxInt64 for +inf."""
    inf, value, _ = share_key(node)
    if inf:
        return 2**63 - 1
    return math.ceil(value)
