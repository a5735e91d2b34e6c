"""The resources the controllers read and write, by name (one place to spell them).

Re-exports ``client.group_version_resource`` constants and adds the Kueue kinds it does not name.
"""

from __future__ import annotations

from pykueue.client.group_version_resource import (
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
    GroupVersionResource,
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
    "GroupVersionResource",
]

KUEUE = "kueue.x-k8s.io"
COHORTS = GroupVersionResource(KUEUE, "v1beta2", "cohorts")
WORKLOAD_PRIORITY_CLASSES = GroupVersionResource(KUEUE, "v1beta2", "workloadpriorityclasses")
ADMISSION_CHECKS = GroupVersionResource(KUEUE, "v1beta2", "admissionchecks")
