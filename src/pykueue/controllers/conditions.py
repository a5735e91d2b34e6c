"""Workload conditions and derived states, on plain dicts (Kueue's Workload lifecycle).

Owns: Kubernetes ``metav1.Condition`` list manipulation with ``meta.SetStatusCondition`` semantics
(``lastTransitionTime`` moves only when ``status`` flips) and the predicates every controller asks
of a Workload (has quota? admitted? evicted? finished?).

Who calls it: the scheduler loop, the workload controller, the job integrations.
Invariant: functions never mutate their inputs unless their name says so (``set_condition``
mutates the list it is given and returns whether anything changed).
"""

from __future__ import annotations

from pykueue.api.meta.clock import format_time, parse_time
from pykueue.api.meta.json_types import JSONDict

__all__ = [
    "FINALIZER",
    "condition",
    "condition_true",
    "has_quota",
    "is_active",
    "is_admitted",
    "is_evicted",
    "is_finished",
    "remove_condition",
    "set_condition",
    "transition_time",
]

FINALIZER = "kueue.x-k8s.io/resource-in-use"
"""The finalizer Kueue puts on ClusterQueues, ResourceFlavors and Workloads."""


def condition(obj: JSONDict, ctype: str) -> JSONDict | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def condition_true(obj: JSONDict, ctype: str) -> bool:
    cond = condition(obj, ctype)
    return cond is not None and cond.get("status") == "True"


def transition_time(obj: JSONDict, ctype: str) -> float | None:
    cond = condition(obj, ctype)
    if cond is None or not cond.get("lastTransitionTime"):
        return None
    return parse_time(cond["lastTransitionTime"])


def set_condition(
    conditions: list[JSONDict],
    ctype: str,
    status: str,
    reason: str,
    message: str,
    now: float,
    observed_generation: int | None = None,
) -> bool:
    """Set (or add) a condition in place. Returns True when anything visible changed."""
    for i, cond in enumerate(conditions):
        if cond.get("type") != ctype:
            continue
        new = dict(cond)
        if cond.get("status") != status:
            new["lastTransitionTime"] = format_time(now)
        new.update(status=status, reason=reason, message=message)
        if observed_generation is not None:
            new["observedGeneration"] = observed_generation
        if new == cond:
            return False
        conditions[i] = new
        return True
    new_cond: JSONDict = {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": format_time(now),
    }
    if observed_generation is not None:
        new_cond["observedGeneration"] = observed_generation
    conditions.append(new_cond)
    return True


def remove_condition(conditions: list[JSONDict], ctype: str) -> bool:
    before = len(conditions)
    conditions[:] = [c for c in conditions if c.get("type") != ctype]
    return len(conditions) != before


def has_quota(wl: JSONDict) -> bool:
    """QuotaReserved=True with an admission: the workload holds quota in its ClusterQueue."""
    return condition_true(wl, "QuotaReserved") and bool((wl.get("status") or {}).get("admission"))


def is_admitted(wl: JSONDict) -> bool:
    return condition_true(wl, "Admitted")


def is_evicted(wl: JSONDict) -> bool:
    return condition_true(wl, "Evicted")


def is_finished(wl: JSONDict) -> bool:
    return condition_true(wl, "Finished")


def is_active(wl: JSONDict) -> bool:
    return (wl.get("spec") or {}).get("active") is not False
