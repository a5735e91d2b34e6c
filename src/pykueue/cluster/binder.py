"""The embedded pod binder: kube-scheduler's job, reduced to what a batch cluster needs.

Owned by ``cluster/``; started by :class:`~pykueue.cluster.embedded.EmbeddedCluster`. Watches pods
and nodes through shared informers; a pending pod without ``spec.nodeName`` and without
scheduling gates is bound to the least-allocated node that fits (see :mod:`.fit`), otherwise it
gets ``PodScheduled=False/Unschedulable`` with kube-scheduler's message and is retried whenever
a node changes or a pod stops holding resources.

Invariant: a node's charged requests are never over its allocatable. Bindings this binder made
are charged at once (the "assume" step), before the informer shows them, so two pods bound in a
row never both take the last CPU.
"""

from __future__ import annotations

import logging

from pykueue.api.meta.clock import Clock, format_time
from pykueue.api.meta.errors import Conflict, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer, WorkQueue, key_of, split_key
from pykueue.client.group_version_resource import PODS
from pykueue.cluster.fit import fit_reasons, unschedulable_message
from pykueue.cluster.podutil import (
    Record,
    condition,
    no_record,
    node_allocatable,
    pod_requests,
    set_condition,
)

__all__ = ["PodBinder"]

log = logging.getLogger(__name__)


def _needs_binding(pod: JSONDict) -> bool:
    spec, meta = pod.get("spec") or {}, pod.get("metadata") or {}
    return (
        not spec.get("nodeName")
        and not spec.get("schedulingGates")
        and not meta.get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
        and spec.get("schedulerName", "default-scheduler") == "default-scheduler"
    )


def _holds_resources(pod: JSONDict) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName")) and (pod.get("status") or {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )


class PodBinder:
    def __init__(
        self, client: Client, pods: Informer, nodes: Informer, clock: Clock, *, record: Record = no_record
    ) -> None:
        self.client = client
        self.record = record
        self.pods = pods
        self.nodes = nodes
        self.clock = clock
        self.queue: WorkQueue[str] = WorkQueue("binder")
        self._charges: dict[str, tuple[str, dict[str, int]]] = {}
        """pod key -> (node, requests) for every pod holding resources on a node."""
        self._usage: dict[str, dict[str, int]] = {}
        """node -> the sum of its charges, kept incrementally (a bind never rescans every pod)."""
        self._assumed: set[str] = set()
        """Pods bound by us whose binding the informer has not shown yet."""
        self._unschedulable: set[str] = set()
        pods.add_handler(self._on_pod)
        nodes.add_handler(self._on_node)

    # -- events -----------------------------------------------------------------------------------

    def _on_pod(self, kind: str, pod: JSONDict, old: JSONDict | None) -> None:
        key = key_of(pod)
        if kind == "DELETED" or not _holds_resources(pod):
            if key in self._assumed and kind != "DELETED" and not (pod.get("spec") or {}).get("nodeName"):
                pass  # a stale event from before our binding: keep the charge
            elif self._uncharge(key):
                self._assumed.discard(key)
                self._retry_unschedulable()
        else:
            self._assumed.discard(key)
            self._charge(key, str(pod["spec"]["nodeName"]), pod_requests(pod))
        if kind == "DELETED":
            self._unschedulable.discard(key)
        elif _needs_binding(pod):
            self.queue.add(key)

    def _on_node(self, kind: str, node: JSONDict, old: JSONDict | None) -> None:
        if old is None or (
            old.get("spec") != node.get("spec")
            or (old.get("metadata") or {}).get("labels") != (node.get("metadata") or {}).get("labels")
            or (old.get("status") or {}).get("allocatable") != (node.get("status") or {}).get("allocatable")
            or condition(old, "Ready") != condition(node, "Ready")
        ):
            self._retry_unschedulable()

    def _retry_unschedulable(self) -> None:
        for key in self._unschedulable:
            self.queue.add(key)

    # -- reconcile --------------------------------------------------------------------------------

    def _charge(self, key: str, node: str, requests: dict[str, int]) -> None:
        self._uncharge(key)
        self._charges[key] = (node, requests)
        bucket = self._usage.setdefault(node, {})
        for resource, amount in requests.items():
            bucket[resource] = bucket.get(resource, 0) + amount

    def _uncharge(self, key: str) -> bool:
        charged = self._charges.pop(key, None)
        if charged is None:
            return False
        node, requests = charged
        bucket = self._usage.get(node, {})
        for resource, amount in requests.items():
            bucket[resource] = bucket.get(resource, 0) - amount
        return True

    def used_on(self, node_name: str) -> dict[str, int]:
        """Requests charged to ``node_name`` (bound, unfinished pods)."""
        return dict(self._usage.get(node_name, {}))

    async def reconcile(self, key: str) -> float | None:
        pod = self.pods.get_by_key(key)
        if pod is None or not _needs_binding(pod) or key in self._assumed:
            self._unschedulable.discard(key)
            return None
        requests = pod_requests(pod)
        nodes = sorted(self.nodes.list(), key=lambda n: str(n["metadata"]["name"]))
        best: tuple[float, str] | None = None
        all_reasons: list[list[str]] = []
        for node in nodes:
            name = str(node["metadata"]["name"])
            used = self._usage.get(name, {})
            reasons = fit_reasons(pod, node, requests, used)
            all_reasons.append(reasons)
            if reasons:
                continue
            score = _allocated_fraction(node_allocatable(node), used, requests)
            if best is None or score < best[0]:
                best = (score, name)
        if best is None:
            self._unschedulable.add(key)
            await self._mark_unschedulable(pod, unschedulable_message(len(nodes), all_reasons))
            return None
        self._unschedulable.discard(key)
        await self._bind(pod, best[1], requests)
        return None

    async def _bind(self, pod: JSONDict, node: str, requests: dict[str, int]) -> None:
        key = key_of(pod)
        namespace, name = split_key(key)
        now = format_time(self.clock.now())
        conditions = set_condition(
            list((pod.get("status") or {}).get("conditions") or []), "PodScheduled", "True", "", "", now
        )
        for cond in conditions:
            if cond["type"] == "PodScheduled":
                cond.pop("reason", None)
                cond.pop("message", None)
        self._charge(key, node, requests)
        self._assumed.add(key)
        try:
            await self.client.patch(
                PODS, name, {"status": {"conditions": conditions}}, namespace=namespace, subresource="status"
            )
            await self.client.patch(PODS, name, {"spec": {"nodeName": node}}, namespace=namespace)
        except (NotFound, Conflict):
            self._uncharge(key)
            self._assumed.discard(key)
            return
        except Exception:
            self._uncharge(key)
            self._assumed.discard(key)
            raise
        self.record(pod, "Normal", "Scheduled", f"Successfully assigned {namespace}/{name} to {node}")

    async def _mark_unschedulable(self, pod: JSONDict, message: str) -> None:
        current = condition(pod, "PodScheduled")
        if current and current.get("status") == "False" and current.get("message") == message:
            return
        namespace, name = split_key(key_of(pod))
        conditions = set_condition(
            list((pod.get("status") or {}).get("conditions") or []),
            "PodScheduled",
            "False",
            "Unschedulable",
            message,
            format_time(self.clock.now()),
            probe=True,
        )
        try:
            await self.client.patch(
                PODS,
                name,
                {"status": {"phase": "Pending", "conditions": conditions}},
                namespace=namespace,
                subresource="status",
            )
        except NotFound:
            return
        self.record(pod, "Warning", "FailedScheduling", message)


def _allocated_fraction(allocatable: dict[str, int], used: dict[str, int], requests: dict[str, int]) -> float:
    """LeastAllocated scoring over cpu and memory: lower means emptier (spread pods out)."""
    total = 0.0
    for resource in ("cpu", "memory"):
        capacity = allocatable.get(resource, 0)
        if capacity > 0:
            total += (used.get(resource, 0) + requests.get(resource, 0)) / capacity
    return total
