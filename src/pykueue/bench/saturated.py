"""``pykueue bench core --saturated``: the engine's cost per cycle when every cohort is full.

Owns one measurement: the ``saturated-large`` scenario (cohorts of 100 ClusterQueues, nominal 20,
borrowing limit 100, ``reclaimWithinCohort: Any``, ``withinClusterQueue: LowerPriority``; small,
medium and large workloads arriving faster than they run, so quota stays ~85 % used and every
head of a cohort competes for it) run in virtual time at several numbers of ClusterQueues, with
the same cohort size and the same workloads per ClusterQueue (``depth`` multiplies them). What
grows from one size to the next is the number of cohorts, so the engine's cost per cycle should
grow at most linearly with the number of ClusterQueues: the report prints that cost per
ClusterQueue relative to the smallest size (ideal 1.0; above 1 is worse than linear).

Who calls it: ``pykueue bench core --saturated`` and its test. Invariant: only the engine's calls
are charged (``schedule()`` and the write-backs the simulator makes: admitted, evicted, finished),
on the CPU clock; each size runs in a fresh interpreter when ``isolate`` (the CLI does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pykueue.bench.scheduler.config import expand, load_config
from pykueue.bench.scheduler.virtual import simulate

__all__ = ["COHORT_SIZE", "SaturatedResult", "run_saturated", "run_saturated_size"]

COHORT_SIZE = 100
SCENARIO = Path(__file__).resolve().parent / "configs" / "saturated-large" / "generator.yaml"


@dataclass(frozen=True, slots=True)
class SaturatedResult:
    cqs: int
    workloads: int
    cycles: int
    admissions: int
    preemptions: int
    engine_cpu_s: float
    engine_wall_s: float
    virtual_wall_ms: float

    @property
    def decisions(self) -> int:
        return self.admissions + self.preemptions

    @property
    def cpu_ms_per_cycle(self) -> float:
        return self.engine_cpu_s * 1000 / self.cycles if self.cycles else 0.0

    @property
    def decisions_per_cpu_s(self) -> float:
        return self.decisions / self.engine_cpu_s if self.engine_cpu_s > 0 else 0.0

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.engine_wall_s if self.engine_wall_s > 0 else 0.0


def run_saturated_size(cqs: int, depth: float = 1.0) -> SaturatedResult:
    """The saturated scenario with ``cqs`` ClusterQueues (a multiple of 100), in virtual time."""
    if cqs < COHORT_SIZE or cqs % COHORT_SIZE:
        raise ValueError(f"--cqs must be a multiple of {COHORT_SIZE} (whole cohorts): {cqs}")
    config = load_config(SCENARIO, scale=depth)
    cohorts = tuple(dataclasses.replace(c, count=cqs // COHORT_SIZE) for c in config.cohorts)
    plan = expand(dataclasses.replace(config, cohorts=cohorts))
    r = simulate(plan)
    return SaturatedResult(
        len(plan.cluster_queues),
        len(plan.workloads),
        r.cycles,
        r.admissions,
        r.preemptions,
        r.engine_cpu_s,
        r.engine_wall_s,
        r.wall_ms,
    )


def run_saturated(
    sizes: Sequence[int],
    *,
    depth: float = 1.0,
    out: Callable[[str], None] = print,
    isolate: bool = False,
    repeats: int = 1,
    measure: Callable[[int, float], SaturatedResult] = run_saturated_size,
) -> list[SaturatedResult]:
    """Print one row per size and the cost-per-cycle growth; return the rows (smallest first).

    ``measure`` is the per-size run (tests inject a fake); ``isolate`` runs each size in a fresh
    interpreter so no size inherits the heap of the previous one; each size runs ``repeats`` times
    and the run with the least engine CPU is reported (on a shared machine a single run's CPU time
    moves by 10-40 % with the other processes' cache pressure; the work itself is deterministic)."""
    from pykueue.bench.core import fresh_process

    out(
        f"pykueue bench core --saturated: saturated-large's cohorts of {COHORT_SIZE} ClusterQueues (cohorts full, "
        f"queues deep; workloads per ClusterQueue x{depth:g}), virtual time, best of {max(1, repeats)} per size"
    )
    out("  engine cpu: schedule() plus the write-backs (admitted, evicted, finished); a cycle is one schedule()")
    out(
        f"{'cqs':>6} {'workloads':>10} {'cycles':>7} {'admissions':>11} {'preemptions':>12} {'engine_cpu_s':>13} "
        f"{'cpu_ms/cycle':>13} {'decisions/cpu_s':>16} {'decisions/s':>12} {'virtual_wall_s':>15}"
    )
    results: list[SaturatedResult] = []
    for n in sorted(set(sizes)):
        runs = [fresh_process(isolate, measure, n, depth) for _ in range(max(1, repeats))]
        r = min(runs, key=lambda run: run.engine_cpu_s)  # the least disturbed by other processes
        results.append(r)
        out(
            f"{r.cqs:>6} {r.workloads:>10} {r.cycles:>7} {r.admissions:>11} {r.preemptions:>12} "
            f"{r.engine_cpu_s:>13.3f} {r.cpu_ms_per_cycle:>13.2f} {r.decisions_per_cpu_s:>16.1f} "
            f"{r.decisions_per_s:>12.1f} {r.virtual_wall_ms / 1000:>15.2f}"
        )
    first = results[0]
    base = first.cpu_ms_per_cycle / first.cqs if first.cqs else 0.0
    for r in results[1:]:
        per_cq = r.cpu_ms_per_cycle / r.cqs if r.cqs else 0.0
        ratio = per_cq / base if base else 0.0
        verdict = "at most linear" if ratio <= LINEAR_TOLERANCE else "WORSE THAN LINEAR"
        out(f"cost per cycle per ClusterQueue, {r.cqs} vs {first.cqs}: {ratio:.3f} ({verdict})")
    last = results[-1]
    out(f"decisions/s: {last.decisions_per_s:.1f}")
    return results


LINEAR_TOLERANCE = 1.25
"""Cost per cycle per ClusterQueue above this ratio to the smallest size counts as worse than linear
(noise on a shared machine moves single runs by ~10-20 %)."""
