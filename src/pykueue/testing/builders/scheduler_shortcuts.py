"""One-call shortcuts for the scheduler engine's tests: Kueue objects as plain dicts, and an engine fed them.

Owns: positional, terse constructors (``workload("a", cpu="2", priority=5)``, ``CQ("cq").group("cpu")
.flavor("default", cpu=4)``), status shortcuts that put a workload in the state the workload
controller would have written (``admitted``, ``finished``, ``apply_admit``) and ``make_scheduler``,
which feeds objects to a :class:`~pykueue.scheduler.Scheduler` by kind.

Why next to the fluent builders: the scheduler's table tests write hundreds of objects that differ in
one or two fields; a one-line call per object keeps those tables readable. Unlike the fluent
builders these shortcuts do not check that a resource group is rectangular, so a test can hand the
engine exactly the object it wants.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.clock import format_time
from pykueue.scheduler import ManualClock, Scheduler, SchedulerConfig

T0 = 1_700_000_000.0


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}


def flavor(
    name: str,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if labels:
        spec["nodeLabels"] = labels
    if taints:
        spec["nodeTaints"] = taints
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


class CQ:
    """ClusterQueue dict shortcut: ``CQ("cq").cohort("team").group("cpu").flavor("default", cpu=4).obj()``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.spec: dict[str, Any] = {"namespaceSelector": {}, "resourceGroups": []}
        self._groups: dict[tuple[str, ...], dict[str, Any]] = {}

    def cohort(self, name: str) -> CQ:
        self.spec["cohortName"] = name
        return self

    def group(self, *resources: str) -> CQ:
        g = {"coveredResources": list(resources), "flavors": []}
        self.spec["resourceGroups"].append(g)
        self._current = g
        return self

    def flavor(self, name: str, **quotas: Any) -> CQ:
        """quotas: resource=nominal or resource=(nominal, borrowingLimit, lendingLimit)."""
        if not self.spec["resourceGroups"]:
            self.group(*quotas)
        g = self.spec["resourceGroups"][-1]
        resources = []
        for res in g["coveredResources"]:
            value = quotas.get(res.replace("/", "_").replace(".", "_").replace("-", "_"), quotas.get(res, 0))
            entry: dict[str, Any] = {"name": res}
            if isinstance(value, tuple):
                entry["nominalQuota"] = str(value[0])
                if len(value) > 1 and value[1] is not None:
                    entry["borrowingLimit"] = str(value[1])
                if len(value) > 2 and value[2] is not None:
                    entry["lendingLimit"] = str(value[2])
            else:
                entry["nominalQuota"] = str(value)
            resources.append(entry)
        g["flavors"].append({"name": name, "resources": resources})
        return self

    def strategy(self, value: str) -> CQ:
        self.spec["queueingStrategy"] = value
        return self

    def preemption(
        self, within: str = "Never", reclaim: str = "Never", borrow: str = "Never", threshold: int | None = None
    ) -> CQ:
        bwc: dict[str, Any] = {"policy": borrow}
        if threshold is not None:
            bwc["maxPriorityThreshold"] = threshold
        self.spec["preemption"] = {
            "withinClusterQueue": within,
            "reclaimWithinCohort": reclaim,
            "borrowWithinCohort": bwc,
        }
        return self

    def fungibility(
        self, borrow: str = "MayStopSearch", preempt: str = "TryNextFlavor", preference: str | None = None
    ) -> CQ:
        f: dict[str, Any] = {"whenCanBorrow": borrow, "whenCanPreempt": preempt}
        if preference:
            f["preference"] = preference
        self.spec["flavorFungibility"] = f
        return self

    def set(self, key: str, value: Any) -> CQ:
        self.spec[key] = value
        return self

    def obj(self) -> dict[str, Any]:
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": self.name},
            "spec": self.spec,
        }


def cohort(
    name: str, parent: str = "", groups: list[dict[str, Any]] | None = None, weight: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if parent:
        spec["parentName"] = parent
    if groups:
        spec["resourceGroups"] = groups
    if weight is not None:
        spec["fairSharing"] = {"weight": weight}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def local_queue(namespace: str, name: str, cq: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"clusterQueue": cq, **spec},
    }


def workload(
    name: str,
    queue: str = "lq",
    namespace: str = "ns",
    *,
    cpu: str | None = "1",
    count: int = 1,
    priority: int | None = None,
    created: float = T0,
    min_count: int | None = None,
    requests: dict[str, str] | None = None,
    podsets: list[dict[str, Any]] | None = None,
    uid: str | None = None,
    **extra_spec: Any,
) -> dict[str, Any]:
    if podsets is None:
        res = dict(requests or {})
        if cpu is not None and "cpu" not in res:
            res["cpu"] = cpu
        ps: dict[str, Any] = {
            "name": "main",
            "count": count,
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": res}}]}},
        }
        if min_count is not None:
            ps["minCount"] = min_count
        podsets = [ps]
    spec: dict[str, Any] = {"queueName": queue, "podSets": podsets, **extra_spec}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "namespace": namespace,
            "name": name,
            "uid": uid or f"uid-{name}",
            "creationTimestamp": format_time(created),
        },
        "spec": spec,
    }


def admitted(
    wl: dict[str, Any],
    cq: str,
    flavors: dict[str, str],
    usage: dict[str, str],
    count: int | None = None,
    at: float = T0,
    evicted: bool = False,
) -> dict[str, Any]:
    """Return a copy of ``wl`` holding quota in ``cq`` (QuotaReserved + Admitted)."""
    out = {
        **wl,
        "status": {
            "admission": {
                "clusterQueue": cq,
                "podSetAssignments": [
                    {
                        "name": wl["spec"]["podSets"][0]["name"],
                        "flavors": flavors,
                        "resourceUsage": usage,
                        "count": count if count is not None else wl["spec"]["podSets"][0]["count"],
                    }
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "lastTransitionTime": format_time(at),
                },
                {"type": "Admitted", "status": "True", "reason": "Admitted", "lastTransitionTime": format_time(at)},
            ],
        },
    }
    if evicted:
        out["status"]["conditions"].append(
            {"type": "Evicted", "status": "True", "reason": "Preempted", "lastTransitionTime": format_time(at)}
        )
    return out


def finished(wl: dict[str, Any]) -> dict[str, Any]:
    status = dict(wl.get("status") or {})
    status["conditions"] = [
        *status.get("conditions", []),
        {"type": "Finished", "status": "True", "reason": "Succeeded"},
    ]
    return {**wl, "status": status}


def apply_admit(sched: Scheduler, wl: dict[str, Any], admit: Any) -> dict[str, Any]:
    """What the workload controller writes back after an Admit decision."""
    out = {
        **wl,
        "status": {
            "admission": admit.admission,
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "lastTransitionTime": format_time(sched.clock.now()),
                },
                {
                    "type": "Admitted",
                    "status": "True" if not admit.admission_checks else "False",
                    "reason": "Admitted",
                    "lastTransitionTime": format_time(sched.clock.now()),
                },
            ],
        },
    }
    sched.upsert_workload(out)
    return out


def make_scheduler(*objs: dict[str, Any], config: SchedulerConfig | None = None, now: float = T0 + 1000) -> Scheduler:
    """A Scheduler fed ``objs`` in order (dispatched by kind), with namespace "ns" present."""
    s = Scheduler(config or SchedulerConfig(), clock=ManualClock(now))
    s.upsert_namespace(namespace("ns"))
    for obj in objs:
        kind = obj["kind"]
        if kind == "Namespace":
            s.upsert_namespace(obj)
        elif kind == "ResourceFlavor":
            s.upsert_resource_flavor(obj)
        elif kind == "Cohort":
            s.upsert_cohort(obj)
        elif kind == "ClusterQueue":
            s.upsert_cluster_queue(obj)
        elif kind == "LocalQueue":
            s.upsert_local_queue(obj)
        elif kind == "Workload":
            s.upsert_workload(obj)
        else:  # pragma: no cover - test bug
            raise ValueError(kind)
    return s


def by_name(items: list[Any]) -> dict[str, Any]:
    return {item.name: item for item in items}
