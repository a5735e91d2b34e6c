"""The spread of a replay's outcomes over seeds: what ``simulate run --samples N --jitter S`` adds.

Owns :func:`spread`, which reduces the summaries (``metrics.summarize``) of one configuration
replayed with N jitter seeds to the mean, minimum and maximum of the figures a fidelity check
compares: the mean wait (overall, per priority class, per ClusterQueue), the preemptions and the
cluster-wide utilisation of each flavor.

Why: on a saturated configuration one replay is one sample of a chaotic process. A few trace
seconds' difference in when a creation is seen (``--jitter``), or the random uid that orders two
workloads stamped in the same second (``--timestamp-resolution``), decides which workload gets a freed slot, and that
decision changes every later one, so two runs that differ only in such timing can disagree by tens
of percent on a class's mean wait (docs/simulate.md, "Fidelity"). A real-time run is one more
sample of the same process; it is compared with the band, not with one replay.

Who calls it: the CLI. Invariant: plain JSON, sorted keys, rounded as ``metrics`` rounds; a figure
missing from some samples (a class none of whose workloads was admitted) is left out.
"""

from __future__ import annotations

from typing import Any

__all__ = ["spread"]


def _band(values: list[float]) -> dict[str, float]:
    return {
        "mean": round(sum(values) / len(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def _collect(docs: list[dict[str, Any]], *path: str) -> dict[str, float] | None:
    """The band of the number at ``path`` in every doc; None if some doc lacks it."""
    values = []
    for doc in docs:
        value: Any = doc
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        if not isinstance(value, int | float):
            return None
        values.append(float(value))
    return _band(values) if values else None


def _mean_waits(docs: list[dict[str, Any]], section: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted({n for d in docs for n in d.get(section, {})}):
        band = _collect(docs, section, name, "waitSeconds", "mean")
        if band is not None:
            out[name] = band
    return out


def spread(docs: list[dict[str, Any]], jitter_s: float, stamp_s: float = 0.0) -> dict[str, Any]:
    """Mean / min / max over ``docs`` (one summary per seed) of the figures a fidelity check uses."""
    out: dict[str, Any] = {"count": len(docs), "jitterSeconds": jitter_s, "timestampResolutionSeconds": stamp_s}
    overall = _collect(docs, "waitSeconds", "mean")
    if overall is not None:
        out["meanWaitSeconds"] = overall
    out["priorityClassMeanWaitSeconds"] = _mean_waits(docs, "priorityClasses")
    out["clusterQueueMeanWaitSeconds"] = _mean_waits(docs, "clusterQueues")
    preemptions = _collect(docs, "preemptions")
    if preemptions is not None:
        out["preemptions"] = preemptions
    flavors: dict[str, Any] = {}
    for name in sorted({f for d in docs for f in d.get("flavors", {})}):
        band = _collect(docs, "flavors", name, "utilisation")
        if band is not None:
            flavors[name] = band
    out["flavorUtilisation"] = flavors
    return out
