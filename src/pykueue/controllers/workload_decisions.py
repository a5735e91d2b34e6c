"""Pure decisions of the workload controller: which checks apply, what a stopped or missing queue
means for a workload, when its PodsReady and execution-time deadlines fall (Kueue's stop policies,
requeuing and backoff).

Owns no I/O: each function looks at API dicts (and a time) and returns a decision; the workload
controller (:mod:`pykueue.controllers.workload_controller`) writes it. Kept apart so every rule reads on one
screen and can be tested on plain data.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.controllers.conditions import condition, condition_true, is_active, is_admitted, transition_time
from pykueue.controllers.config import WaitForPodsReady

__all__ = [
    "Deadline",
    "QueueVerdict",
    "drain_eviction",
    "max_execution_deadline",
    "pods_ready_deadline",
    "required_checks",
    "stop_policy",
    "unadmitted_release",
    "unqueueable",
]


@dataclass(frozen=True, slots=True)
class QueueVerdict:
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Deadline:
    due: float
    """Epoch seconds at which the rule fires."""
    cause: str = ""
    """PodsReady: WaitForStart or WaitForRecovery (the eviction's underlying cause)."""


def stop_policy(obj: JSONDict | None) -> str:
    return str(((obj or {}).get("spec") or {}).get("stopPolicy") or "None")


def required_checks(wl: JSONDict, cq: JSONDict | None) -> list[str]:
    """Admission checks of the CQ that apply: rules without ``onFlavors`` or naming an assigned flavor."""
    if cq is None:
        return [c.get("name", "") for c in (wl.get("status") or {}).get("admissionChecks") or []]
    rules = ((cq.get("spec") or {}).get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    assignments = ((wl.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []
    flavors = {f for psa in assignments for f in (psa.get("flavors") or {}).values()}
    out = set()
    for rule in rules:
        on = set(rule.get("onFlavors") or [])
        if not on or on & flavors:
            out.add(rule.get("name", ""))
    return sorted(out)


def drain_eviction(lq: JSONDict | None, cq: JSONDict | None) -> QueueVerdict | None:
    """An admitted workload of a HoldAndDrain queue is evicted (LocalQueue first, as Kueue checks)."""
    if lq is not None and stop_policy(lq) == "HoldAndDrain":
        return QueueVerdict("LocalQueueStopped", "The LocalQueue is stopped")
    if cq is not None and stop_policy(cq) == "HoldAndDrain":
        return QueueVerdict("ClusterQueueStopped", "The ClusterQueue is stopped")
    return None


def unadmitted_release(wl: JSONDict, lq: JSONDict | None, cq: JSONDict | None, cq_name: str) -> QueueVerdict | None:
    """A reservation not yet admitted (checks pending) is given back when its queue stops or goes away."""
    queue_name = (wl.get("spec") or {}).get("queueName", "")
    if lq is not None and stop_policy(lq) != "None":
        return QueueVerdict("Suspended", f"LocalQueue {queue_name} is stopped")
    if cq is None or (cq.get("metadata") or {}).get("deletionTimestamp"):
        return QueueVerdict("Suspended", f"ClusterQueue {cq_name} is terminating or missing")
    if stop_policy(cq) != "None":
        return QueueVerdict("Suspended", f"ClusterQueue {cq_name} is stopped")
    return None


def unqueueable(
    wl: JSONDict, lq: JSONDict | None, cq: JSONDict | None, cq_name: str, cq_active: bool
) -> QueueVerdict | None:
    """Why a pending workload cannot even be queued (the engine never sees it, so never says why)."""
    queue_name = (wl.get("spec") or {}).get("queueName", "")
    if lq is None:
        return QueueVerdict("Misconfigured", f"LocalQueue {queue_name} doesn't exist")
    if stop_policy(lq) != "None":
        return QueueVerdict("Suspended", f"LocalQueue {queue_name} is inactive")
    if cq is None:
        return QueueVerdict("Misconfigured", f"ClusterQueue {cq_name} doesn't exist")
    if not cq_active:
        return QueueVerdict("Suspended", f"ClusterQueue {cq_name} is inactive")
    return None


def pods_ready_deadline(wl: JSONDict, cfg: WaitForPodsReady, now: float) -> Deadline | None:
    """When an admitted workload without ready pods times out: ``timeout`` after admission, or
    ``recoveryTimeout`` after PodsReady fell back to WaitForRecovery. None = no deadline applies."""
    if not cfg.enable or not is_admitted(wl) or not is_active(wl) or condition_true(wl, "PodsReady"):
        return None
    pods_ready = condition(wl, "PodsReady") or {}
    if pods_ready.get("reason") == "WaitForRecovery" and pods_ready.get("lastTransitionTime"):
        return Deadline(parse_time(pods_ready["lastTransitionTime"]) + cfg.recovery_timeout, "WaitForRecovery")
    return Deadline((transition_time(wl, "Admitted") or now) + cfg.timeout_seconds, "WaitForStart")


def max_execution_deadline(wl: JSONDict) -> Deadline | None:
    """``admitted + maximumExecutionTimeSeconds − accumulatedPastExecutionTimeSeconds``."""
    limit = (wl.get("spec") or {}).get("maximumExecutionTimeSeconds")
    admitted_at = transition_time(wl, "Admitted")
    if limit is None or not is_admitted(wl) or admitted_at is None:
        return None
    past = int((wl.get("status") or {}).get("accumulatedPastExecutionTimeSeconds") or 0)
    return Deadline(admitted_at + int(limit) - past)
