"""The recorder: Kueue's measured quantities from workload and ClusterQueue events.

Owns the arithmetic, not the event source: the virtual-time simulator and the real-time driver
both feed it ``(time in ms since generation started, observation)`` pairs.

* **Time to admission** per workload: admission time − creation time, overwritten by every
  re-admission (creation → latest admission). Class average = Σ / count with integer division,
  a never-admitted workload counting 0 (Kueue's rule). We add p50/p99 over admitted workloads.
* **Evictions**: each transition to Evicted counts one.
* **ClusterQueue usage**: on each CQ event, ``cpuUsed += previous.cpuUsage × (t − t_previous)``
  (admitted cpu in milli, integrated over ms). Per class: ΣcpuUsed, Σ nominal quota, first = the
  earliest first event, last = the latest last event, ``usage% = ΣcpuUsed·100 / (Σnominal ·
  (last − first))`` as Kueue's checker computes it; ``cpuAverageUsage = ΣcpuUsed / (last − first)``.
* **Done**: generation finished and no active ClusterQueue has pending or reserving workloads.

Who calls it: ``virtual.py`` and ``realtime.py``; ``summary()`` feeds ``report.py``.
Invariant: time only moves forward per ClusterQueue (late events are clamped to the previous
one, never integrated backwards).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CQSample", "Recorder", "percentile"]


@dataclass(slots=True)
class _WL:
    class_name: str
    created_ms: float
    time_to_admit_ms: float = 0.0
    admitted: bool = False
    ever_admitted: bool = False
    evicted: bool = False
    evictions: int = 0
    finished: bool = False
    time_to_finish_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class CQSample:
    cpu_usage_milli: int
    """Admitted usage (``status.flavorsUsage[0].resources[0].total``) in milli-cpu."""
    nominal_milli: int
    pending: int
    reserving: int
    active: bool = True


@dataclass(slots=True)
class _CQ:
    class_name: str
    first_ms: float
    last_ms: float
    last: CQSample
    cpu_used: float = 0.0
    """milli-cpu × ms."""


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of ``values``; 0 for an empty list."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, -(-int(p * len(ordered)) // 100))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(slots=True)
class Recorder:
    workloads: dict[str, _WL] = field(default_factory=dict)
    cqs: dict[str, _CQ] = field(default_factory=dict)
    generation_done: bool = False
    events: int = 0

    # ---------------------------------------------------------------------------- workloads

    def created(self, key: str, class_name: str, at_ms: float) -> None:
        self.workloads.setdefault(key, _WL(class_name, at_ms))
        self.events += 1

    def admitted(self, key: str, at_ms: float) -> None:
        wl = self.workloads[key]
        self.events += 1
        if wl.admitted:
            return
        wl.admitted = wl.ever_admitted = True
        wl.evicted = False
        wl.time_to_admit_ms = max(0.0, at_ms - wl.created_ms)

    def evicted(self, key: str, at_ms: float) -> None:
        wl = self.workloads[key]
        self.events += 1
        if not wl.evicted:
            wl.evicted = True
            wl.evictions += 1
        wl.admitted = False

    def finished(self, key: str, at_ms: float) -> None:
        wl = self.workloads[key]
        self.events += 1
        if not wl.finished:
            wl.finished = True
            wl.admitted = False
            wl.time_to_finish_ms = max(0.0, at_ms - wl.created_ms)

    # ---------------------------------------------------------------------------- cluster queues

    def cluster_queue(self, name: str, class_name: str, at_ms: float, sample: CQSample) -> None:
        cq = self.cqs.get(name)
        self.events += 1
        if cq is None:
            self.cqs[name] = _CQ(class_name, at_ms, at_ms, sample)
            return
        at_ms = max(at_ms, cq.last_ms)
        cq.cpu_used += cq.last.cpu_usage_milli * (at_ms - cq.last_ms)
        cq.last_ms = at_ms
        cq.last = sample

    def expect_more(self) -> bool:
        """Kueue's stop rule, minus the generation flag (callers check that)."""
        return any(cq.last.active and (cq.last.pending > 0 or cq.last.reserving > 0) for cq in self.cqs.values())

    def done(self) -> bool:
        return self.generation_done and not self.expect_more()

    # ---------------------------------------------------------------------------- summary

    def cluster_queue_classes(self) -> dict[str, dict[str, Any]]:
        groups: dict[str, dict[str, Any]] = {}
        for cq in self.cqs.values():
            g = groups.setdefault(
                cq.class_name, {"cpuUsed": 0.0, "nominalQuota": 0, "first": cq.first_ms, "last": cq.last_ms, "count": 0}
            )
            g["cpuUsed"] += cq.cpu_used
            g["nominalQuota"] += cq.last.nominal_milli
            g["first"] = min(g["first"], cq.first_ms)
            g["last"] = max(g["last"], cq.last_ms)
            g["count"] += 1
        out: dict[str, dict[str, Any]] = {}
        for name, g in sorted(groups.items()):
            span = g["last"] - g["first"]
            used = int(g["cpuUsed"])
            usage = used * 100 / (g["nominalQuota"] * span) if span > 0 and g["nominalQuota"] else 0.0
            out[name] = {
                "count": g["count"],
                "cpuUsed": used,
                "cpuAverageUsage": int(used // span) if span > 0 else 0,
                "nominalQuota": g["nominalQuota"],
                "firstEventMs": int(g["first"]),
                "lastEventMs": int(g["last"]),
                "usagePercent": round(usage, 2),
            }
        return out

    def workload_classes(self) -> dict[str, dict[str, Any]]:
        groups: dict[str, list[_WL]] = {}
        for wl in self.workloads.values():
            groups.setdefault(wl.class_name, []).append(wl)
        out: dict[str, dict[str, Any]] = {}
        for name, wls in sorted(groups.items()):
            admitted = [w.time_to_admit_ms for w in wls if w.ever_admitted]
            count = len(wls)
            out[name] = {
                "count": count,
                "admitted": len(admitted),
                "finished": sum(1 for w in wls if w.finished),
                "totalEvictions": sum(w.evictions for w in wls),
                "averageTimeToAdmissionMs": int(sum(int(w.time_to_admit_ms) for w in wls) // count),
                "averageTimeToFinishMs": int(sum(int(w.time_to_finish_ms) for w in wls) // count),
                "p50TimeToAdmissionMs": int(percentile(admitted, 50)),
                "p99TimeToAdmissionMs": int(percentile(admitted, 99)),
            }
        return out
