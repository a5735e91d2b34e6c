"""Kueue's Admission Fair Sharing: LocalQueue usage that orders a ClusterQueue's heap.

Owns the LocalQueue usage value (weighted consumed resources + entry penalties, divided by the
LocalQueue weight) and the entry penalty added when a workload is assumed. The decayed
``consumedResources`` are maintained by the LocalQueue controller and arrive here through
``upsert_local_queue``; a new ``lastUpdate`` folds the penalties in (they are reset).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..types import AdmissionFairSharingConfig
from .pending_queues import LocalQueue
from .resource_amounts import FlavorResource, QuantityError, amount_of

__all__ = ["add_entry_penalty", "load_status", "local_queue_usage"]


def load_status(lq: LocalQueue, status: Mapping[str, Any]) -> None:
    afs = ((status.get("fairSharing") or {}).get("admissionFairSharingStatus")) or {}
    if not afs:
        return
    try:
        lq.afs_consumed = {r: float(amount_of(r, v)) for r, v in (afs.get("consumedResources") or {}).items()}
    except QuantityError:
        lq.afs_consumed = {}
    last = afs.get("lastUpdate")
    if last != lq.afs_last_update:
        lq.afs_last_update = last
        lq.afs_penalty = {}


def local_queue_usage(config: AdmissionFairSharingConfig | None, lq: LocalQueue | None) -> float:
    """Σ_r weight_r · (consumed_r + penalty_r) / LQ weight; +inf for a weight ≤ 0."""
    if config is None or lq is None:
        return 0.0
    if lq.weight <= 0:
        return float("inf")
    total = 0.0
    for res in set(lq.afs_consumed) | set(lq.afs_penalty):
        weight = config.resource_weights.get(res, 1.0)
        total += weight * (lq.afs_consumed.get(res, 0.0) + lq.afs_penalty.get(res, 0.0))
    return total / lq.weight


def add_entry_penalty(
    config: AdmissionFairSharingConfig | None, lq: LocalQueue | None, usage: Mapping[FlavorResource, int]
) -> None:
    """alpha(samplingInterval, halfLife) × the workload's requests, counted at once."""
    if config is None or lq is None:
        return
    half_life = config.usage_half_life_seconds
    alpha = 0.0 if half_life <= 0 else 1 - 0.5 ** (config.usage_sampling_interval_seconds / half_life)
    for (_, res), value in usage.items():
        lq.afs_penalty[res] = lq.afs_penalty.get(res, 0.0) + alpha * value
