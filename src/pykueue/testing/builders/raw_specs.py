"""Raw-spec builders for validation and defaulting tests: any field may be set, valid or not.

Owns: small dict constructors for ClusterQueue, Workload, pod templates and Job whose keyword
arguments go into the spec unchecked, so a test can build exactly the invalid object a rule must
refuse (``workload(podSets=[])``), and the bare Pods and ClusterQueues the store tests write
(the store checks no schema); ``reserved`` adds a quota reservation; ``info`` finds a served kind in
the catalogue and ``check`` defaults then validates an object the way the registry does on a write.

This is the escape hatch of the builder library: the fluent builders only build valid objects.
"""

from __future__ import annotations

import copy
from typing import Any

from pykueue.api.catalogue import build_catalogue
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.kind_info import KindInfo

KUEUE = "kueue.x-k8s.io"


def info(kind: str, group: str = KUEUE) -> KindInfo:
    found = build_catalogue().find(group, kind)
    assert found is not None, kind
    return found


def cluster_queue(name: str = "cq", *, cohort: str | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resourceGroups": [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "default",
                        "resources": [
                            {"name": "cpu", "nominalQuota": "4"},
                            {"name": "memory", "nominalQuota": "8Gi"},
                        ],
                    }
                ],
            }
        ],
        "namespaceSelector": {},
    }
    if cohort:
        body["cohortName"] = cohort
    body.update(spec)
    return {"apiVersion": f"{KUEUE}/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def pod_template(cpu: str = "1", **container: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
    c.update(container)
    return {"spec": {"containers": [c], "restartPolicy": "Never"}}


def workload(name: str = "wl", *, pod_sets: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "queueName": "lq",
        "podSets": pod_sets if pod_sets is not None else [{"name": "main", "count": 3, "template": pod_template()}],
    }
    body.update(spec)
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": body,
    }


def reserved(wl: dict[str, Any], cq: str = "cq", *, admitted: bool = False) -> dict[str, Any]:
    """A copy of ``wl`` holding a quota reservation (and optionally admitted)."""
    out = copy.deepcopy(wl)
    conditions = [
        {
            "type": "QuotaReserved",
            "status": "True",
            "reason": "QuotaReserved",
            "message": "Quota reserved",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ]
    if admitted:
        conditions.append(
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "message": "ok",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        )
    out["status"] = {
        "conditions": conditions,
        "admission": {
            "clusterQueue": cq,
            "podSetAssignments": [
                {
                    "name": p.get("name", "main"),
                    "flavors": {"cpu": "default"},
                    "resourceUsage": {"cpu": str(p.get("count", 1))},
                    "count": p.get("count", 1),
                }
                for p in out["spec"]["podSets"]
            ],
        },
    }
    return out


def job(name: str = "job", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": pod_template()}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def check(kind_info: KindInfo, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    """Default then validate, as the registry does on a write."""
    defaulted = kind_info.default(obj)
    old_defaulted = kind_info.default(old) if old is not None else None
    return kind_info.validate(defaulted, old_defaulted)


def pod(name: str, namespace: str = "default", **labels: str) -> dict[str, Any]:
    """A bare Pod as the store holds it (no containers: the store checks no schema)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": ""}}


def bare_cluster_queue(name: str) -> dict[str, Any]:
    """A ClusterQueue with no resource groups, as the store tests write it."""
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {"cohortName": ""},
    }
