"""An independent model of Kueue's quota tree (subtree quota, usage, available), for invariant checks.

Owns: recomputing, from nothing but the ClusterQueue / Cohort specs and the quota that admitted
workloads hold, whether any node of a cohort tree uses more than it may. It deliberately shares no
code with ``pykueue.scheduler``: the property tests compare the engine's decisions against it.

Rules (per flavor and resource):
  SubtreeQuota(N) = nominal(N) + sum over children c of (SubtreeQuota(c) - localQuota(c))
  localQuota(N)   = max(0, SubtreeQuota(N) - lendingLimit(N)) if N has a parent and a lendingLimit, else 0
  Usage(CQ)       = what its workloads hold; Usage(cohort) = sum over children of max(0, Usage(c) - localQuota(c))
Invariants: a node with a parent draws max(0, Usage - SubtreeQuota) <= borrowingLimit (when set);
a root uses Usage <= SubtreeQuota. Lending limits are enforced through localQuota/SubtreeQuota.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pykueue.api.meta.quantity import to_amount

FlavorResource = tuple[str, str]  # (flavor, resource)


@dataclass
class Node:
    name: str
    kind: str  # "ClusterQueue" | "Cohort"
    parent: str | None
    nominal: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing_limit: dict[FlavorResource, int] = field(default_factory=dict)
    lending_limit: dict[FlavorResource, int] = field(default_factory=dict)
    children: list[str] = field(default_factory=list)


def _quotas(spec: dict[str, Any], node: Node) -> None:
    for group in spec.get("resourceGroups") or []:
        for flavor in group["flavors"]:
            for res in flavor["resources"]:
                fr = (flavor["name"], res["name"])
                node.nominal[fr] = to_amount(res["name"], res["nominalQuota"])
                if res.get("borrowingLimit") is not None:
                    node.borrowing_limit[fr] = to_amount(res["name"], res["borrowingLimit"])
                if res.get("lendingLimit") is not None:
                    node.lending_limit[fr] = to_amount(res["name"], res["lendingLimit"])


class QuotaTree:
    """Cohorts and CQs as written by the user; implicit cohorts appear as quota-less roots."""

    def __init__(self, cohorts: list[dict[str, Any]], cluster_queues: list[dict[str, Any]]) -> None:
        self.nodes: dict[str, Node] = {}
        for obj in cohorts:
            node = Node(obj["metadata"]["name"], "Cohort", (obj.get("spec") or {}).get("parentName") or None)
            _quotas(obj.get("spec") or {}, node)
            self.nodes["Cohort/" + node.name] = node
        for obj in cluster_queues:
            node = Node(obj["metadata"]["name"], "ClusterQueue", obj["spec"].get("cohortName") or None)
            _quotas(obj["spec"], node)
            self.nodes["ClusterQueue/" + node.name] = node
        for key, node in list(self.nodes.items()):
            if node.parent is not None:
                parent_key = "Cohort/" + node.parent
                if parent_key not in self.nodes:
                    self.nodes[parent_key] = Node(node.parent, "Cohort", None)
                self.nodes[parent_key].children.append(key)
        self.frs = sorted({fr for n in self.nodes.values() for fr in n.nominal})

    def subtree(self, key: str, fr: FlavorResource) -> int:
        node = self.nodes[key]
        return node.nominal.get(fr, 0) + sum(self.subtree(c, fr) - self.local(c, fr) for c in node.children)

    def local(self, key: str, fr: FlavorResource) -> int:
        node = self.nodes[key]
        if node.parent is None or fr not in node.lending_limit:
            return 0
        return max(0, self.subtree(key, fr) - node.lending_limit[fr])

    def usage(self, key: str, fr: FlavorResource, cq_usage: dict[str, dict[FlavorResource, int]]) -> int:
        node = self.nodes[key]
        if node.kind == "ClusterQueue":
            return cq_usage.get(node.name, {}).get(fr, 0)
        return sum(max(0, self.usage(c, fr, cq_usage) - self.local(c, fr)) for c in node.children)

    def root_of(self, key: str) -> str:
        while self.nodes[key].parent is not None:
            key = "Cohort/" + str(self.nodes[key].parent)
        return key

    def violations(self, cq_usage: dict[str, dict[FlavorResource, int]]) -> list[str]:
        """Every node that uses more than its quota and borrowing allowance permit."""
        out: list[str] = []
        for fr in self.frs:
            for key, node in self.nodes.items():
                used = self.usage(key, fr, cq_usage)
                quota = self.subtree(key, fr)
                if node.parent is None:
                    if used > quota:
                        out.append(f"{key} {fr}: uses {used} > quota {quota} (root)")
                elif fr in node.borrowing_limit and used - quota > node.borrowing_limit[fr]:
                    out.append(f"{key} {fr}: uses {used}, quota {quota} + borrowingLimit {node.borrowing_limit[fr]}")
        return out
