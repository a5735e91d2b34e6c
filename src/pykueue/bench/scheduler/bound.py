"""The theoretical lower bound of a generator config's wall time: no scheduler can finish sooner.

Owns: the arithmetic of "no scheduler can finish sooner". Assumptions, as in Kueue's bound for its
baseline: instantaneous scheduling and API, a workload holds its cpu for exactly ``runtimeMs`` after admission, no
preemption waste, perfect packing.

For every capacity pool P (a cohort: Σ nominal quota of its ClusterQueues; a ClusterQueue without a
cohort is its own pool) the bound is ``max over arrival instants a of a + W_P(>= a) / C_P`` where
``W_P(>= a)`` is the cpu·time of the pool's workloads created at or after ``a``. Two more terms are
also true lower bounds and are folded in (they never bind on Kueue's configs, so the baseline
stays 66.84 s): the same formula per ClusterQueue with its own ceiling ``min(nominal +
borrowingLimit, C_P)``, and ``created + runtime`` of every single workload.

Who calls it: the CLI (printed beside the wall time) and ``summary.yaml`` (``boundMs``).
Invariant: exact integer arithmetic until the final division (milli-cpu·ms over milli-cpu).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pykueue.bench.scheduler.config import Plan, WorkloadPlan

__all__ = ["Bound", "theoretical_bound"]


@dataclass(frozen=True, slots=True)
class Bound:
    ms: float
    """The lower bound of the wall time, from the start of generation."""
    pool: str
    """Which pool (cohort, ``cq/<name>`` or ``workload/<ns>/<name>``) sets it."""
    instant_ms: int
    """The arrival instant ``a`` that maximises ``a + W(>= a) / C``."""


def _pool_bound(workloads: list[WorkloadPlan], capacity_milli: int) -> tuple[float, int]:
    """max over a of a + W(>= a)/C for one pool, with workloads sorted by creation."""
    if capacity_milli <= 0:
        return (float("inf"), 0) if workloads else (0.0, 0)
    by_instant: dict[int, int] = defaultdict(int)
    for w in workloads:
        by_instant[w.created_ms] += w.cpu_milli * w.runtime_ms
    best, best_at, remaining = 0.0, 0, 0
    for at in sorted(by_instant, reverse=True):  # suffix sums: work arriving at or after `at`
        remaining += by_instant[at]
        value = at + remaining / capacity_milli
        if value > best:
            best, best_at = value, at
    return best, best_at


def theoretical_bound(plan: Plan) -> Bound:
    """The largest of the per-pool, per-ClusterQueue and per-workload lower bounds."""
    cq_by_name = {cq.name: cq for cq in plan.cluster_queues}
    pools: dict[str, list[str]] = defaultdict(list)
    for cq in plan.cluster_queues:
        pools[cq.cohort or f"cq/{cq.name}"].append(cq.name)
    per_cq: dict[str, list[WorkloadPlan]] = defaultdict(list)
    for w in plan.workloads:
        per_cq[w.namespace].append(w)
    best = Bound(0.0, "", 0)
    for pool, members in pools.items():
        capacity = sum(cq_by_name[m].nominal_milli for m in members)
        value, at = _pool_bound([w for m in members for w in per_cq[m]], capacity)
        if value > best.ms:
            best = Bound(value, pool, at)
        for m in members:
            cq = cq_by_name[m]
            ceiling = capacity if cq.borrowing_milli is None else min(capacity, cq.nominal_milli + cq.borrowing_milli)
            value, at = _pool_bound(per_cq[m], ceiling)
            if value > best.ms:
                best = Bound(value, f"cq/{m}", at)
    for w in plan.workloads:
        if w.created_ms + w.runtime_ms > best.ms:
            best = Bound(float(w.created_ms + w.runtime_ms), f"workload/{w.namespace}/{w.name}", w.created_ms)
    return best
