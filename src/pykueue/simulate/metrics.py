"""The numbers a replay reports: waits, counts, utilisation and shares, per queue and class.

Owns the arithmetic, from a :class:`~pykueue.simulate.replay.Replay`:

* **wait**: first admission − submission, over the workloads ever admitted; p50/p90/p99 are
  nearest-rank percentiles, ``mean`` and ``max`` plain; seconds.
* **counts**: workloads, admitted (ever), never admitted (each with the engine's last pending
  reason and message), preempted (evictions), finished.
* **utilisation** of a ClusterQueue's flavor: admitted usage ÷ the CQ's nominal quota, integrated
  over the simulated span (first submission to the last finish); per resource, and per flavor the
  most used resource. Cluster-wide per flavor: all CQs' usage ÷ all CQs' nominal quota. Borrowing
  can take a CQ above 1.
* **utilisation** of a LocalQueue or priority class: what its workloads held of each flavor ÷ all
  ClusterQueues' nominal quota of it, time-averaged (so the groups of one kind add up to the
  cluster-wide figure).
* **share**: a CQ's dominant share of its cohort (max over resources of usage ÷ the cohort's summed
  nominal quota), time-averaged, against its weighted fair share (its ``fairSharing.weight`` ÷ the
  sum of its cohort's weights).

Who calls it: the CLI (``-o json`` and text), ``report``. Invariant: the output is a plain JSON
document with sorted keys and no wall-clock figures, so two runs print the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pykueue.api.meta.quantity import parse_quantity, to_amount
from pykueue.bench.scheduler.recorder import percentile
from pykueue.simulate.recorder import CQSeries, FlavorResource, WorkloadRecord
from pykueue.simulate.replay import Replay

__all__ = ["cohort_shares", "nominal_quotas", "summarize", "wait_stats"]


def _r(value: float) -> float:
    return round(value, 4)


def wait_stats(records: Iterable[WorkloadRecord]) -> dict[str, float]:
    waits = [(r.admitted_ms - r.submit_ms) / 1000 for r in records if r.admitted_ms is not None]
    if not waits:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0, "max": 0.0, "mean": 0.0}
    return {
        "p50": _r(percentile(waits, 50)),
        "p90": _r(percentile(waits, 90)),
        "p99": _r(percentile(waits, 99)),
        "max": _r(max(waits)),
        "mean": _r(sum(waits) / len(waits)),
    }


def _group(records: list[WorkloadRecord]) -> dict[str, Any]:
    return {
        "workloads": len(records),
        "admitted": sum(1 for r in records if r.admitted_ms is not None),
        "neverAdmitted": sum(1 for r in records if r.admitted_ms is None),
        "preempted": sum(r.evictions for r in records),
        "finished": sum(1 for r in records if r.finished_ms is not None),
        "waitSeconds": wait_stats(records),
    }


def nominal_quotas(cq: dict[str, Any]) -> dict[FlavorResource, int]:
    out: dict[FlavorResource, int] = {}
    for group in (cq.get("spec") or {}).get("resourceGroups") or ():
        for flavor in group.get("flavors") or ():
            for res in flavor.get("resources") or ():
                out[(flavor["name"], res["name"])] = to_amount(res["name"], res.get("nominalQuota", 0))
    return out


def _weight(cq: dict[str, Any]) -> float:
    raw = ((cq.get("spec") or {}).get("fairSharing") or {}).get("weight")
    return 1.0 if raw is None else float(parse_quantity(raw))


def _utilisation(
    series: CQSeries, nominal: dict[FlavorResource, int], span_ms: int
) -> tuple[dict[str, float], dict[str, dict]]:
    by_res: dict[str, dict[str, float]] = {}
    for (flavor, res), quota in sorted(nominal.items()):
        if quota <= 0 or span_ms <= 0:
            continue
        by_res.setdefault(flavor, {})[res] = _r(series.integral.get((flavor, res), 0.0) / (quota * span_ms))
    return {f: max(v.values()) for f, v in by_res.items()}, by_res


def cohort_shares(replay: Replay) -> dict[str, tuple[list[tuple[int, float]], float]]:
    """Per CQ: its dominant-share step series ``(ms, share)`` and its weighted fair share."""
    cqs = replay.configuration.of("ClusterQueue")
    cohort = {cq["metadata"]["name"]: (cq.get("spec") or {}).get("cohortName") or cq["metadata"]["name"] for cq in cqs}
    totals: dict[str, dict[str, int]] = {}
    weights: dict[str, float] = {}
    for cq in cqs:
        c = cohort[cq["metadata"]["name"]]
        for (_, res), amount in nominal_quotas(cq).items():
            totals.setdefault(c, {})[res] = totals.setdefault(c, {}).get(res, 0) + amount
        weights[c] = weights.get(c, 0.0) + _weight(cq)
    out: dict[str, tuple[list[tuple[int, float]], float]] = {}
    for cq in cqs:
        name = cq["metadata"]["name"]
        total = totals.get(cohort[name], {})
        series: list[tuple[int, float]] = [(0, 0.0)]
        for at_ms, usage in replay.recorder.cqs[name].points:
            per_res: dict[str, int] = {}
            for (_, res), amount in usage.items():
                per_res[res] = per_res.get(res, 0) + amount
            series.append((at_ms, max((a / total[r] for r, a in per_res.items() if total.get(r)), default=0.0)))
        fair = _weight(cq) / weights[cohort[name]] if weights[cohort[name]] else 0.0
        out[name] = (series, fair)
    return out


def _group_utilisation(
    members: list[WorkloadRecord], quota: dict[FlavorResource, int], span_ms: int
) -> dict[str, float]:
    """What a LocalQueue or priority class held of each flavor, as a fraction of all ClusterQueues' nominal
    quota, time-averaged (the flavor's most used resource)."""
    used: dict[FlavorResource, float] = {}
    for r in members:
        for fr, amount in r.used.items():
            used[fr] = used.get(fr, 0.0) + amount
    out: dict[str, float] = {}
    for (flavor, res), amount in sorted(used.items()):
        if quota.get((flavor, res), 0) > 0 and span_ms > 0:
            out[flavor] = max(out.get(flavor, 0.0), _r(amount / (quota[(flavor, res)] * span_ms)))
    return out


def _time_average(series: list[tuple[int, float]], end_ms: int) -> float:
    if end_ms <= 0:
        return 0.0
    total = 0.0
    for (t0, v), (t1, _) in zip(series, [*series[1:], (end_ms, 0.0)], strict=True):
        total += v * max(0, min(t1, end_ms) - t0)
    return total / end_ms


def summarize(replay: Replay) -> dict[str, Any]:
    records = sorted(replay.records.values(), key=lambda r: r.key)
    span = replay.simulated_ms - min((r.submit_ms for r in records), default=0)
    never = [r for r in records if r.admitted_ms is None]
    by_reason: dict[str, int] = {}
    for r in never:
        by_reason[r.reason or "NeverConsidered"] = by_reason.get(r.reason or "NeverConsidered", 0) + 1
    shares = cohort_shares(replay)
    cluster_queues: dict[str, Any] = {}
    flavor_used: dict[FlavorResource, float] = {}
    flavor_quota: dict[FlavorResource, int] = {}
    for cq in sorted(replay.configuration.of("ClusterQueue"), key=lambda o: o["metadata"]["name"]):
        name = cq["metadata"]["name"]
        nominal = nominal_quotas(cq)
        series = replay.recorder.cqs[name]
        util, by_res = _utilisation(series, nominal, span)
        for fr, quota in nominal.items():
            flavor_quota[fr] = flavor_quota.get(fr, 0) + quota
            flavor_used[fr] = flavor_used.get(fr, 0.0) + series.integral.get(fr, 0.0)
        share_series, fair = shares[name]
        entry = _group([r for r in records if r.cluster_queue == name])
        entry.update(
            {
                "utilisation": util,
                "utilisationByResource": by_res,
                "share": {"mean": _r(_time_average(share_series, replay.simulated_ms)), "fair": _r(fair)},
            }
        )
        cluster_queues[name] = entry
    flavors: dict[str, Any] = {}
    for (flavor, res), quota in sorted(flavor_quota.items()):
        if quota > 0 and span > 0:
            flavors.setdefault(flavor, {"byResource": {}})["byResource"][res] = _r(
                flavor_used.get((flavor, res), 0.0) / (quota * span)
            )
    for entry in flavors.values():
        entry["utilisation"] = max(entry["byResource"].values())

    def groups(key: str) -> dict[str, Any]:
        names = sorted({getattr(r, key) for r in records if getattr(r, key)})
        out: dict[str, Any] = {}
        for n in names:
            members = [r for r in records if getattr(r, key) == n]
            entry = _group(members)
            entry["utilisation"] = _group_utilisation(members, flavor_quota, span)
            out[n] = entry
        return out

    doc: dict[str, Any] = {
        "configuration": replay.configuration.name,
        "workloads": len(records),
        "admitted": len(records) - len(never),
        "neverAdmitted": len(never),
        "neverAdmittedReasons": {r.key: f"{r.reason or 'NeverConsidered'}: {r.message}".rstrip(": ") for r in never},
        "neverAdmittedByReason": dict(sorted(by_reason.items())),
        "preemptions": replay.preemptions,
        "finished": sum(1 for r in records if r.finished_ms is not None),
        "simulatedSeconds": _r(span / 1000),
        "waitSeconds": wait_stats(records),
        "clusterQueues": cluster_queues,
        "localQueues": groups("local_queue"),
        "priorityClasses": groups("priority_class"),
        "flavors": flavors,
    }
    if any(r.klass for r in records):
        doc["classes"] = groups("klass")
    if replay.latencies:
        doc["measuredLatencies"] = replay.latencies
    return doc
