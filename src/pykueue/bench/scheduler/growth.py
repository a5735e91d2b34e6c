"""Cost growth: the same config at 1x, 2x and 4x the workload counts, in virtual time.

Owns the question "does a workload get dearer as the backlog deepens?". Doubling every workload
set's count doubles the arrivals at the same rate, so queues run deeper for longer. Per scale we
report the virtual wall time and its bound, and the real CPU/wall time the run cost per workload
(whole simulation and engine calls alone); ratios are against the 1x run of the same process
(DESIGN: benchmarks report ratios against a reference run in the same process).

Who calls it: the CLI (``--growth``). Invariant: each scale runs on a fresh engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pykueue.bench.scheduler.bound import theoretical_bound
from pykueue.bench.scheduler.config import GeneratorConfig, expand
from pykueue.bench.scheduler.virtual import simulate
from pykueue.scheduler import SchedulerConfig

__all__ = ["GrowthRow", "run_growth"]


@dataclass(frozen=True, slots=True)
class GrowthRow:
    factor: int
    workloads: int
    wall_ms: float
    bound_ms: float
    run_cpu_us: float
    """Real CPU microseconds of the whole simulation per workload."""
    run_wall_us: float
    engine_cpu_us: float
    """CPU microseconds inside engine calls per workload."""


def run_growth(
    config: GeneratorConfig,
    scheduler_config: SchedulerConfig,
    out: Callable[[str], None],
    factors: tuple[int, ...] = (1, 2, 4),
) -> list[GrowthRow]:
    rows: list[GrowthRow] = []
    out(
        f"{'scale':>5} {'workloads':>9} {'wall_s':>8} {'bound_s':>8} {'wall/bound':>10} {'cpu_us/wl':>10} "
        f"{'wall_us/wl':>10} {'engine_cpu_us/wl':>16} {'cpu ratio':>9} {'wall ratio':>10}"
    )
    for factor in factors:
        plan = expand(config.scaled(factor) if factor != 1 else config)
        bound = theoretical_bound(plan)
        r = simulate(plan, scheduler_config)
        n = max(1, len(plan.workloads))
        row = GrowthRow(
            factor,
            len(plan.workloads),
            r.wall_ms,
            bound.ms,
            r.run_cpu_s * 1e6 / n,
            r.run_wall_s * 1e6 / n,
            r.engine_cpu_s * 1e6 / n,
        )
        rows.append(row)
        base = rows[0]
        out(
            f"{factor:>4}x {row.workloads:>9} {row.wall_ms / 1000:>8.2f} {row.bound_ms / 1000:>8.2f} "
            f"{row.wall_ms / row.bound_ms if row.bound_ms else 0:>10.3f} {row.run_cpu_us:>10.1f} "
            f"{row.run_wall_us:>10.1f} {row.engine_cpu_us:>16.1f} "
            f"{row.run_cpu_us / base.run_cpu_us if base.run_cpu_us else 0:>9.3f} "
            f"{row.run_wall_us / base.run_wall_us if base.run_wall_us else 0:>10.3f}"
        )
    return rows
