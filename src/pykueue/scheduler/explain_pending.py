"""The pending half of ``explain``: position, StrictFIFO head, victims still leaving, each flavor's
numbers, who holds the quota, what preemption could do, and the smallest change that admits it.

Pure; called by :mod:`.explain` for a workload queued in an active ClusterQueue. The verdict is the
flavor assigner's and the preemptor's (the same calls a scheduling cycle makes); the per-flavor
numbers are the quota tree's (``available``, ``potential_available``), broken down into the
ClusterQueue's own unused quota, what the cohort can lend, and the limits that cap it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import format_amount

from .algorithm.flavor_assigner import FlavorAssigner, Mode
from .engine import Scheduler
from .state.clusterqueue import LOWER_PRIORITY, NEVER, STRICT_FIFO, ClusterQueue
from .state.cohort_tree import CohortNode
from .state.resource_amounts import FlavorResource
from .state.workload_info import WorkloadInfo

__all__ = ["pending_analysis"]

HOLDERS_SHOWN = 5


def _q(res: str, amount: int) -> str:
    return format_amount(res, amount)


def _name(wl: WorkloadInfo) -> str:
    return f"{wl.namespace}/{wl.name}"


def _peers(cq: ClusterQueue) -> list[ClusterQueue]:
    """The other ClusterQueues of the cohort tree ``cq`` belongs to."""
    root = cq.root()
    out: list[ClusterQueue] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, CohortNode):
            stack.extend(node.children())
        elif isinstance(node, ClusterQueue) and node is not cq:
            out.append(node)
    return out


def _holders(cq: ClusterQueue, fr: FlavorResource) -> list[JSONDict]:
    """Admitted workloads holding ``fr`` in ``cq`` and, if in a cohort, in peers beyond their nominal quota."""
    found: list[tuple[int, WorkloadInfo, ClusterQueue]] = []
    for holder in cq.workloads.values():
        if holder.usage.get(fr, 0) > 0:
            found.append((holder.usage[fr], holder, cq))
    if cq.parent is not None:
        for peer in _peers(cq):
            if peer.usage.get(fr, 0) > peer.nominal(fr):
                found.extend((h.usage[fr], h, peer) for h in peer.workloads.values() if h.usage.get(fr, 0) > 0)
    found.sort(key=lambda item: (-item[0], item[1].namespace, item[1].name))
    return [
        {
            "workload": _name(h),
            "clusterQueue": c.name,
            "amount": amount,
            "amountText": _q(fr[1], amount),
            "priority": h.priority,
            "borrowing": c is not cq,
        }
        for amount, h, c in found
    ]


def _flavor_numbers(cq: ClusterQueue, fr: FlavorResource, request: int) -> JSONDict:
    res = fr[1]
    q = cq.quotas.get(fr)
    nominal = q.nominal if q is not None else 0
    used = cq.usage.get(fr, 0)
    available = cq.available(fr)
    capacity = cq.potential_available(fr)
    own_free = max(0, nominal - used)
    entry: JSONDict = {
        "resource": res,
        "requested": request,
        "used": used,
        "nominal": nominal,
        "available": available,
        "borrowableFromCohort": max(0, available - own_free),
        "maximumCapacity": capacity,
        "fits": request <= available,
    }
    if q is not None and q.borrowing_limit is not None:
        entry["borrowingLimit"] = q.borrowing_limit
    if q is not None and q.lending_limit is not None:
        entry["lendingLimit"] = q.lending_limit
    limits: list[str] = []
    if request > capacity:
        limits.append("maximumCapacity")
    if q is not None and q.borrowing_limit is not None and used + request > nominal + q.borrowing_limit:
        limits.append("borrowingLimit")
    if request > available and cq.parent is not None:
        for peer in _peers(cq):
            pq = peer.quotas.get(fr)
            if pq is None or pq.lending_limit is None:
                continue
            withheld = max(0, pq.nominal - pq.lending_limit - peer.usage.get(fr, 0))
            if withheld > 0:
                limits.append("lendingLimit")
                entry.setdefault("peerLendingLimits", []).append(
                    {
                        "clusterQueue": peer.name,
                        "lendingLimit": pq.lending_limit,
                        "nominal": pq.nominal,
                        "withheld": withheld,
                    }
                )
    entry["limitedBy"] = limits
    entry["missing"] = max(0, request - available)
    for key in ("requested", "used", "nominal", "available", "borrowableFromCohort", "maximumCapacity", "missing"):
        entry[key + "Text"] = _q(res, entry[key])
    return entry


def _flavor_sentence(cq: ClusterQueue, flavor: str, entry: JSONDict) -> str:
    res = entry["resource"]
    t = {
        k: entry[k + "Text"]
        for k in ("requested", "used", "nominal", "available", "borrowableFromCohort", "maximumCapacity", "missing")
    }
    head = (
        f"Flavor {flavor}, {res}: requests {t['requested']}; ClusterQueue {cq.name} uses {t['used']} of "
        f"nominal {t['nominal']}"
    )
    if cq.parent is not None:
        head += f", the cohort can lend {t['borrowableFromCohort']}"
    head += f"; {t['available']} available"
    if entry["fits"]:
        return head + " — fits."
    why = [f"{t['missing']} short"]
    if "maximumCapacity" in entry["limitedBy"]:
        why.append(f"more than the {t['maximumCapacity']} it could ever get here")
    if "borrowingLimit" in entry["limitedBy"]:
        why.append(f"limited by its borrowingLimit {_q(res, entry['borrowingLimit'])}")
    for peer in entry.get("peerLendingLimits", []):
        why.append(
            f"ClusterQueue {peer['clusterQueue']} lends at most {_q(res, peer['lendingLimit'])} of its "
            f"nominal {_q(res, peer['nominal'])} (lendingLimit), keeping {_q(res, peer['withheld'])} unused"
        )
    return head + " — " + ", ".join(why) + "."


def _podset_requests(wl: WorkloadInfo, cq: ClusterQueue) -> list[tuple[str, dict[str, int]]]:
    out = []
    for ps in wl.podsets:
        count = ps.effective_count
        requests = {r: v * count for r, v in ps.per_pod.items() if v}
        if "pods" in cq.rg_by_resource:
            requests["pods"] = count
        out.append((ps.name, requests))
    return out


def _flavors(s: Scheduler, wl: WorkloadInfo, cq: ClusterQueue, out: JSONDict) -> list[JSONDict]:
    assigner = FlavorAssigner(wl, cq, s.cache.flavors, None, eligibility={})
    tried: list[JSONDict] = []
    for index, (ps_name, requests) in enumerate(_podset_requests(wl, cq)):
        ps = wl.podsets[index]
        groups = []
        for res in sorted(requests):
            group = cq.rg_by_resource.get(res)
            if group is None:
                tried.append(
                    {
                        "podSet": ps_name,
                        "flavor": "",
                        "eligible": False,
                        "reason": f"resource {res} is not covered by ClusterQueue {cq.name}",
                    }
                )
                out["sentences"].append(f"ClusterQueue {cq.name} has no quota for {res} at all.")
            elif group not in groups:
                groups.append(group)
        for group in groups:
            for flavor in group.flavors:
                blocked = assigner.ineligibility(ps, flavor)
                entry: JSONDict = {"podSet": ps_name, "flavor": flavor, "eligible": blocked is None}
                if blocked is not None:
                    entry["reason"] = blocked
                    out["sentences"].append(f"Flavor {flavor} cannot host pod set {ps_name}: {blocked}.")
                else:
                    entry["resources"] = [
                        _flavor_numbers(cq, (flavor, r), requests[r]) for r in sorted(requests) if r in group.covered
                    ]
                    for numbers in entry["resources"]:
                        out["sentences"].append(_flavor_sentence(cq, flavor, numbers))
                tried.append(entry)
    return tried


def _victims_leaving(s: Scheduler, wl: WorkloadInfo, by_uid: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Workloads preempted for ``wl`` that still hold their quota."""
    out = []
    for held in s.cache.reserved.values():
        for cond in (held.obj.get("status") or {}).get("conditions") or []:
            if (
                cond.get("type") in ("Preempted", "Evicted")
                and cond.get("status") == "True"
                and f"(UID: {wl.uid}" in str(cond.get("message", ""))
            ):
                out.append(_name(held))
                break
    return sorted(out)


def _preemption(s: Scheduler, wl: WorkloadInfo, cq: ClusterQueue, out: JSONDict, holders: list[JSONDict]) -> None:
    """The engine's verdict (flavor assigner + preemptor) and, when preemption cannot help, the policy."""
    cfg = s.config
    assigner = FlavorAssigner(
        wl,
        cq,
        s.cache.flavors,
        s.preemptor.oracle,
        fungibility=cfg.flavor_fungibility,
        fair_sharing=cfg.fair_sharing is not None,
        ignore_undeclared=cfg.ignore_undeclared_resources,
        eligibility={},
    )
    assignment = assigner.assign()
    verdict: JSONDict = {"mode": assignment.mode.name, "message": assignment.message()}
    out["engine"] = verdict
    sentences: list[str] = out["sentences"]
    if assignment.mode == Mode.FIT:
        if out.get("blockedBy"):
            sentences.append(
                "Its quota is free, but under StrictFIFO nothing behind the head is admitted before the head."
            )
        else:
            sentences.append(
                "It fits now: the next scheduling cycle admits it unless a workload ahead of it takes the quota first."
            )
        return
    targets = []
    if assignment.mode == Mode.PREEMPT and s.preemptor.may_preempt(cq):
        ctx = s.preemptor.context(wl, cq, assignment.usage, assignment.preempt_frs())
        targets = s.preemptor.targets(ctx)
    if targets:
        verdict["preemptionTargets"] = [{"workload": _name(t.wl), "reason": t.reason} for t in targets]
        sentences.append(
            "Preemption can make room: evicting " + ", ".join(f"{_name(t.wl)} ({t.reason})" for t in targets) + "."
        )
        return
    verdict["preemptionPossible"] = False
    reasons: list[str] = []
    own = [h for h in holders if not h["borrowing"]]
    lent = [h for h in holders if h["borrowing"]]
    if own:
        names = ", ".join(h["workload"] for h in own[:HOLDERS_SHOWN])
        if cq.within_cluster_queue == NEVER:
            reasons.append(f"withinClusterQueue is Never, so it may not preempt {names} in ClusterQueue {cq.name}")
        elif all(h["priority"] >= wl.priority for h in own):
            reasons.append(
                f"withinClusterQueue is {cq.within_cluster_queue} and no workload holding the quota in ClusterQueue "
                f"{cq.name} ({names}) has a priority below its own ({wl.priority})"
            )
    if lent:
        names = ", ".join(f"{h['workload']} (ClusterQueue {h['clusterQueue']})" for h in lent[:HOLDERS_SHOWN])
        if cq.reclaim_within_cohort == NEVER:
            reasons.append(f"reclaimWithinCohort is Never, so it may not reclaim the quota borrowed by {names}")
        elif cq.reclaim_within_cohort == LOWER_PRIORITY and all(h["priority"] >= wl.priority for h in lent):
            reasons.append(
                f"reclaimWithinCohort is LowerPriority and the borrowers ({names}) do not have a "
                f"lower priority than {wl.priority}"
            )
    if not own and not lent:
        reasons.append("no admitted workload holds the quota it lacks")
    if not reasons:
        allowed = [h["workload"] for h in holders if h["priority"] < wl.priority]
        reasons.append(
            "evicting every workload its preemption policies allow ("
            + (", ".join(allowed[:HOLDERS_SHOWN]) or "none")
            + ") would still not free enough"
        )
    verdict["forbiddenBy"] = reasons
    sentences.append("Preemption cannot help: " + "; ".join(reasons) + ".")


def _smallest_change(cq: ClusterQueue, tried: list[JSONDict]) -> str:
    eligible = [t for t in tried if t.get("eligible")]
    if not eligible:
        blocked = "; ".join(str(t.get("reason")) for t in tried if t.get("reason"))
        return (
            f"No flavor of ClusterQueue {cq.name} can host it ({blocked}): it is admitted only once a flavor "
            "it can use gets quota, or once it tolerates what blocks it."
        )
    best = min(eligible, key=lambda t: sum(r["missing"] for r in t["resources"]) or 0)
    short = [r for r in best["resources"] if r["missing"] > 0]
    flavor = best["flavor"]
    if not short:
        return ""
    parts = []
    for r in short:
        if "maximumCapacity" in r["limitedBy"]:
            parts.append(
                f"it can never get {r['requestedText']} {r['resource']} of flavor {flavor} here (at most "
                f"{r['maximumCapacity' + 'Text']}): raise the quota by "
                f"{format_amount(r['resource'], r['requested'] - r['maximumCapacity'])}"
            )
        elif "borrowingLimit" in r["limitedBy"]:
            parts.append(
                f"admitted when {r['missingText']} {r['resource']} are freed in ClusterQueue {cq.name} or "
                f"its borrowingLimit for {r['resource']} in flavor {flavor} is raised by {r['missingText']}"
            )
        elif cq.parent is not None:
            extra = ""
            for peer in r.get("peerLendingLimits", []):
                extra = (
                    f" (or ClusterQueue {peer['clusterQueue']} lends more: its lendingLimit keeps "
                    f"{format_amount(r['resource'], peer['withheld'])} unused)"
                )
            parts.append(
                f"admitted when {r['missingText']} {r['resource']} are freed in cohort {cq.parent.name}" + extra
            )
        else:
            parts.append(f"admitted when {r['missingText']} {r['resource']} are freed in ClusterQueue {cq.name}")
    return "Smallest change: " + "; and ".join(parts) + f" (flavor {flavor})."


def pending_analysis(
    s: Scheduler,
    wl: WorkloadInfo,
    cq: ClusterQueue,
    obj: Mapping[str, Any],
    by_uid: Mapping[str, Mapping[str, Any]],
    out: JSONDict,
) -> None:
    sentences: list[str] = out["sentences"]
    listing = s.pending_workloads(cq.name)
    me = next((p for p in listing if (p.namespace, p.name) == wl.key), None)
    if me is not None:
        out["position"] = {
            "inClusterQueue": me.position_in_cluster_queue,
            "inLocalQueue": me.position_in_local_queue,
            "clusterQueue": cq.name,
            "localQueue": wl.queue_name,
        }
        sentences.append(
            f"Pending in ClusterQueue {cq.name} ({cq.strategy}) at position {me.position_in_cluster_queue}"
            f" (position {me.position_in_local_queue} in LocalQueue {wl.queue_name}), priority "
            f"{wl.priority}."
        )
        if cq.strategy == STRICT_FIFO and me.position_in_cluster_queue > 0:
            head = listing[0]
            out["blockedBy"] = {"workload": f"{head.namespace}/{head.name}", "priority": head.priority}
            sentences.append(
                f"ClusterQueue {cq.name} is StrictFIFO: it waits behind the head {head.namespace}/"
                f"{head.name} (priority {head.priority}), which must be admitted first."
            )
    victims = _victims_leaving(s, wl, by_uid)
    if victims:
        out["waitingFor"] = victims
        sentences.append(
            "Waiting for the workloads preempted to make room for it to release their quota: "
            + ", ".join(victims)
            + "."
        )
    tried = _flavors(s, wl, cq, out)
    out["flavors"] = tried
    short_frs = [
        (t["flavor"], r["resource"]) for t in tried if t.get("eligible") for r in t["resources"] if not r["fits"]
    ]
    holders: list[JSONDict] = []
    seen: set[str] = set()
    for fr in short_frs:
        for h in _holders(cq, fr):
            if h["workload"] not in seen:
                seen.add(h["workload"])
                holders.append(h)
    out["holders"] = holders
    if holders:
        sentences.append(
            "The quota it needs is held by "
            + ", ".join(
                f"{h['workload']} ({h['amountText']} in ClusterQueue {h['clusterQueue']}, priority {h['priority']})"
                for h in holders[:HOLDERS_SHOWN]
            )
            + (" and others." if len(holders) > HOLDERS_SHOWN else ".")
        )
    if victims:
        return
    if not any(t.get("eligible") for t in tried):
        out["engine"] = {"mode": Mode.NO_FIT.name, "preemptionPossible": False}
    elif any("maximumCapacity" in r["limitedBy"] for t in tried if t.get("eligible") for r in t["resources"]):
        out["engine"] = {"mode": Mode.NO_FIT.name, "preemptionPossible": False}
        sentences.append(
            "Preemption cannot help: it asks for more than ClusterQueue "
            f"{cq.name} can ever provide, even with nothing else running."
        )
    else:
        _preemption(s, wl, cq, out, holders)
    change = _smallest_change(cq, tried)
    if change and not out["engine"].get("preemptionTargets") and out["engine"]["mode"] != Mode.FIT.name:
        out["smallestChange"] = change
        sentences.append(change)
