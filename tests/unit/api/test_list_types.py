"""Every list in Kueue's and JobSet's schemas carries the list type its real CRD declares.

The table lists each map and set list (keys as the upstream CRDs declare them); every other list
must be atomic (no ``x-kubernetes-list-type``, or ``atomic``). A list added to a schema without a
row here fails, so a new keyed list cannot slip in unkeyed.
"""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.catalogue import build_catalogue
from pykueue.api.schema.list_types import list_keys

KUEUE = "kueue.x-k8s.io"

_FLAVOR_USAGE = {
    "status.flavorsReservation": "name",
    "status.flavorsReservation.resources": "name",
    "status.flavorsUsage": "name",
    "status.flavorsUsage.resources": "name",
}
_RESOURCE_GROUPS = {"spec.resourceGroups.flavors": "name", "spec.resourceGroups.flavors.resources": "name"}

EXPECTED: dict[tuple[str, str, str], dict[str, str]] = {
    (KUEUE, "ResourceFlavor", "v1beta2"): {},
    (KUEUE, "ClusterQueue", "v1beta2"): {
        **_RESOURCE_GROUPS,
        "spec.admissionChecksStrategy.admissionChecks": "name",
        "spec.admissionChecksStrategy.admissionChecks.onFlavors": "",
        "status.conditions": "type",
        **_FLAVOR_USAGE,
    },
    (KUEUE, "Cohort", "v1beta2"): {**_RESOURCE_GROUPS, "status.conditions": "type"},
    (KUEUE, "LocalQueue", "v1beta2"): {"status.conditions": "type", **_FLAVOR_USAGE},
    (KUEUE, "Workload", "v1beta2"): {
        "spec.podSets": "name",
        "spec.preemptionGates": "name",
        "status.conditions": "type",
        "status.admission.podSetAssignments": "name",
        "status.reclaimablePods": "name",
        "status.admissionChecks": "name",
        "status.admissionChecks.podSetUpdates": "name",
        "status.resourceRequests": "name",
        "status.schedulingStats.evictions": "reason,underlyingCause",
        "status.nominatedClusterNames": "",
        "status.unhealthyNodes": "name",
        "status.preemptionGates": "name",
    },
    (KUEUE, "WorkloadPriorityClass", "v1beta2"): {},
    (KUEUE, "AdmissionCheck", "v1beta2"): {"status.conditions": "type"},
    (KUEUE, "Topology", "v1beta2"): {},
    ("jobset.x-k8s.io", "JobSet", "v1alpha2"): {
        "spec.replicatedJobs": "name",
        "spec.replicatedJobs.dependsOn": "name",
        "status.conditions": "type",
        "status.replicatedJobsStatus": "name",
    },
}

# Embedded PodTemplateSpecs come from the core types' schemas, not from Kueue's or JobSet's.
_POD_TEMPLATES = ("spec.podSets.template.", "spec.replicatedJobs.template.")

_CATALOGUE = build_catalogue()


def schema_for(group: str, kind: str, version: str) -> dict[str, Any]:
    found = _CATALOGUE.by_kind(group, kind)
    assert found is not None, kind
    return found.schema[version]


def _own(keys: dict[str, str]) -> dict[str, str]:
    return {
        path: key
        for path, key in keys.items()
        if not path.startswith(_POD_TEMPLATES) and not path.startswith("metadata.")
    }


def _unkeyed_lists(node: Any, path: str, out: list[str]) -> None:
    if not isinstance(node, dict):
        return
    if node.get("type") == "array":
        if node.get("x-kubernetes-list-type") not in (None, "atomic", "map", "set"):
            out.append(path)
        _unkeyed_lists(node.get("items"), path, out)
        return
    for name, child in (node.get("properties") or {}).items():
        _unkeyed_lists(child, f"{path}.{name}" if path else name, out)


@pytest.mark.parametrize(("group", "kind", "version"), sorted(EXPECTED))
def test_keyed_lists_match_the_real_crds(group: str, kind: str, version: str) -> None:
    assert _own(list_keys(schema_for(group, kind, version))) == EXPECTED[(group, kind, version)]


@pytest.mark.parametrize(("group", "kind", "version"), sorted(EXPECTED))
def test_every_list_type_is_one_kubernetes_knows(group: str, kind: str, version: str) -> None:
    bad: list[str] = []
    _unkeyed_lists(schema_for(group, kind, version), "", bad)
    assert bad == []


def test_v1beta1_keeps_the_same_keys_where_the_paths_are_the_same() -> None:
    v1beta1 = _own(list_keys(schema_for(KUEUE, "Workload", "v1beta1")))
    for path in ("spec.podSets", "status.conditions", "status.admission.podSetAssignments"):
        assert v1beta1[path] == EXPECTED[(KUEUE, "Workload", "v1beta2")][path]


EXPLICITLY_ATOMIC = {
    (KUEUE, "ResourceFlavor", "v1beta2"): ("spec.nodeTaints", "spec.tolerations"),
    (KUEUE, "ClusterQueue", "v1beta2"): ("spec.resourceGroups",),
    (KUEUE, "Cohort", "v1beta2"): ("spec.resourceGroups",),
}


@pytest.mark.parametrize(("group", "kind", "version"), sorted(EXPLICITLY_ATOMIC))
def test_lists_the_real_crds_mark_atomic_say_so(group: str, kind: str, version: str) -> None:
    for path in EXPLICITLY_ATOMIC[(group, kind, version)]:
        node: Any = schema_for(group, kind, version)
        for part in path.split("."):
            node = node["properties"][part]
        assert node.get("x-kubernetes-list-type") == "atomic", path
