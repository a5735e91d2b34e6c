"""Small, pure helpers over pod dicts shared by the binder, the agents and the Job controller.

Owned by ``cluster/``. No I/O; everything here is a function of the objects passed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import QuantityError, to_amount

__all__ = [
    "Record",
    "condition",
    "is_active",
    "is_ready",
    "is_terminal",
    "node_allocatable",
    "owner_uid",
    "pod_requests",
    "set_condition",
]


Record = Callable[[JSONDict, str, str, str], None]
"""``record(object, type, reason, message)``: emit a Kubernetes Event (best effort, never raises)."""


def no_record(obj: JSONDict, etype: str, reason: str, message: str) -> None:
    """The default :data:`Record`: events off (unit tests of one component)."""


def _amounts(resources: dict[str, Any] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in (resources or {}).items():
        try:
            out[name] = to_amount(name, value)
        except QuantityError:
            continue  # the API validates quantities; a stray bad one is not this layer's to report
    return out


def pod_requests(pod: JSONDict) -> dict[str, int]:
    """Effective requests, as the scheduler computes them: max(sum of containers, each init container),
    plus overhead; a container with limits but no requests requests its limits. Always counts 1 pod."""
    spec = pod.get("spec") or {}
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        resources = container.get("resources") or {}
        for name, amount in {**_amounts(resources.get("limits")), **_amounts(resources.get("requests"))}.items():
            total[name] = total.get(name, 0) + amount
    for container in spec.get("initContainers") or []:
        resources = container.get("resources") or {}
        for name, amount in {**_amounts(resources.get("limits")), **_amounts(resources.get("requests"))}.items():
            total[name] = max(total.get(name, 0), amount)
    for name, amount in _amounts(spec.get("overhead")).items():
        total[name] = total.get(name, 0) + amount
    total["pods"] = 1
    return total


def node_allocatable(node: JSONDict) -> dict[str, int]:
    status = node.get("status") or {}
    return _amounts(status.get("allocatable") or status.get("capacity"))


def is_terminal(pod: JSONDict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: JSONDict) -> bool:
    """Neither finished nor being deleted: counts toward a Job's ``active``."""
    return not is_terminal(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp")


def condition(obj: JSONDict, kind: str) -> JSONDict | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == kind:
            return dict(cond)
    return None


def is_ready(pod: JSONDict) -> bool:
    cond = condition(pod, "Ready")
    return cond is not None and cond.get("status") == "True"


def set_condition(
    conditions: list[JSONDict], kind: str, status: str, reason: str, message: str, now: str, *, probe: bool = False
) -> list[JSONDict]:
    """Return ``conditions`` with ``kind`` set; lastTransitionTime moves only when the status changes."""
    out = [dict(c) for c in conditions]
    for cond in out:
        if cond.get("type") == kind:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            cond.update(status=status, reason=reason, message=message)
            if probe:
                cond["lastProbeTime"] = now
            return out
    new = {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
    if probe:
        new["lastProbeTime"] = now
    out.append(new)
    return out


def owner_uid(obj: JSONDict, kind: str) -> str | None:
    """The uid of the controller owner of kind ``kind``, if any."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kind:
            return str(ref.get("uid"))
    return None
