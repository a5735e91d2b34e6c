"""The resources the controllers read and write, by name (one place to spell them).

Re-exports ``client.res`` constants and adds the Kueue kinds it does not name.
"""

from __future__ import annotations

from pykueue.client.res import (
    CLUSTER_QUEUES,
    EVENTS,
    JOBS,
    JOBSETS,
    LOCAL_QUEUES,
    NAMESPACES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    WORKLOADS,
    Res,
)

__all__ = [
    "ADMISSION_CHECKS",
    "CLUSTER_QUEUES",
    "COHORTS",
    "EVENTS",
    "JOBS",
    "JOBSETS",
    "LOCAL_QUEUES",
    "NAMESPACES",
    "PODS",
    "PRIORITY_CLASSES",
    "RESOURCE_FLAVORS",
    "WORKLOADS",
    "WORKLOAD_PRIORITY_CLASSES",
    "Res",
]

KUEUE = "kueue.x-k8s.io"
COHORTS = Res(KUEUE, "v1beta2", "cohorts")
WORKLOAD_PRIORITY_CLASSES = Res(KUEUE, "v1beta2", "workloadpriorityclasses")
ADMISSION_CHECKS = Res(KUEUE, "v1beta2", "admissionchecks")
