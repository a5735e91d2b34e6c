"""The trace model every reader produces: tasks with a submit time, a queue, a priority, pod sets, a runtime.

Owns :class:`Task` and :class:`PodSetSpec` (format-independent), :class:`SimulateError` (one-line
user errors) and the conversion of a task to the Workload object the engine is fed
(``kueue.x-k8s.io/v1beta2``), so every trace format replays through the same objects.

Who calls it: the trace readers (``openb``, ``generic``, ``kueue_trace``), ``replay`` and ``eta``.
Invariant: a ``Task`` is valid (positive counts, non-negative times, parseable quantities); readers
raise ``SimulateError`` naming the file, line and field instead of building a bad one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["API", "EXPECTED_RUNTIME_ANNOTATION", "PodSetSpec", "SimulateError", "Task", "workload_object"]

API = "kueue.x-k8s.io/v1beta2"
EXPECTED_RUNTIME_ANNOTATION = "pykueue.io/expected-runtime"


class SimulateError(ValueError):
    """Bad input to ``pykueue simulate``: the message is one line, shown as is."""


@dataclass(frozen=True, slots=True)
class PodSetSpec:
    name: str
    count: int
    requests: tuple[tuple[str, str], ...]
    """Per-pod requests as (resource, quantity) pairs, sorted by resource."""
    min_count: int | None = None
    node_selector: tuple[tuple[str, str], ...] = ()
    allowed: tuple[str, tuple[str, ...]] | None = None
    """A required node-affinity term ``key In values`` (e.g. the GPU models a task accepts)."""


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    submit_s: float
    """Seconds since the start of the trace."""
    runtime_s: float
    pod_sets: tuple[PodSetSpec, ...]
    namespace: str | None = None
    queue: str | None = None
    """LocalQueue name; ``None``: the replay assigns one of the configuration's LocalQueues."""
    priority_class: str | None = None
    priority: int | None = None
    labels: tuple[tuple[str, str], ...] = field(default=())


def workload_object(task: Task, namespace: str, queue: str, priority: int) -> dict[str, Any]:
    """The Workload a job of this task would create (no creationTimestamp: the replay stamps it)."""
    pod_sets: list[dict[str, Any]] = []
    for ps in task.pod_sets:
        pod_spec: dict[str, Any] = {
            "restartPolicy": "Never",
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": {"requests": dict(ps.requests)}}
            ],
        }
        if ps.node_selector:
            pod_spec["nodeSelector"] = dict(ps.node_selector)
        if ps.allowed is not None:
            key, values = ps.allowed
            pod_spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
                        ]
                    }
                }
            }
        entry: dict[str, Any] = {"name": ps.name, "count": ps.count, "template": {"spec": pod_spec}}
        if ps.min_count is not None:
            entry["minCount"] = ps.min_count
        pod_sets.append(entry)
    spec: dict[str, Any] = {"queueName": queue, "priority": priority, "podSets": pod_sets}
    if task.priority_class:
        spec["priorityClassRef"] = {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": task.priority_class,
        }
    meta: dict[str, Any] = {
        "name": task.name,
        "namespace": namespace,
        "annotations": {EXPECTED_RUNTIME_ANNOTATION: _duration(task.runtime_s)},
    }
    if task.labels:
        meta["labels"] = dict(task.labels)
    return {"apiVersion": API, "kind": "Workload", "metadata": meta, "spec": spec}


def _duration(seconds: float) -> str:
    """``90s`` / ``0.5s``: what ``pykueue.io/expected-runtime`` holds (never an exponent)."""
    return f"{int(seconds)}s" if seconds == int(seconds) else f"{seconds:.3f}s"
