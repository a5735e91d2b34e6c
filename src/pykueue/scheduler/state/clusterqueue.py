"""A ClusterQueue: its parsed spec (groups, quotas, policies) and the workloads holding its quota.

Owns the translation of a ClusterQueue dict into a resource node of the quota tree, plus the set
of workloads reserving quota in it and its admitted-only usage (for ``flavorsUsage``). The cache
creates/updates it on ``upsert_cluster_queue``; flavor assignment, preemption and the cycle read
it. Invariant: ``usage`` == Σ ``usage`` of ``workloads`` (+ this cycle's assumed reservations).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pykueue.api.meta.quantity import to_amount

from .cohort_tree import Quota, ResourceNode
from .resource_amounts import FlavorResource
from .workload_info import WorkloadInfo, WorkloadKey

__all__ = ["ClusterQueue", "ResourceGroup", "parse_weight"]

NEVER = "Never"
LOWER_PRIORITY = "LowerPriority"
LOWER_OR_NEWER_EQUAL = "LowerOrNewerEqualPriority"
ANY = "Any"
STRICT_FIFO = "StrictFIFO"
BEST_EFFORT_FIFO = "BestEffortFIFO"
TRY_NEXT_FLAVOR = "TryNextFlavor"
MAY_STOP_SEARCH = "MayStopSearch"
PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"


class ResourceGroup:
    __slots__ = ("covered", "flavors")

    def __init__(self, covered: tuple[str, ...], flavors: tuple[str, ...]) -> None:
        self.covered = covered
        self.flavors = flavors


def parse_weight(spec: Mapping[str, Any]) -> float:
    weight = (spec.get("fairSharing") or {}).get("weight")
    if weight is None:
        return 1.0
    return to_amount("cpu", weight) / 1000.0


def parse_quotas(groups: list[Mapping[str, Any]]) -> tuple[list[ResourceGroup], dict[FlavorResource, Quota]]:
    parsed: list[ResourceGroup] = []
    quotas: dict[FlavorResource, Quota] = {}
    for group in groups:
        covered = tuple(group.get("coveredResources") or ())
        flavors: list[str] = []
        for flavor in group.get("flavors") or ():
            fname = flavor["name"]
            flavors.append(fname)
            for res in flavor.get("resources") or ():
                rname = res["name"]
                bl = res.get("borrowingLimit")
                ll = res.get("lendingLimit")
                quotas[(fname, rname)] = Quota(
                    to_amount(rname, res.get("nominalQuota", 0)),
                    to_amount(rname, bl) if bl is not None else None,
                    to_amount(rname, ll) if ll is not None else None,
                )
        parsed.append(ResourceGroup(covered, tuple(flavors)))
    return parsed, quotas


class ClusterQueue(ResourceNode):
    __slots__ = (
        "admission_checks",
        "admitted_count",
        "admitted_usage",
        "afs",
        "borrow_within_cohort",
        "cohort_name",
        "cyclic",
        "deleting",
        "max_priority_threshold",
        "namespace_selector",
        "plans",
        "preference",
        "reclaim_within_cohort",
        "resource_groups",
        "rg_by_resource",
        "spec",
        "stop_policy",
        "strategy",
        "tree_key",
        "when_can_borrow",
        "when_can_preempt",
        "within_cluster_queue",
        "workloads",
    )

    is_cq = True

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.spec: Mapping[str, Any] = {}
        self.workloads: dict[WorkloadKey, WorkloadInfo] = {}
        self.admitted_usage: dict[FlavorResource, int] = {}
        self.admitted_count = 0
        self.cyclic = False
        self.deleting = False
        self.cohort_name = ""
        self.resource_groups: list[ResourceGroup] = []
        self.rg_by_resource: dict[str, ResourceGroup] = {}
        self.strategy = BEST_EFFORT_FIFO
        self.namespace_selector: Mapping[str, Any] | None = None
        self.when_can_borrow = MAY_STOP_SEARCH
        self.when_can_preempt = TRY_NEXT_FLAVOR
        self.preference: str | None = None
        self.within_cluster_queue = NEVER
        self.reclaim_within_cohort = NEVER
        self.borrow_within_cohort = NEVER
        self.max_priority_threshold: int | None = None
        self.admission_checks: list[tuple[str, tuple[str, ...]]] = []
        self.stop_policy = "None"
        self.afs = False
        self.tree_key = "cq/" + name
        self.plans: dict[int, tuple[Any, Any]] = {}
        """flavorassigner.plain_fit's per-pod-set plans for this spec (cleared by ``load``)."""

    def load(self, obj: Mapping[str, Any]) -> None:
        """Parse the spec; usage and workloads are kept (they do not depend on the spec)."""
        spec = obj.get("spec") or {}
        self.spec = spec
        self.plans = {}
        self.deleting = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
        self.cohort_name = spec.get("cohortName") or spec.get("cohort") or ""
        self.resource_groups, self.quotas = parse_quotas(list(spec.get("resourceGroups") or ()))
        self.rg_by_resource = {r: g for g in self.resource_groups for r in g.covered}
        self.strategy = spec.get("queueingStrategy") or BEST_EFFORT_FIFO
        self.namespace_selector = spec.get("namespaceSelector")
        fung = spec.get("flavorFungibility") or {}
        borrow = fung.get("whenCanBorrow") or MAY_STOP_SEARCH
        preempt = fung.get("whenCanPreempt") or TRY_NEXT_FLAVOR
        self.when_can_borrow = MAY_STOP_SEARCH if borrow == "Borrow" else borrow
        self.when_can_preempt = MAY_STOP_SEARCH if preempt == "Preempt" else preempt
        self.preference = fung.get("preference")
        pre = spec.get("preemption") or {}
        self.within_cluster_queue = pre.get("withinClusterQueue") or NEVER
        self.reclaim_within_cohort = pre.get("reclaimWithinCohort") or NEVER
        bwc = pre.get("borrowWithinCohort") or {}
        self.borrow_within_cohort = bwc.get("policy") or NEVER
        threshold = bwc.get("maxPriorityThreshold")
        self.max_priority_threshold = int(threshold) if threshold is not None else None
        checks: list[tuple[str, tuple[str, ...]]] = []
        strategy = spec.get("admissionChecksStrategy") or {}
        for rule in strategy.get("admissionChecks") or ():
            checks.append((rule["name"], tuple(rule.get("onFlavors") or ())))
        for name in spec.get("admissionChecks") or ():
            checks.append((name, ()))
        self.admission_checks = checks
        self.stop_policy = spec.get("stopPolicy") or "None"
        self.fair_weight = parse_weight(spec)
        scope = spec.get("admissionScope") or {}
        self.afs = scope.get("admissionMode") == "UsageBasedAdmissionFairSharing"

    @property
    def flavor_names(self) -> list[str]:
        return [f for g in self.resource_groups for f in g.flavors]

    def checks_for(self, flavors: set[str]) -> list[str]:
        """Admission checks that apply to an assignment using ``flavors`` (``admissionChecksStrategy``)."""
        if not self.admission_checks:
            return []
        return sorted({name for name, on in self.admission_checks if not on or flavors.intersection(on)})

    # -- workloads ---------------------------------------------------------------------------
    def touched(self) -> None:
        """The workloads held here changed (or one changed in place: its reservation time or eviction
        mark, or a preemption was issued against it): bump the tree's epoch (remembered preemption
        answers of the tree go stale)."""
        self.root().epoch += 1

    def add_workload(self, wl: WorkloadInfo) -> None:
        self.touched()
        self.workloads[wl.key] = wl
        self.add_usage(wl.usage, 1)
        if wl.admitted:
            self.admitted_count += 1
            for fr, amount in wl.usage.items():
                self.admitted_usage[fr] = self.admitted_usage.get(fr, 0) + amount

    def replace_workload(self, held: WorkloadInfo, wl: WorkloadInfo) -> None:
        """Same usage, new record (e.g. Admitted flipped to True): only admitted-usage moves."""
        self.touched()
        self.workloads[wl.key] = wl
        if held.admitted != wl.admitted:
            sign = 1 if wl.admitted else -1
            self.admitted_count += sign
            for fr, amount in wl.usage.items():
                self.admitted_usage[fr] = self.admitted_usage.get(fr, 0) + sign * amount

    def admitted_flipped(self, wl: WorkloadInfo, was_admitted: bool) -> None:
        """``wl`` (held here, updated in place) was ``was_admitted``: move admitted usage if it changed."""
        if was_admitted != wl.admitted:
            sign = 1 if wl.admitted else -1
            self.admitted_count += sign
            for fr, amount in wl.usage.items():
                self.admitted_usage[fr] = self.admitted_usage.get(fr, 0) + sign * amount

    def remove_workload(self, key: WorkloadKey) -> WorkloadInfo | None:
        wl = self.workloads.pop(key, None)
        if wl is None:
            return None
        self.touched()
        self.add_usage(wl.usage, -1)
        if wl.admitted:
            self.admitted_count -= 1
            for fr, amount in wl.usage.items():
                self.admitted_usage[fr] = self.admitted_usage.get(fr, 0) - amount
        return wl
