"""Resource coordinates (group, version, plural) and the URL paths they map to.

Owned by ``client/``; every controller names the resources it reads and writes with a :class:`GroupVersionResource`.
Invariant: a ``GroupVersionResource`` is immutable and hashable, so it can key informer and cache maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "CLUSTER_QUEUES",
    "EVENTS",
    "JOBS",
    "JOBSETS",
    "LEASES",
    "LOCAL_QUEUES",
    "NAMESPACES",
    "NODES",
    "PODS",
    "PRIORITY_CLASSES",
    "RESOURCE_FLAVORS",
    "WORKLOADS",
    "GroupVersionResource",
    "key_of",
    "split_key",
]


@dataclass(frozen=True, slots=True)
class GroupVersionResource:
    """A served resource, e.g. ``GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloads")``; group "" is core."""

    group: str
    version: str
    plural: str

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` field of objects of this resource ("v1", "batch/v1")."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        """The REST path: ``/api/v1/...`` for core, ``/apis/<group>/<version>/...`` otherwise."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def key_of(obj: dict[str, Any]) -> str:
    """The cache key of an object: ``namespace/name``, or ``name`` when cluster-scoped."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name = meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str, str]:
    """Inverse of :func:`key_of`: ``(namespace, name)``."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


PODS = GroupVersionResource("", "v1", "pods")
NODES = GroupVersionResource("", "v1", "nodes")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
EVENTS = GroupVersionResource("", "v1", "events")
JOBS = GroupVersionResource("batch", "v1", "jobs")
LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")
PRIORITY_CLASSES = GroupVersionResource("scheduling.k8s.io", "v1", "priorityclasses")
JOBSETS = GroupVersionResource("jobset.x-k8s.io", "v1alpha2", "jobsets")
WORKLOADS = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "workloads")
CLUSTER_QUEUES = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "clusterqueues")
LOCAL_QUEUES = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "localqueues")
RESOURCE_FLAVORS = GroupVersionResource("kueue.x-k8s.io", "v1beta2", "resourceflavors")
