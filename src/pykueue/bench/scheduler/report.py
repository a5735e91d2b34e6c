"""``summary.yaml`` and the printed report of one benchmark run.

Owns the summary's layout: Kueue's field names (``wallMs``, ``clusterQueueClasses.<class>``
{cpuUsed, cpuAverageUsage, nominalQuota, ...}, ``workloadClasses.<class>`` {count, totalEvictions,
averageTimeToAdmissionMs, averageTimeToFinishMs}, ``droppedWorkloadEvents``) plus ours (``boundMs``,
``wallToBound``, ``usagePercent``, p50/p99 time to admission, admissions/preemptions/cycles, CPU
time per workload).

Who calls it: the CLI, after the virtual-time or real-time run.
Invariant: the printed numbers are read back from the summary dict, so screen and file agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pykueue.bench.scheduler.bound import Bound
from pykueue.bench.scheduler.recorder import Recorder

__all__ = ["RunStats", "format_report", "summarize", "write_summary"]


@dataclass(frozen=True, slots=True)
class RunStats:
    mode: str
    wall_ms: float
    run_wall_s: float
    """Real seconds the whole run took (virtual mode: the simulation's own cost)."""
    run_cpu_s: float
    admissions: int = 0
    preemptions: int = 0
    cycles: int = 0
    engine_wall_s: float | None = None
    engine_cpu_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def summarize(rec: Recorder, bound: Bound, stats: RunStats) -> dict[str, Any]:
    workloads = len(rec.workloads)
    summary: dict[str, Any] = {
        "mode": stats.mode,
        "wallMs": round(stats.wall_ms),
        "boundMs": round(bound.ms, 1),
        "boundSetBy": bound.pool,
        "wallToBound": round(stats.wall_ms / bound.ms, 3) if bound.ms > 0 else None,
        "workloads": workloads,
        "admissions": stats.admissions,
        "preemptions": stats.preemptions,
        "cycles": stats.cycles,
        "runWallMs": int(stats.run_wall_s * 1000),
        "runCpuMs": int(stats.run_cpu_s * 1000),
        "cpuUsPerWorkload": round(stats.run_cpu_s * 1e6 / workloads, 1) if workloads else 0.0,
        "clusterQueueClasses": rec.cluster_queue_classes(),
        "workloadClasses": rec.workload_classes(),
        "droppedWorkloadEvents": 0,
    }
    if stats.engine_wall_s is not None and stats.engine_cpu_s is not None:
        summary["engineWallMs"] = int(stats.engine_wall_s * 1000)
        summary["engineCpuMs"] = int(stats.engine_cpu_s * 1000)
    summary.update(stats.extra)
    return summary


def write_summary(summary: dict[str, Any], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "summary.yaml"
    path.write_text(yaml.safe_dump(summary, sort_keys=False))
    return path


def format_report(summary: dict[str, Any], out: Callable[[str], None]) -> None:
    ratio = summary.get("wallToBound")
    tail = f"; wall/bound {ratio:.3f}" if ratio is not None else ""
    where = f", controllers: {summary['controllers']}" if summary.get("controllers") else ""
    out(
        f"wall: {summary['wallMs'] / 1000:.2f} s ({summary['mode']}{where}); "
        f"theoretical bound {summary['boundMs'] / 1000:.2f} s (set by {summary['boundSetBy']}){tail}"
    )
    out(
        f"workloads: {summary['workloads']}, admissions {summary['admissions']}, preemptions "
        f"{summary['preemptions']}, cycles {summary['cycles']}"
    )
    for cls, s in summary["clusterQueueClasses"].items():
        out(
            f"ClusterQueue class {cls}: usage {s['usagePercent']:.2f}% of {s['nominalQuota']}m nominal "
            f"({s['count']} queues)"
        )
    for cls, s in summary["workloadClasses"].items():
        out(
            f"workload class {cls}: {s['count']} workloads, avg time to admission {s['averageTimeToAdmissionMs']} ms "
            f"(p50 {s['p50TimeToAdmissionMs']}, p99 {s['p99TimeToAdmissionMs']}), evictions {s['totalEvictions']}, "
            f"never admitted {s['count'] - s['admitted']}"
        )
    engine = f", engine {summary['engineCpuMs']} ms cpu" if "engineCpuMs" in summary else ""
    out(
        f"cost: {summary['runWallMs']} ms wall, {summary['runCpuMs']} ms cpu{engine}; "
        f"{summary['cpuUsPerWorkload']} us cpu per workload"
    )
