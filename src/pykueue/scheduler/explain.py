"""``explain``: why a workload waits, how it got in, or who pushed it out — from the engine itself.

Pure (no I/O): the caller reads the objects from a cluster and calls :func:`load_engine` then
:func:`explain_workload`. The answer is computed with the production code — the engine's queues
(position, StrictFIFO head), its quota tree (``available``/``potential_available`` per flavor and
resource, the numbers Kueue's messages quote), the flavor assigner's eligibility and the preemptor's
target search — and only *attributes* those numbers (own nominal quota, the cohort, a borrowing or a
peer's lending limit, the admitted workloads that hold the quota). Nothing here models admission a
second time.

The result is a JSON-ready dict (``-o json``) whose ``sentences`` are the plain-language answer;
``flavors`` holds the per-flavor numbers (integer amounts: cpu in milli-cpu, memory in bytes, with
``*_text`` quantities for people).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pykueue.api.meta.clock import ManualClock, parse_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import format_amount

from .engine import Scheduler
from .explain_pending import pending_analysis
from .state.clusterqueue import ClusterQueue
from .state.workload_info import PENDING, WorkloadInfo
from .types import InvalidObject, SchedulerConfig

__all__ = ["explain_workload", "load_engine"]

UID_MARK = "(UID: "
POLICY_OF_REASON = {
    "InClusterQueue": "withinClusterQueue",
    "InCohortReclamation": "reclaimWithinCohort",
    "InCohortReclaimWhileBorrowing": "borrowWithinCohort",
    "InCohortFairSharing": "fair sharing",
}
_ORDER = ("Namespace", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue")


def load_engine(
    objects: Iterable[Mapping[str, Any]], now: float, config: SchedulerConfig | None = None
) -> tuple[Scheduler, list[str]]:
    """A scheduler engine fed ``objects`` (any order) as the cluster holds them now; returns it and
    the objects it refused (malformed), which the caller may report."""
    s = Scheduler(config or SchedulerConfig(), clock=ManualClock(now))
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        by_kind.setdefault(str(obj.get("kind")), []).append(obj)
    workloads = by_kind.get("Workload", [])
    # holders first, so that a pending workload is queued against the usage it competes with
    workloads = sorted(workloads, key=lambda w: 0 if (w.get("status") or {}).get("admission") else 1)
    refused: list[str] = []
    for kind in (*_ORDER, "Workload"):
        for obj in workloads if kind == "Workload" else by_kind.get(kind, []):
            meta = obj.get("metadata") or {}
            try:
                if kind == "Namespace":
                    s.upsert_namespace(obj)
                elif kind == "ResourceFlavor":
                    s.upsert_resource_flavor(obj)
                elif kind == "Cohort":
                    s.upsert_cohort(obj)
                elif kind == "ClusterQueue":
                    s.upsert_cluster_queue(obj)
                elif kind == "LocalQueue":
                    s.upsert_local_queue(obj)
                else:
                    s.upsert_workload(obj)
            except InvalidObject:
                refused.append(f"{kind} {meta.get('namespace', '')}/{meta.get('name', '')}".replace(" /", " "))
    s.cache.ensure_fresh()
    return s, refused


def _q(res: str, amount: int) -> str:
    return format_amount(res, amount)


def _cond(obj: Mapping[str, Any], kind: str) -> JSONDict | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def _true(obj: Mapping[str, Any], kind: str) -> bool:
    cond = _cond(obj, kind)
    return cond is not None and cond.get("status") == "True"


def _uid_in(message: str) -> str:
    start = message.find(UID_MARK)
    if start < 0:
        return ""
    rest = message[start + len(UID_MARK) :]
    return rest.split(",")[0].split(")")[0].strip()


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m{seconds % 60}s" if seconds % 60 else f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60}m"


def explain_workload(s: Scheduler, objects: Iterable[Mapping[str, Any]], namespace: str, name: str) -> JSONDict:
    """Explain ``namespace/name``; ``objects`` are the workloads as read (for names behind UIDs and
    for conditions). Raises KeyError if there is no such workload."""
    by_key: dict[tuple[str, str], Mapping[str, Any]] = {}
    by_uid: dict[str, Mapping[str, Any]] = {}
    for item in objects:
        if item.get("kind") != "Workload":
            continue
        meta = item.get("metadata") or {}
        by_key[(meta.get("namespace") or "default", meta.get("name", ""))] = item
        if meta.get("uid"):
            by_uid[str(meta["uid"])] = item
    found = by_key.get((namespace, name))
    if found is None:
        raise KeyError(f"{namespace}/{name}")
    obj = found
    out: JSONDict = {"workload": {"namespace": namespace, "name": name}, "sentences": []}
    if _true(obj, "Finished"):
        out["state"] = "finished"
        cond = _cond(obj, "Finished") or {}
        out["sentences"].append(f"Finished ({cond.get('reason', '')}): {cond.get('message', '')}".rstrip(": "))
        return out
    evicted = _eviction(s, obj, by_uid)
    if evicted:
        out["eviction"] = evicted
    if _true(obj, "QuotaReserved") and (obj.get("status") or {}).get("admission"):
        out["state"] = "admitted" if _true(obj, "Admitted") else "quotaReserved"
        _admitted(s, obj, out)
        if evicted:
            out["sentences"].extend(evicted["sentences"])
        return out
    out["state"] = "pending"
    if evicted:
        out["sentences"].extend(evicted["sentences"])
    _pending(s, obj, by_uid, out)
    return out


# ---------------------------------------------------------------------- admitted


def _admitted(s: Scheduler, obj: Mapping[str, Any], out: JSONDict) -> None:
    status = obj.get("status") or {}
    admission = status.get("admission") or {}
    cq_name = str(admission.get("clusterQueue", ""))
    cq = s.cache.cqs.get(cq_name)
    flavors: list[str] = []
    for psa in admission.get("podSetAssignments") or []:
        parts = [f"{res} in {flavor}" for res, flavor in sorted((psa.get("flavors") or {}).items())]
        usage = ", ".join(f"{q} {r}" for r, q in sorted((psa.get("resourceUsage") or {}).items()))
        flavors.append(
            f"pod set {psa.get('name')} ({psa.get('count', '?')} pods): {', '.join(parts)}"
            + (f", using {usage}" if usage else "")
        )
    out["admission"] = {"clusterQueue": cq_name, "podSets": admission.get("podSetAssignments") or []}
    verb = "Admitted" if out["state"] == "admitted" else "Holds quota (admission checks pending)"
    sentences = out["sentences"]
    sentences.append(f"{verb} by ClusterQueue {cq_name}: " + "; ".join(flavors) + ".")
    key = ((obj.get("metadata") or {}).get("namespace") or "default", (obj.get("metadata") or {}).get("name", ""))
    wl = cq.workloads.get(key) if cq is not None else None
    if cq is not None and wl is not None:
        borrowed = []
        for fr, amount in sorted(wl.usage.items()):
            over = cq.usage.get(fr, 0) - cq.nominal(fr)
            if over > 0 and amount > 0:
                borrowed.append(f"{_q(fr[1], min(over, amount))} {fr[1]} of flavor {fr[0]}")
        out["admission"]["borrowing"] = bool(borrowed)
        if borrowed:
            cohort = cq.parent.name if cq.parent is not None else ""
            sentences.append(
                f"ClusterQueue {cq_name} is over its nominal quota: borrowing "
                + ", ".join(borrowed)
                + (f" from cohort {cohort}." if cohort else ".")
            )
        else:
            sentences.append(f"No borrowing: ClusterQueue {cq_name} is within its nominal quota.")
    reserved = _cond(obj, "QuotaReserved") or {}
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    when = reserved.get("lastTransitionTime")
    if when and created:
        waited = parse_time(when) - parse_time(created)
        out["admission"]["at"] = when
        out["admission"]["waitedSeconds"] = int(waited)
        sentences.append(f"Quota reserved at {when}, after waiting {_duration(waited)}.")


# ---------------------------------------------------------------------- evicted / preempted


def _eviction(s: Scheduler, obj: Mapping[str, Any], by_uid: Mapping[str, Mapping[str, Any]]) -> JSONDict | None:
    evicted = _cond(obj, "Evicted")
    preempted = _cond(obj, "Preempted")
    if not (evicted and evicted.get("status") == "True") and not (preempted and preempted.get("status") == "True"):
        return None
    out: JSONDict = {"reason": (evicted or {}).get("reason", ""), "message": (evicted or {}).get("message", "")}
    sentences: list[str] = []
    if preempted is not None and preempted.get("status") == "True":
        reason = str(preempted.get("reason", ""))
        message = str(preempted.get("message", ""))
        uid = _uid_in(message)
        by = by_uid.get(uid)
        by_name = (
            f"{(by.get('metadata') or {}).get('namespace')}/{(by.get('metadata') or {}).get('name')}"
            if by is not None
            else (f"a workload with UID {uid} (gone now)" if uid else "another workload")
        )
        policy = POLICY_OF_REASON.get(reason, reason)
        by_cq = ""
        if by is not None:
            lq = s.queues.local_queues.get(
                ((by.get("metadata") or {}).get("namespace") or "default", (by.get("spec") or {}).get("queueName", ""))
            )
            by_cq = ((by.get("status") or {}).get("admission") or {}).get("clusterQueue") or (lq.cq_name if lq else "")
        setting = _policy_value(s.cache.cqs.get(by_cq), policy) if by_cq else ""
        out.update({"preemptedBy": by_name, "preemptionReason": reason, "policy": policy})
        sentences.append(
            f"Preempted by {by_name}"
            + (f" (ClusterQueue {by_cq})" if by_cq else "")
            + f", reason {reason}, under the {policy} policy"
            + (f" ({setting})" if setting else "")
            + "."
        )
    elif evicted is not None:
        sentences.append(f"Evicted ({evicted.get('reason', '')}): {evicted.get('message', '')}")
    out["sentences"] = sentences
    return out


def _policy_value(cq: ClusterQueue | None, policy: str) -> str:
    if cq is None:
        return ""
    value = {
        "withinClusterQueue": cq.within_cluster_queue,
        "reclaimWithinCohort": cq.reclaim_within_cohort,
        "borrowWithinCohort": cq.borrow_within_cohort,
    }.get(policy, "")
    return f"{policy}: {value}" if value else ""


# ---------------------------------------------------------------------- pending


def _pending(s: Scheduler, obj: Mapping[str, Any], by_uid: Mapping[str, Mapping[str, Any]], out: JSONDict) -> None:
    meta = obj.get("metadata") or {}
    key = (meta.get("namespace") or "default", meta.get("name", ""))
    wl: WorkloadInfo | None = s.workloads.get(key)
    sentences: list[str] = out["sentences"]
    spec = obj.get("spec") or {}
    if spec.get("active") is False:
        sentences.append(
            "Stopped: spec.active is false, so it is not queued (resume it with `kubectl kueue resume workload`)."
        )
        return
    lq = s.queues.local_queues.get((key[0], str(spec.get("queueName", ""))))
    if lq is None:
        sentences.append(f"LocalQueue {spec.get('queueName', '')} does not exist in namespace {key[0]}.")
        return
    if lq.stop_policy != "None":
        sentences.append(f"LocalQueue {lq.name} is stopped (stopPolicy {lq.stop_policy}).")
        return
    cq = s.cache.cqs.get(lq.cq_name)
    if cq is None:
        sentences.append(f"ClusterQueue {lq.cq_name} (of LocalQueue {lq.name}) does not exist.")
        return
    active, reason, message = s.cache.cq_status(cq)
    if not active:
        out["clusterQueue"] = {"name": cq.name, "active": False, "reason": reason}
        sentences.append(f"ClusterQueue {cq.name} is inactive ({reason}): {message}")
        return
    if wl is None or wl.state != PENDING:
        sentences.append("Not queued: " + ("gated or inactive." if wl is not None else "the engine refused it."))
        return
    if not s.cache.namespace_matches(cq, wl.namespace):
        sentences.append(f"Namespace {wl.namespace} does not match the namespaceSelector of ClusterQueue {cq.name}.")
        return
    pending_analysis(s, wl, cq, obj, by_uid, out)
