"""Kueue's partial admission: the largest pod counts ≥ minCount that can be admitted.

Owns Kueue's search: with ``delta_p = count_p − minCount_p`` and ``totalDelta = Σ delta_p``,
counts_i = ``count_p − floor(delta_p · i / totalDelta)`` for i in [0, totalDelta]; binary search
for the smallest i whose assignment is Fit, or Preempt with targets (``sort.Search`` semantics:
assumes viability is monotone in i). Called by the cycle only after the full counts failed.
"""

from __future__ import annotations

from collections.abc import Callable

from ..state.workload_info import WorkloadInfo

__all__ = ["counts_for", "partial_counts"]


def counts_for(wl: WorkloadInfo, i: int) -> list[int]:
    deltas = [ps.effective_count - ps.min_count if ps.min_count is not None else 0 for ps in wl.podsets]
    deltas = [max(0, d) for d in deltas]
    total = sum(deltas)
    if total == 0:
        return [ps.effective_count for ps in wl.podsets]
    return [ps.effective_count - (d * i) // total for ps, d in zip(wl.podsets, deltas, strict=True)]


def partial_counts(wl: WorkloadInfo, viable: Callable[[list[int]], bool]) -> list[int] | None:
    """Smallest i (largest counts) that ``viable`` accepts, or None."""
    total = sum(max(0, ps.effective_count - ps.min_count) for ps in wl.podsets if ps.min_count is not None)
    if total == 0:
        return None
    lo, hi = 1, total + 1  # i = 0 (full counts) already failed
    while lo < hi:
        mid = (lo + hi) // 2
        if viable(counts_for(wl, mid)):
            hi = mid
        else:
            lo = mid + 1
    if lo > total:
        return None
    return counts_for(wl, lo)
