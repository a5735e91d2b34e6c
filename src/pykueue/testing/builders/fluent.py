"""Fluent builders for Kueue API objects as plain dicts (the shape `kubectl get -o json` shows).

Owns: typed constructors for ResourceFlavor, Cohort, ClusterQueue, LocalQueue, Namespace and
Workload dicts, so tests (ours and users') read like the table cases in Kueue's own test suite:
``make_cluster_queue("cq").cohort("team").quota("default", "cpu", 4).obj()``.

Who calls it: scheduler tests, property tests, the core benchmark, users testing their setups.

Invariant: ``obj()`` always returns a fresh dict that a Kubernetes API server would accept for the
kind (required fields present, resource groups rectangular); builders never share mutable state
with the dicts they return, so a test can mutate a returned object freely.
"""

from __future__ import annotations

import copy
from typing import Any, Self

from pykueue.api.meta.clock import format_time
from pykueue.api.meta.quantity import format_amount, to_amount

__all__ = [
    "ClusterQueueBuilder",
    "CohortBuilder",
    "FlavorBuilder",
    "LocalQueueBuilder",
    "WorkloadBuilder",
    "make_cluster_queue",
    "make_cohort",
    "make_flavor",
    "make_local_queue",
    "make_namespace",
    "make_workload",
]

KUEUE_API = "kueue.x-k8s.io/v1beta2"
Quantity = str | int | float


def _q(value: Quantity) -> str:
    """Quantities are written as strings, the way the API server echoes them back."""
    return str(value)


def make_namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A core/v1 Namespace; labels default to the well-known `kubernetes.io/metadata.name`."""
    all_labels = {"kubernetes.io/metadata.name": name, **(labels or {})}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": all_labels}}


class FlavorBuilder:
    """ResourceFlavor: node labels, taints, tolerations."""

    def __init__(self, name: str) -> None:
        self._obj: dict[str, Any] = {
            "apiVersion": KUEUE_API,
            "kind": "ResourceFlavor",
            "metadata": {"name": name},
            "spec": {},
        }

    def node_labels(self, **labels: str) -> Self:
        self._obj["spec"].setdefault("nodeLabels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> Self:
        self._obj["spec"].setdefault("nodeLabels", {})[key] = value
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> Self:
        taint: dict[str, Any] = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        self._obj["spec"].setdefault("nodeTaints", []).append(taint)
        return self

    def toleration(self, key: str, value: str = "", effect: str = "NoSchedule", operator: str = "Equal") -> Self:
        tol: dict[str, Any] = {"key": key, "operator": operator, "effect": effect}
        if value:
            tol["value"] = value
        self._obj["spec"].setdefault("tolerations", []).append(tol)
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._obj)


def make_flavor(name: str) -> FlavorBuilder:
    return FlavorBuilder(name)


class _QuotaHolder:
    """Resource groups shared by ClusterQueue and Cohort builders.

    ``quota()`` adds to the current group (flavors and covered resources in order of first
    appearance); ``new_group()`` starts the next group. ``obj()`` checks the group is rectangular
    (every flavor lists every covered resource, in covered order), as Kueue's webhook demands.
    """

    def __init__(self) -> None:
        self._groups: list[dict[str, dict[str, dict[str, Any]]]] = [{}]
        self._weight: str | None = None

    def quota(
        self,
        flavor: str,
        resource: str,
        nominal: Quantity,
        *,
        borrowing_limit: Quantity | None = None,
        lending_limit: Quantity | None = None,
    ) -> Self:
        entry: dict[str, Any] = {"name": resource, "nominalQuota": _q(nominal)}
        if borrowing_limit is not None:
            entry["borrowingLimit"] = _q(borrowing_limit)
        if lending_limit is not None:
            entry["lendingLimit"] = _q(lending_limit)
        self._groups[-1].setdefault(flavor, {})[resource] = entry
        return self

    def new_group(self) -> Self:
        if self._groups[-1]:
            self._groups.append({})
        return self

    def fair_weight(self, weight: Quantity) -> Self:
        self._weight = _q(weight)
        return self

    def _resource_groups(self, owner: str) -> list[dict[str, Any]]:
        groups: list[dict[str, Any]] = []
        for group in self._groups:
            if not group:
                continue
            covered: list[str] = []
            for resources in group.values():
                for res in resources:
                    if res not in covered:
                        covered.append(res)
            flavors = []
            for flavor, resources in group.items():
                missing = [r for r in covered if r not in resources]
                if missing:
                    raise ValueError(
                        f"{owner}: flavor {flavor!r} has no quota for {missing}; every flavor "
                        f"of a resource group must list all of {covered}"
                    )
                flavors.append({"name": flavor, "resources": [copy.deepcopy(resources[r]) for r in covered]})
            groups.append({"coveredResources": covered, "flavors": flavors})
        return groups


class ClusterQueueBuilder(_QuotaHolder):
    """ClusterQueue with every field the scheduler reads; defaults as Kueue's defaulting sets them."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self._spec: dict[str, Any] = {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO"}

    def cohort(self, name: str) -> Self:
        self._spec["cohortName"] = name
        return self

    def queueing_strategy(self, strategy: str) -> Self:
        self._spec["queueingStrategy"] = strategy
        return self

    def namespace_selector(self, selector: dict[str, Any] | None) -> Self:
        """``None`` removes the selector (no namespace eligible); ``{}`` admits every namespace."""
        if selector is None:
            self._spec.pop("namespaceSelector", None)
        else:
            self._spec["namespaceSelector"] = copy.deepcopy(selector)
        return self

    def preemption(
        self,
        *,
        within_cluster_queue: str | None = None,
        reclaim_within_cohort: str | None = None,
        borrow_within_cohort: str | None = None,
        max_priority_threshold: int | None = None,
    ) -> Self:
        pre = self._spec.setdefault("preemption", {})
        if within_cluster_queue is not None:
            pre["withinClusterQueue"] = within_cluster_queue
        if reclaim_within_cohort is not None:
            pre["reclaimWithinCohort"] = reclaim_within_cohort
        if borrow_within_cohort is not None:
            pre["borrowWithinCohort"] = {"policy": borrow_within_cohort}
            if max_priority_threshold is not None:
                pre["borrowWithinCohort"]["maxPriorityThreshold"] = max_priority_threshold
        return self

    def fungibility(
        self, *, when_can_borrow: str | None = None, when_can_preempt: str | None = None, preference: str | None = None
    ) -> Self:
        fung = self._spec.setdefault("flavorFungibility", {})
        if when_can_borrow is not None:
            fung["whenCanBorrow"] = when_can_borrow
        if when_can_preempt is not None:
            fung["whenCanPreempt"] = when_can_preempt
        if preference is not None:
            fung["preference"] = preference
        return self

    def stop_policy(self, policy: str) -> Self:
        self._spec["stopPolicy"] = policy
        return self

    def admission_checks(self, *names: str, on_flavors: list[str] | None = None) -> Self:
        rules = self._spec.setdefault("admissionChecksStrategy", {}).setdefault("admissionChecks", [])
        for name in names:
            rule: dict[str, Any] = {"name": name}
            if on_flavors:
                rule["onFlavors"] = list(on_flavors)
            rules.append(rule)
        return self

    def admission_fair_sharing(self, mode: str = "UsageBasedAdmissionFairSharing") -> Self:
        self._spec["admissionScope"] = {"admissionMode": mode}
        return self

    def obj(self) -> dict[str, Any]:
        spec = copy.deepcopy(self._spec)
        spec["resourceGroups"] = self._resource_groups(f"ClusterQueue {self._name}")
        if self._weight is not None:
            spec["fairSharing"] = {"weight": self._weight}
        return {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": self._name}, "spec": spec}


def make_cluster_queue(name: str) -> ClusterQueueBuilder:
    return ClusterQueueBuilder(name)


class CohortBuilder(_QuotaHolder):
    """Explicit Cohort: parent, shared quota pool, fair-sharing weight."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name
        self._parent: str | None = None

    def parent(self, name: str) -> Self:
        self._parent = name
        return self

    def obj(self) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if self._parent:
            spec["parentName"] = self._parent
        groups = self._resource_groups(f"Cohort {self._name}")
        if groups:
            spec["resourceGroups"] = groups
        if self._weight is not None:
            spec["fairSharing"] = {"weight": self._weight}
        return {"apiVersion": KUEUE_API, "kind": "Cohort", "metadata": {"name": self._name}, "spec": spec}


def make_cohort(name: str) -> CohortBuilder:
    return CohortBuilder(name)


class LocalQueueBuilder:
    def __init__(self, name: str, namespace: str, cluster_queue: str) -> None:
        self._obj: dict[str, Any] = {
            "apiVersion": KUEUE_API,
            "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cluster_queue},
        }

    def stop_policy(self, policy: str) -> Self:
        self._obj["spec"]["stopPolicy"] = policy
        return self

    def fair_weight(self, weight: Quantity) -> Self:
        self._obj["spec"]["fairSharing"] = {"weight": _q(weight)}
        return self

    def obj(self) -> dict[str, Any]:
        return copy.deepcopy(self._obj)


def make_local_queue(name: str, namespace: str, cluster_queue: str) -> LocalQueueBuilder:
    return LocalQueueBuilder(name, namespace, cluster_queue)


class WorkloadBuilder:
    """Workload with pod sets of single-container pods; optionally already holding quota.

    ``request()`` adds to the last pod set (a ``main`` pod set of count 1 is created on first use);
    ``pod_set()`` appends another. ``reserved()``/``admitted()`` write `status.admission` and the
    conditions the workload controller would have written, computing `resourceUsage` = per-pod
    request x count, so tests can start from a cluster that already runs work.
    """

    def __init__(self, name: str, namespace: str) -> None:
        self._name = name
        self._namespace = namespace
        self._meta: dict[str, Any] = {"name": name, "namespace": namespace}
        self._spec: dict[str, Any] = {"podSets": []}
        self._requests: list[dict[str, str]] = []
        self._status: dict[str, Any] = {}

    def uid(self, uid: str) -> Self:
        self._meta["uid"] = uid
        return self

    def created(self, epoch_seconds: float) -> Self:
        self._meta["creationTimestamp"] = format_time(epoch_seconds)
        return self

    def queue(self, name: str) -> Self:
        self._spec["queueName"] = name
        return self

    def priority(self, value: int) -> Self:
        self._spec["priority"] = value
        return self

    def active(self, value: bool) -> Self:
        self._spec["active"] = value
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def pod_set(
        self, name: str = "main", count: int = 1, *, min_count: int | None = None, **requests: Quantity
    ) -> Self:
        ps: dict[str, Any] = {"name": name, "count": count, "template": {"spec": {"containers": []}}}
        if min_count is not None:
            ps["minCount"] = min_count
        self._spec["podSets"].append(ps)
        self._requests.append({})
        for res, qty in requests.items():
            self.request(res, qty)
        return self

    def request(self, resource: str, quantity: Quantity) -> Self:
        if not self._spec["podSets"]:
            self.pod_set()
        self._requests[-1][resource] = _q(quantity)
        return self

    def node_selector(self, **labels: str) -> Self:
        if not self._spec["podSets"]:
            self.pod_set()
        self._spec["podSets"][-1]["template"]["spec"].setdefault("nodeSelector", {}).update(labels)
        return self

    def toleration(self, key: str, value: str = "", effect: str = "NoSchedule", operator: str = "Equal") -> Self:
        if not self._spec["podSets"]:
            self.pod_set()
        tol: dict[str, Any] = {"key": key, "operator": operator, "effect": effect}
        if value:
            tol["value"] = value
        self._spec["podSets"][-1]["template"]["spec"].setdefault("tolerations", []).append(tol)
        return self

    def reserved(
        self,
        cluster_queue: str,
        flavors: dict[str, str] | dict[str, dict[str, str]],
        *,
        admitted: bool = False,
        at: float | None = None,
    ) -> Self:
        """Hold quota in ``cluster_queue``. ``flavors`` is {resource: flavor} for every pod set, or
        {podset: {resource: flavor}}."""
        assignments = []
        for ps, reqs in zip(self._spec["podSets"], self._requests, strict=True):
            per_ps = flavors.get(ps["name"]) if isinstance(flavors.get(ps["name"]), dict) else flavors
            assert isinstance(per_ps, dict)
            usage = {r: format_amount(r, to_amount(r, q) * ps["count"]) for r, q in reqs.items()}
            assignments.append(
                {
                    "name": ps["name"],
                    "flavors": {r: per_ps[r] for r in reqs},
                    "resourceUsage": usage,
                    "count": ps["count"],
                }
            )
        when = format_time(at) if at is not None else "2023-11-14T22:13:20Z"
        conds = [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": f"Quota reserved in ClusterQueue {cluster_queue}",
                "lastTransitionTime": when,
            }
        ]
        if admitted:
            conds.append(
                {
                    "type": "Admitted",
                    "status": "True",
                    "reason": "Admitted",
                    "message": "The workload is admitted",
                    "lastTransitionTime": when,
                }
            )
        self._status = {
            "admission": {"clusterQueue": cluster_queue, "podSetAssignments": assignments},
            "conditions": conds,
        }
        return self

    def admitted(
        self, cluster_queue: str, flavors: dict[str, str] | dict[str, dict[str, str]], *, at: float | None = None
    ) -> Self:
        return self.reserved(cluster_queue, flavors, admitted=True, at=at)

    def finished(self, at: float | None = None) -> Self:
        when = format_time(at) if at is not None else "2023-11-14T22:13:20Z"
        self._status.setdefault("conditions", []).append(
            {
                "type": "Finished",
                "status": "True",
                "reason": "Succeeded",
                "message": "finished",
                "lastTransitionTime": when,
            }
        )
        return self

    def obj(self) -> dict[str, Any]:
        if not self._spec["podSets"]:
            self.pod_set()
        spec = copy.deepcopy(self._spec)
        for ps, reqs in zip(spec["podSets"], self._requests, strict=True):
            ps["template"]["spec"]["containers"] = [
                {"name": "c", "image": "busybox", "resources": {"requests": dict(reqs)}}
            ]
        out: dict[str, Any] = {
            "apiVersion": KUEUE_API,
            "kind": "Workload",
            "metadata": copy.deepcopy(self._meta),
            "spec": spec,
        }
        if self._status:
            out["status"] = copy.deepcopy(self._status)
        return out


def make_workload(name: str, namespace: str = "default") -> WorkloadBuilder:
    return WorkloadBuilder(name, namespace)
