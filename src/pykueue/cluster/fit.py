"""Does a pod fit a node? The pure predicates of the embedded pod binder.

Owned by ``cluster/``; called by :mod:`pykueue.cluster.binder`. Mirrors kube-scheduler's filter
plugins that matter for batch work (NodeUnschedulable, NodeName, NodeAffinity incl. nodeSelector,
TaintToleration, NodeResourcesFit) and its "0/N nodes are available: ..." message, so users read
the same explanation they would on a real cluster. No I/O: objects in, reasons out.
"""

from __future__ import annotations

from collections import Counter

from pykueue.api.meta.json_types import JSONDict
from pykueue.cluster.podutil import condition, node_allocatable

__all__ = ["fit_reasons", "node_is_schedulable", "tolerates", "unschedulable_message"]


AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
NODE_UNSCHEDULABLE = "node(s) were unschedulable"
NODE_NOT_READY = "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"


def _labels(node: JSONDict) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("labels") or {})


def _match_expression(expr: JSONDict, value_of: dict[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), list(expr.get("values") or [])
    present = key in value_of
    if op == "In":
        return present and value_of[key] in values
    if op == "NotIn":
        return not present or value_of[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            have, limit = int(value_of[key]), int(values[0])
        except ValueError:
            return False
        return have > limit if op == "Gt" else have < limit
    return False


def _matches_affinity(pod: JSONDict, node: JSONDict) -> bool:
    spec = pod.get("spec") or {}
    labels = _labels(node)
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if not required:
        return True
    fields = {"metadata.name": str((node.get("metadata") or {}).get("name") or "")}
    for term in required.get("nodeSelectorTerms") or []:
        exprs, field_exprs = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not field_exprs:
            continue  # an empty term matches no node
        if all(_match_expression(e, labels) for e in exprs) and all(_match_expression(e, fields) for e in field_exprs):
            return True
    return False


def tolerates(tolerations: list[JSONDict], taint: JSONDict) -> bool:
    for tol in tolerations:
        effect = tol.get("effect") or ""
        if effect and effect != taint.get("effect"):
            continue
        operator = tol.get("operator") or "Equal"
        key = tol.get("key") or ""
        if not key:
            if operator == "Exists":
                return True
            continue
        if key != taint.get("key"):
            continue
        if operator == "Exists" or (tol.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _untolerated_taint(pod: JSONDict, node: JSONDict) -> JSONDict | None:
    tolerations = list((pod.get("spec") or {}).get("tolerations") or [])
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not tolerates(tolerations, taint):
            return dict(taint)
    return None


def node_is_schedulable(node: JSONDict) -> bool:
    ready = condition(node, "Ready")
    return ready is not None and ready.get("status") == "True"


def fit_reasons(pod: JSONDict, node: JSONDict, requests: dict[str, int], used: dict[str, int]) -> list[str]:
    """Why ``pod`` (requesting ``requests``) cannot go to ``node`` (already holding ``used``); [] = fits."""
    if (node.get("spec") or {}).get("unschedulable"):
        return [NODE_UNSCHEDULABLE]
    if not node_is_schedulable(node):
        return [NODE_NOT_READY]
    if not _matches_affinity(pod, node):
        return [AFFINITY_MISMATCH]
    taint = _untolerated_taint(pod, node)
    if taint is not None:
        return [f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"]
    allocatable = node_allocatable(node)
    reasons = []
    for resource, amount in sorted(requests.items()):
        if amount <= 0:
            continue
        if used.get(resource, 0) + amount > allocatable.get(resource, 0):
            reasons.append("Too many pods" if resource == "pods" else f"Insufficient {resource}")
    return reasons


def unschedulable_message(total_nodes: int, reasons_per_node: list[list[str]]) -> str:
    """kube-scheduler's wording: "0/3 nodes are available: 1 Insufficient cpu, 2 Too many pods."."""
    if total_nodes == 0:
        return "no nodes available to schedule pods"
    histogram: Counter[str] = Counter(r for reasons in reasons_per_node for r in reasons)
    parts = sorted(f"{count} {reason}" for reason, count in histogram.items())
    return f"0/{total_nodes} nodes are available: {', '.join(parts)}."
