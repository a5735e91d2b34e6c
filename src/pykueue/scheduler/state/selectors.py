"""Label selectors, node-affinity terms and taint tolerations, evaluated on plain dicts.

Owns the small pieces of Kubernetes matching the scheduler needs: a ClusterQueue's
``namespaceSelector`` against namespace labels, and a pod template's nodeSelector / required
node affinity / tolerations against a ResourceFlavor (Kueue's flavor assignment, restricted to the flavor's
own label keys as Kueue does). Pure functions; callers are the cache and the flavor assigner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["find_untolerated_taint", "flavor_matches_affinity", "selector_matches", "taint_string"]


def _expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key = expr.get("key", "")
    op = expr.get("operator", "")
    values: list[str] = list(expr.get("values") or ())
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics; ``None`` matches nothing, ``{}`` matches everything."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(_expression_matches(expr, labels) for expr in selector.get("matchExpressions") or ())


def flavor_matches_affinity(
    node_selector: Mapping[str, str],
    affinity_terms: Sequence[Sequence[Mapping[str, Any]]] | None,
    flavor_labels: Mapping[str, str],
) -> bool:
    """Does a flavor's nodeLabels satisfy the pod's nodeSelector and required node affinity,
    both restricted to keys the flavor defines? A term left empty matches everything."""
    for key, value in node_selector.items():
        if key in flavor_labels and flavor_labels[key] != value:
            return False
    if not affinity_terms:
        return True
    filtered: list[list[Mapping[str, Any]]] = []
    for term in affinity_terms:
        kept = [e for e in term if e.get("key") in flavor_labels]
        if not kept:
            return True
        filtered.append(kept)
    return any(all(_expression_matches(e, flavor_labels) for e in term) for term in filtered)


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    return (toleration.get("value") or "") == (taint.get("value") or "")


def taint_string(taint: Mapping[str, Any]) -> str:
    """A taint as Go's %s prints corev1.Taint in Kueue's message: {key value effect <nil>}."""
    added = taint.get("timeAdded") or "<nil>"
    return f"{{{taint.get('key', '')} {taint.get('value') or ''} {taint.get('effect') or ''} {added}}}"


def find_untolerated_taint(
    taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """First NoSchedule/NoExecute taint no toleration tolerates, else None."""
    for taint in taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return taint
    return None
