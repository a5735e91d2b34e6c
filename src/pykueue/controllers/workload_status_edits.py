"""Pure edits of a Workload's status for each lifecycle step (Kueue's Workload lifecycle; admission; requeuing
and backoff; eviction reasons).

Owns: the exact conditions, reasons and messages Kueue writes when a workload gets quota, is
admitted, is evicted, gives its reservation back, is requeued or finishes. Each function edits a
status dict in place (the private copy :func:`pykueue.controllers.status.update_status` hands out)
and returns whether anything changed, so callers compose them inside one write.

Who calls it: the scheduler loop (admit, preempt, pending), the workload controller (eviction,
requeue, deactivation, admission checks), the job framework (finish, release reservation).
Invariant: no I/O and no clock reads: ``now`` is always passed in.
"""

from __future__ import annotations

from pykueue.api.meta.clock import format_time, parse_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.controllers.conditions import remove_condition, set_condition

__all__ = [
    "backoff_seconds",
    "clear_deactivation_target",
    "mark_finished",
    "prepare_eviction",
    "release_after_eviction",
    "reserve_quota",
    "set_deactivation_target",
    "set_pending",
    "set_requeued",
    "sync_admitted",
    "unset_quota_reservation",
    "update_requeue_state",
]


def _conds(status: JSONDict) -> list[JSONDict]:
    conds: list[JSONDict] = status.setdefault("conditions", [])
    return conds


def _cond(status: JSONDict, ctype: str) -> JSONDict | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def reserve_quota(status: JSONDict, admission: JSONDict, checks: list[str], now: float) -> None:
    """The scheduler's admit (Kueue's admission): admission + QuotaReserved=True, Evicted/Preempted reset,
    admission-check states added as Pending, Admitted=True when no checks apply."""
    cq = admission.get("clusterQueue", "")
    status["admission"] = admission
    conds = _conds(status)
    set_condition(conds, "QuotaReserved", "True", "QuotaReserved", f"Quota reserved in ClusterQueue {cq}", now)
    for ctype in ("Evicted", "Preempted"):
        old = _cond(status, ctype)
        if old is not None and old.get("status") == "True":
            set_condition(conds, ctype, "False", "QuotaReserved", f"Previously: {old.get('message', '')}", now)
    requeue = status.get("requeueState")
    if isinstance(requeue, dict) and "requeueAt" in requeue:
        status["requeueState"] = {k: v for k, v in requeue.items() if k != "requeueAt"}
    if checks:
        existing = {c.get("name"): c for c in status.get("admissionChecks") or []}
        states = []
        for name in sorted(set(checks)):
            states.append(
                existing.get(name)
                or {"name": name, "state": "Pending", "message": "", "lastTransitionTime": format_time(now)}
            )
        status["admissionChecks"] = states
        sync_admitted(status, now)
    else:
        status.pop("admissionChecks", None)
        set_condition(conds, "Admitted", "True", "Admitted", "The workload is admitted", now)


def sync_admitted(status: JSONDict, now: float) -> bool:
    """Admitted follows QuotaReserved ∧ every admission check Ready (Kueue's SyncAdmittedCondition)."""
    reserved = (_cond(status, "QuotaReserved") or {}).get("status") == "True"
    checks = status.get("admissionChecks") or []
    all_ready = all(c.get("state") == "Ready" for c in checks)
    admitted_now = (_cond(status, "Admitted") or {}).get("status") == "True"
    if reserved and all_ready:
        if admitted_now:
            return False
        return set_condition(_conds(status), "Admitted", "True", "Admitted", "The workload is admitted", now)
    if not reserved:
        reason, message = "NoReservation", "The workload has no reservation"
    else:
        reason, message = "UnsatisfiedAdmissionChecks", "The workload has not all admission checks in state Ready"
    if _cond(status, "Admitted") is None and not reserved:
        return False
    changed = _accumulate_execution_time(status, now) if admitted_now else False
    return set_condition(_conds(status), "Admitted", "False", reason, message, now) or changed


def _accumulate_execution_time(status: JSONDict, now: float) -> bool:
    """When Admitted goes True→False the admitted seconds join ``accumulatedPastExecutionTimeSeconds``."""
    cond = _cond(status, "Admitted")
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return False
    elapsed = max(0, int(now - parse_time(cond["lastTransitionTime"])))
    past = int(status.get("accumulatedPastExecutionTimeSeconds") or 0)
    status["accumulatedPastExecutionTimeSeconds"] = past + elapsed
    return True


def set_pending(
    status: JSONDict, reason: str, message: str, resource_requests: list[JSONDict] | None, now: float
) -> bool:
    """QuotaReserved=False with the scheduler's (or controller's) reason; ``resourceRequests`` if given."""
    changed = set_condition(_conds(status), "QuotaReserved", "False", reason, message, now)
    if resource_requests is not None and status.get("resourceRequests") != resource_requests:
        status["resourceRequests"] = resource_requests
        changed = True
    return changed


def _eviction_reason(reason: str, underlying_cause: str) -> str:
    if reason == "Deactivated" and underlying_cause:
        return f"DeactivatedDueTo{underlying_cause}"
    return reason


def prepare_eviction(
    status: JSONDict, reason: str, message: str, now: float, *, underlying_cause: str = "", preempted_reason: str = ""
) -> str:
    """Evicted=True (+Preempted=True), admission checks reset to Pending, eviction counted in
    ``schedulingStats.evictions``. Returns the event reason (``EvictedDueTo<reason>``)."""
    evicted_reason = _eviction_reason(reason, underlying_cause)
    conds = _conds(status)
    set_condition(conds, "Evicted", "True", evicted_reason, message, now)
    if preempted_reason:
        set_condition(conds, "Preempted", "True", preempted_reason, message, now)
    checks = status.get("admissionChecks") or []
    if checks:
        reset = []
        for check in checks:
            if check.get("state") != "Pending":
                check = {
                    **check,
                    "state": "Pending",
                    "lastTransitionTime": format_time(now),
                    "message": f"Reset to Pending after eviction. Previously: {check.get('state')}",
                }
                if check.get("state") == "Retry":
                    check["retryCount"] = int(check.get("retryCount") or 0) + 1
            reset.append(check)
        status["admissionChecks"] = reset
    stats = status.setdefault("schedulingStats", {})
    evictions: list[JSONDict] = list(stats.get("evictions") or [])
    for i, entry in enumerate(evictions):
        if entry.get("reason") == reason and (entry.get("underlyingCause") or "") == underlying_cause:
            evictions[i] = {**entry, "count": int(entry.get("count") or 0) + 1}
            break
    else:
        # underlyingCause is a required field of the API ("" when there is none)
        evictions.append({"reason": reason, "underlyingCause": underlying_cause, "count": 1})
    stats["evictions"] = evictions
    return f"EvictedDueTo{evicted_reason}"


_REQUEUE_NOW = ("Preempted", "NodeFailures")


def unset_quota_reservation(status: JSONDict, reason: str, message: str, now: float) -> bool:
    """Give the reservation back: QuotaReserved=False, no admission, Admitted=False (time accumulated)."""
    changed = set_condition(_conds(status), "QuotaReserved", "False", reason, message, now)
    if status.get("admission") is not None:
        status.pop("admission", None)
        changed = True
    changed = sync_admitted(status, now) or changed
    return changed


def release_after_eviction(status: JSONDict, now: float) -> bool:
    """After the job stopped (Kueue's job reconcile loop): reservation released with PendingEvaluation and the
    Requeued condition set from the eviction reason (True only for Preempted/NodeFailures)."""
    evicted = _cond(status, "Evicted") or {}
    changed = unset_quota_reservation(status, "PendingEvaluation", "The workload was evicted", now)
    reason = evicted.get("reason", "")
    base = "Deactivated" if reason.startswith("Deactivated") else reason
    changed = set_requeued(status, base, evicted.get("message", ""), base in _REQUEUE_NOW, now) or changed
    return changed


def set_requeued(status: JSONDict, reason: str, message: str, requeued: bool, now: float) -> bool:
    return set_condition(_conds(status), "Requeued", "True" if requeued else "False", reason, message, now)


def set_deactivation_target(status: JSONDict, reason: str, message: str, now: float) -> bool:
    return set_condition(_conds(status), "DeactivationTarget", "True", reason, message, now)


def clear_deactivation_target(status: JSONDict) -> bool:
    return remove_condition(_conds(status), "DeactivationTarget")


def mark_finished(status: JSONDict, reason: str, message: str, now: float) -> bool:
    return set_condition(_conds(status), "Finished", "True", reason, message, now)


def backoff_seconds(count: int, base: int, maximum: int) -> float:
    """``min(base·2^(count−1), max)`` (Kueue's backoff); pykueue omits Kueue's ≤0.01 % jitter so runs replay."""
    if count <= 0:
        return 0.0
    return float(min(base * (2 ** (count - 1)), maximum))


def update_requeue_state(status: JSONDict, base: int, maximum: int, now: float) -> None:
    """``requeueState.count += 1``, ``requeueAt = now + backoff`` (never moving backwards)."""
    state = dict(status.get("requeueState") or {})
    count = int(state.get("count") or 0) + 1
    at = now + backoff_seconds(count, base, maximum)
    old_at = state.get("requeueAt")
    if old_at and parse_time(old_at) > at:
        at = parse_time(old_at)
    state["count"] = count
    state["requeueAt"] = format_time(at)
    status["requeueState"] = state
