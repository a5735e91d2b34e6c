"""The API objects Kueue's generator creates, as plain dicts (``kueue.x-k8s.io/v1beta2``).

Owns their exact shape (as Kueue's generator creates them): one ResourceFlavor; per ClusterQueue a cohort, one resource
group with the single resource ``cpu`` (``nominalQuota``, ``borrowingLimit``), preemption
``{reclaimWithinCohort, withinClusterQueue}``, ``namespaceSelector: {}``, BestEffortFIFO,
fungibility {MayStopSearch, TryNextFlavor} and the class label; a namespace and a LocalQueue of the
CQ's name; per workload the queue name, priority, class and running-time labels and one pod set
``main`` requesting ``cpu=<request>`` per pod.

Who calls it: the virtual-time simulator (fed straight to the engine) and the real-time driver
(sent to the API server). Invariant: both modes measure the very same objects.
"""

from __future__ import annotations

from typing import Any

from pykueue.bench.scheduler.config import CQPlan, WorkloadPlan

__all__ = [
    "API",
    "CLASS_LABEL",
    "RUNNING_MS_LABEL",
    "cluster_queue",
    "local_queue",
    "namespace",
    "resource_flavor",
    "workload",
]

API = "kueue.x-k8s.io/v1beta2"
CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
RUNNING_MS_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"
CLEANUP_LABEL = "kueue.x-k8s.io/performance-scheduler-cleanup"


def resource_flavor(name: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ResourceFlavor",
        "metadata": {"name": name, "labels": {CLEANUP_LABEL: "true"}},
        "spec": {},
    }


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {CLEANUP_LABEL: "true"}}}


def cluster_queue(cq: CQPlan, flavor: str) -> dict[str, Any]:
    res: dict[str, Any] = {"name": "cpu", "nominalQuota": cq.nominal_quota}
    if cq.borrowing_limit is not None:
        res["borrowingLimit"] = cq.borrowing_limit
    return {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": cq.name, "labels": {CLASS_LABEL: cq.class_name, CLEANUP_LABEL: "true"}},
        "spec": {
            "cohortName": cq.cohort,
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
            "preemption": {
                "reclaimWithinCohort": cq.reclaim_within_cohort,
                "withinClusterQueue": cq.within_cluster_queue,
            },
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": flavor, "resources": [res]}]}],
        },
    }


def local_queue(name: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": name},
        "spec": {"clusterQueue": name},
    }


def workload(w: WorkloadPlan, creation_timestamp: str | None = None) -> dict[str, Any]:
    """The Workload to create; ``creation_timestamp`` is set only when no API server stamps it."""
    meta: dict[str, Any] = {
        "name": w.name,
        "namespace": w.namespace,
        "labels": {CLASS_LABEL: w.class_name, RUNNING_MS_LABEL: str(w.runtime_ms)},
    }
    if creation_timestamp is not None:
        meta["creationTimestamp"] = creation_timestamp
        meta["uid"] = f"{w.namespace}/{w.name}"
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": meta,
        "spec": {
            "queueName": w.namespace,
            "priority": w.priority,
            "podSets": [
                {
                    "name": "main",
                    "count": w.pod_count,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "registry.k8s.io/pause:3.9",
                                    "resources": {"requests": {"cpu": w.request}},
                                }
                            ],
                        }
                    },
                }
            ],
        },
    }
