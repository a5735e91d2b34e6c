"""Time series of a replay for plots and CSV: utilisation per flavor, queue length, share per ClusterQueue.

Owns merging the per-ClusterQueue change points the recorder keeps into cluster-wide step series
(``(seconds, value)`` pairs, a value holding until the next point), and the choice of a readable
time unit. Pure functions of a :class:`~pykueue.simulate.replay.Replay`.

Who calls it: ``plots`` and ``report`` (``utilisation.csv``). Invariant: every series starts at
time 0 and is sorted by time; equal times keep the last value only.
"""

from __future__ import annotations

import heapq

from pykueue.simulate.metrics import cohort_shares, nominal_quotas
from pykueue.simulate.recorder import FlavorResource
from pykueue.simulate.replay import Replay

__all__ = ["Series", "flavor_utilisation", "main_resource", "queue_lengths", "shares", "time_unit"]

Series = list[tuple[float, float]]


def _dedupe(points: Series) -> Series:
    out: Series = []
    for t, v in points:
        if out and out[-1][0] == t:
            out[-1] = (t, v)
        else:
            out.append((t, v))
    return out


def main_resource(quotas: dict[FlavorResource, int], flavor: str) -> str:
    """The resource a flavor's utilisation is drawn for: a non-cpu/memory one if any, else cpu."""
    resources = sorted(r for f, r in quotas if f == flavor)
    special = [r for r in resources if r not in ("cpu", "memory")]
    if special:
        return special[0]
    return "cpu" if "cpu" in resources else resources[0]


def flavor_utilisation(replay: Replay) -> dict[str, Series]:
    """Per flavor: all ClusterQueues' usage of its main resource ÷ their summed nominal quota."""
    quotas: dict[FlavorResource, int] = {}
    for cq in replay.configuration.of("ClusterQueue"):
        for fr, amount in nominal_quotas(cq).items():
            quotas[fr] = quotas.get(fr, 0) + amount
    flavors = sorted({f for f, _ in quotas})
    keys = {f: (f, main_resource(quotas, f)) for f in flavors}
    streams = [[(t, name, usage) for t, usage in series.points] for name, series in replay.recorder.cqs.items()]
    current: dict[str, dict[FlavorResource, int]] = {}
    out: dict[str, Series] = {f: [(0.0, 0.0)] for f in flavors if quotas[keys[f]] > 0}
    for t, name, usage in heapq.merge(*streams, key=lambda p: (p[0], p[1])):
        current[name] = usage
        for f in out:
            used = sum(u.get(keys[f], 0) for u in current.values())
            out[f].append((t / 1000, used / quotas[keys[f]]))
    return {f: _dedupe(s) for f, s in out.items()}


def queue_lengths(replay: Replay) -> dict[str, Series]:
    return {
        name: _dedupe([(0.0, 0.0), *((t / 1000, float(n)) for t, n in series.pending_points)])
        for name, series in sorted(replay.recorder.cqs.items())
    }


def shares(replay: Replay) -> dict[str, tuple[Series, float]]:
    return {
        name: (_dedupe([(t / 1000, v) for t, v in series]), fair)
        for name, (series, fair) in sorted(cohort_shares(replay).items())
    }


def time_unit(span_s: float) -> tuple[str, float]:
    """A label and divisor that keep the axis readable."""
    if span_s >= 3 * 86400:
        return "days", 86400.0
    if span_s >= 3 * 3600:
        return "hours", 3600.0
    if span_s >= 180:
        return "minutes", 60.0
    return "seconds", 1.0
