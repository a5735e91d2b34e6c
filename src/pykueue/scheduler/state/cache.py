"""The scheduler cache: flavors, namespaces, the CQ/cohort tree and the workloads holding quota.

Owns the shape of the quota tree (explicit and implicit cohorts, ``parentName``, cycle
detection that makes every member CQ inactive), each CQ's Active status, and which workload
reserves quota where. Shape changes mark the tree dirty and it is rebuilt lazily before the next
read (O(tree)); workload admissions and releases update usage incrementally (O(depth)).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .clusterqueue import ClusterQueue, parse_quotas, parse_weight
from .cohort_tree import CohortNode, set_local
from .selectors import selector_matches
from .workload_info import WorkloadInfo, WorkloadKey

__all__ = ["Cache"]


class Cache:
    def __init__(self) -> None:
        self.flavors: dict[str, Mapping[str, Any]] = {}
        self.namespaces: dict[str, Mapping[str, str]] = {}
        self.cohort_specs: dict[str, Mapping[str, Any]] = {}
        self.cqs: dict[str, ClusterQueue] = {}
        self.cohorts: dict[str, CohortNode] = {}
        self.reserved: dict[WorkloadKey, WorkloadInfo] = {}
        self.orphans: dict[WorkloadKey, WorkloadInfo] = {}
        self.not_ready: set[WorkloadKey] = set()
        """Workloads holding quota whose pods are not ready (waitForPodsReady.blockAdmission)."""
        self._dirty = True
        self.version = 0
        """Bumped by every change that can turn a ClusterQueue active or inactive (a CQ, cohort or
        flavor written or deleted): per-cycle views of the CQs are memoised on it."""

    # -- shape -------------------------------------------------------------------------------
    def mark_dirty(self) -> None:
        self._dirty = True
        self.version += 1

    def ensure_fresh(self) -> None:
        if self._dirty:
            self._rebuild()
            self._dirty = False

    def _rebuild(self) -> None:
        cohorts: dict[str, CohortNode] = {}

        def node(name: str) -> CohortNode:
            found = cohorts.get(name)
            if found is None:
                found = cohorts[name] = CohortNode(name)
            return found

        for name, spec in self.cohort_specs.items():
            cohort = node(name)
            cohort.explicit = True
            cohort.parent_name = spec.get("parentName") or ""
            _, cohort.quotas = parse_quotas(list(spec.get("resourceGroups") or ()))
            cohort.fair_weight = parse_weight(spec)
            if cohort.parent_name:
                node(cohort.parent_name)
        for cq in self.cqs.values():
            if cq.cohort_name:
                node(cq.cohort_name)
        for cohort in cohorts.values():
            cohort.parent = cohorts[cohort.parent_name] if cohort.parent_name else None
        self._mark_cycles(cohorts)
        for cohort in cohorts.values():
            if cohort.parent is not None:
                cohort.parent.child_cohorts.append(cohort)
        for cq in sorted(self.cqs.values(), key=lambda c: c.name):
            parent = cohorts.get(cq.cohort_name) if cq.cohort_name else None
            cq.parent = parent
            cq.cyclic = parent.cyclic if parent is not None else False
            if parent is not None:
                parent.child_cqs.append(cq)
            else:
                cq.subtree = {fr: q.nominal for fr, q in cq.quotas.items()}
                set_local(cq)
        for cohort in cohorts.values():
            if cohort.parent is None:
                cohort.compute_quotas()
        for cq in self.cqs.values():
            root = cq.root()
            cq.tree_key = ("cohort/" if root is not cq else "cq/") + root.name
        self.cohorts = cohorts

    @staticmethod
    def _mark_cycles(cohorts: dict[str, CohortNode]) -> None:
        """A cohort whose parent chain loops is cyclic, and so is everything below the loop.
        The loop itself is cut so the structure is a forest."""
        state: dict[str, int] = {}  # 1 = on the current path, 2 = done
        for start in cohorts.values():
            path: list[CohortNode] = []
            current: CohortNode | None = start
            while current is not None and state.get(current.name) is None:
                state[current.name] = 1
                path.append(current)
                current = current.parent
            cyclic = False
            if current is not None and state.get(current.name) == 1:
                cyclic = True
                loop_start = path.index(current)
                for member in path[loop_start:]:
                    member.cyclic = True
                    member.parent = None
            elif current is not None:
                cyclic = current.cyclic
            for member in path:
                member.cyclic = member.cyclic or cyclic
                state[member.name] = 2

    # -- read side ---------------------------------------------------------------------------
    def tree_key(self, cq: ClusterQueue) -> str:
        """Identity of the cohort tree (or lone CQ) ``cq`` belongs to; cached at rebuild."""
        return cq.tree_key

    def tree_cqs(self, cq: ClusterQueue) -> Iterator[ClusterQueue]:
        root = cq.root()
        if root is cq:
            yield cq
            return
        stack = [root]
        while stack:
            current = stack.pop()
            if isinstance(current, CohortNode):
                stack.extend(current.child_cohorts)
                for child in current.child_cqs:
                    if isinstance(child, ClusterQueue):
                        yield child

    def namespace_matches(self, cq: ClusterQueue, namespace: str) -> bool:
        labels = self.namespaces.get(namespace)
        if labels is None:
            return False
        return selector_matches(cq.namespace_selector, labels)

    def cq_status(self, cq: ClusterQueue) -> tuple[bool, str, str]:
        """(active, reason, message) of the CQ's Active condition."""
        if cq.deleting:
            return False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
        reasons: list[str] = []
        messages: list[str] = []
        if cq.stop_policy != "None":
            reasons.append("Stopped")
            messages.append("is stopped")
        missing = [f for f in cq.flavor_names if f not in self.flavors]
        if missing:
            reasons.append("FlavorNotFound")
            messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
        if cq.cyclic:
            reasons.append("Unknown")
            messages.append("cohort hierarchy has a cycle")
        if reasons:
            return False, reasons[0], "Can't admit new workloads: " + ", ".join(messages) + "."
        return True, "Ready", "Can admit new workloads"

    def is_active(self, cq: ClusterQueue) -> bool:
        return (
            not cq.deleting
            and cq.stop_policy == "None"
            and not cq.cyclic
            and all(f in self.flavors for f in cq.flavor_names)
        )

    # -- workloads holding quota -------------------------------------------------------------
    def add_reserved(self, wl: WorkloadInfo) -> None:
        if wl.key in self.reserved:
            self.remove_reserved(wl.key)
        self.reserved[wl.key] = wl
        if not wl.pods_ready:
            self.not_ready.add(wl.key)
        cq = self.cqs.get(wl.cq_name)
        if cq is None:
            self.orphans[wl.key] = wl
        else:
            cq.add_workload(wl)

    def replace_reserved(self, held: WorkloadInfo, wl: WorkloadInfo) -> None:
        """Swap the record of a reservation whose CQ and usage did not change (no usage moves)."""
        self.reserved[wl.key] = wl
        if wl.pods_ready:
            self.not_ready.discard(wl.key)
        else:
            self.not_ready.add(wl.key)
        if self.orphans and self.orphans.get(wl.key) is held:
            self.orphans[wl.key] = wl
            return
        cq = self.cqs.get(wl.cq_name)
        if cq is not None:
            cq.replace_workload(held, wl)

    def refreshed(self, wl: WorkloadInfo, was_admitted: bool) -> None:
        """A reserved record was updated in place (same CQ, same usage): its Admitted/PodsReady
        flags may have flipped."""
        if wl.pods_ready:
            self.not_ready.discard(wl.key)
        else:
            self.not_ready.add(wl.key)
        if self.orphans and self.orphans.get(wl.key) is wl:
            return
        cq = self.cqs.get(wl.cq_name)
        if cq is not None:
            cq.admitted_flipped(wl, was_admitted)

    def reranked(self, wl: WorkloadInfo) -> None:
        """A reserved record was updated in place with another reservation time or eviction mark:
        both order it among preemption candidates, so remembered preemption answers of its tree go
        stale (``ClusterQueue.touched``)."""
        cq = self.cqs.get(wl.cq_name)
        if cq is not None and cq.workloads.get(wl.key) is wl:
            cq.touched()

    def remove_reserved(self, key: WorkloadKey) -> WorkloadInfo | None:
        wl = self.reserved.pop(key, None)
        if wl is None:
            return None
        self.not_ready.discard(key)
        if not self.orphans or self.orphans.pop(key, None) is None:
            cq = self.cqs.get(wl.cq_name)
            if cq is not None:
                cq.remove_workload(key)
        return wl

    def attach_orphans(self, cq: ClusterQueue) -> None:
        for key, wl in list(self.orphans.items()):
            if wl.cq_name == cq.name:
                del self.orphans[key]
                cq.add_workload(wl)

    def detach(self, cq: ClusterQueue) -> None:
        for key, wl in list(cq.workloads.items()):
            cq.remove_workload(key)
            self.orphans[key] = wl
