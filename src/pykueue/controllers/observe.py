"""What the controllers report about the decisions they wrote: Kueue's metrics and one log line each.

Owns the translation of a written admission, preemption or eviction into Kueue's counters and
histograms (:class:`~pykueue.metrics.KueueMetrics`) and into one readable log line (``admitted
default/job-a-1 in ClusterQueue cluster-queue (flavors cpu=default-flavor) after 2.1s``) whose
fields (workload, clusterQueue, flavors, reason, preemptor) also reach ``--log-format json`` as
keys. Called once per decision, after its write succeeded, never per cycle.

Who calls it: the scheduler loop (admissions, preemptions), the workload controller (admissions
that waited for checks, evictions).
"""

from __future__ import annotations

import logging

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.metrics import KueueMetrics

__all__ = ["admitted", "evicted", "preempted", "queued_since", "quota_reserved"]

log = logging.getLogger("pykueue.admission")


def _meta(obj: JSONDict) -> JSONDict:
    meta: JSONDict = obj.get("metadata") or {}
    return meta


def _spec(obj: JSONDict) -> JSONDict:
    spec: JSONDict = obj.get("spec") or {}
    return spec


def _condition(obj: JSONDict, ctype: str) -> JSONDict | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def queued_since(wl: JSONDict) -> float:
    """When the workload joined its queue: its last Requeued transition, else its creation (Kueue's)."""
    requeued = _condition(wl, "Requeued")
    stamp = (requeued or {}).get("lastTransitionTime") or _meta(wl).get("creationTimestamp")
    return parse_time(stamp) if stamp else 0.0


def _flavors(admission: JSONDict) -> str:
    names: list[str] = []
    for podset in admission.get("podSetAssignments") or ():
        for resource, flavor in sorted((podset.get("flavors") or {}).items()):
            entry = f"{resource}={flavor}"
            if entry not in names:
                names.append(entry)
    return ",".join(names)


def _ident(wl: JSONDict) -> tuple[str, str, str, str]:
    """(namespace, name, LocalQueue, priority class name: v1beta2's priorityClassRef, v1beta1's name)."""
    meta, spec = _meta(wl), _spec(wl)
    priority_class = (spec.get("priorityClassRef") or {}).get("name") or spec.get("priorityClassName") or ""
    return meta.get("namespace", ""), meta.get("name", ""), spec.get("queueName") or "", priority_class


def quota_reserved(
    metrics: KueueMetrics, written: JSONDict, cluster_queue: str, now: float, *, admitted_too: bool
) -> None:
    """Quota was reserved (and, without admission checks, the workload admitted in the same write)."""
    ns, name, queue, priority_class = _ident(written)
    waited = max(0.0, now - queued_since(written))
    metrics.quota_reserved_workload(cluster_queue, ns, queue, priority_class, waited)
    if admitted_too:
        metrics.admitted_workload(cluster_queue, ns, queue, priority_class, waited, 0.0)
    if log.isEnabledFor(logging.INFO):
        flavors = _flavors((written.get("status") or {}).get("admission") or {})
        what = "admitted" if admitted_too else "quota reserved for"
        log.info(
            "%s %s/%s in ClusterQueue %s (flavors %s) after %.1fs",
            what,
            ns,
            name,
            cluster_queue,
            flavors or "none",
            waited,
            extra={
                "workload": f"{ns}/{name}",
                "clusterQueue": cluster_queue,
                "flavors": flavors,
                "waitSeconds": round(waited, 3),
                "event": "Admitted" if admitted_too else "QuotaReserved",
            },
        )


def admitted(metrics: KueueMetrics, written: JSONDict, cluster_queue: str, now: float) -> None:
    """Admitted after its admission checks passed (quota was reserved earlier)."""
    ns, name, queue, priority_class = _ident(written)
    waited = max(0.0, now - queued_since(written))
    reserved = _condition(written, "QuotaReserved")
    reserved_at = parse_time(reserved["lastTransitionTime"]) if reserved and reserved.get("lastTransitionTime") else now
    metrics.admitted_workload(cluster_queue, ns, queue, priority_class, waited, max(0.0, now - reserved_at))
    log.info(
        "admitted %s/%s in ClusterQueue %s after its admission checks",
        ns,
        name,
        cluster_queue,
        extra={"workload": f"{ns}/{name}", "clusterQueue": cluster_queue, "event": "Admitted"},
    )


def preempted(metrics: KueueMetrics, written: JSONDict, preemptor: str, preemptor_cq: str, reason: str) -> None:
    """A preemption was written (its eviction is counted by :func:`evicted`)."""
    ns, name, _, _ = _ident(written)
    victim_cq = ((written.get("status") or {}).get("admission") or {}).get("clusterQueue") or ""
    metrics.preempted_workload(preemptor_cq or victim_cq, reason)
    log.info(
        "preempted %s/%s in ClusterQueue %s to admit %s (ClusterQueue %s, %s)",
        ns,
        name,
        victim_cq,
        preemptor,
        preemptor_cq or victim_cq,
        reason,
        extra={
            "workload": f"{ns}/{name}",
            "clusterQueue": victim_cq,
            "preemptor": preemptor,
            "preemptorClusterQueue": preemptor_cq or victim_cq,
            "reason": reason,
            "event": "Preempted",
        },
    )


def evicted(metrics: KueueMetrics, written: JSONDict, reason: str, cause: str, message: str) -> None:
    """An eviction (Evicted=True) was written; counted against the ClusterQueue holding its quota."""
    ns, name, queue, priority_class = _ident(written)
    status = written.get("status") or {}
    cluster_queue = (status.get("admission") or {}).get("clusterQueue") or ""
    count = 0
    for entry in (status.get("schedulingStats") or {}).get("evictions") or ():
        if entry.get("reason") == reason and (entry.get("underlyingCause") or "") == cause:
            count = int(entry.get("count") or 0)
    if cluster_queue:
        metrics.evicted_workload(cluster_queue, ns, queue, reason, cause, priority_class, first=count == 1)
    log.info(
        "evicted %s/%s from ClusterQueue %s: %s%s (%s)",
        ns,
        name,
        cluster_queue or "-",
        reason,
        f"/{cause}" if cause else "",
        message,
        extra={
            "workload": f"{ns}/{name}",
            "clusterQueue": cluster_queue,
            "reason": reason,
            "underlyingCause": cause,
            "event": "Evicted",
        },
    )
