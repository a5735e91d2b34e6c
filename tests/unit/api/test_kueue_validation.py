"""Every validation rule of Kueue's ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
WorkloadPriorityClass, AdmissionCheck and Topology: one bad object per rule, exact field path."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from pykueue.testing.builders.raw_specs import KUEUE, check, cluster_queue, info


def _rg(covered: list[str], flavors: list[tuple[str, list[tuple[str, Any]]]]) -> dict[str, Any]:
    return {
        "coveredResources": covered,
        "flavors": [
            {"name": f, "resources": [{"name": r, "nominalQuota": q} for r, q in resources]} for f, resources in flavors
        ],
    }


def _cq_with(**spec: Any) -> dict[str, Any]:
    return cluster_queue(**spec)


def _quota_cq(cohort: str | None = None, **quota: Any) -> dict[str, Any]:
    cq = cluster_queue(cohort=cohort)
    cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(quota)
    return cq


def _rf(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{KUEUE}/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "rf"}, "spec": spec}


def _cohort(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{KUEUE}/v1beta2", "kind": "Cohort", "metadata": {"name": "co"}, "spec": spec}


def _lq(cq: str = "cq", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "default"},
        "spec": {"clusterQueue": cq, **spec},
    }


def _topology(*labels: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "Topology",
        "metadata": {"name": "topo"},
        "spec": {"levels": [{"nodeLabel": label} for label in labels]},
    }


def _ac(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "ac"},
        "spec": {"controllerName": "example.com/ctrl", **spec},
    }


_CQ_PATH = "spec.resourceGroups[0].flavors[0].resources[0]"
_TWO_GROUPS_SAME_FLAVOR = [_rg(["cpu"], [("f", [("cpu", 1)])]), _rg(["memory"], [("f", [("memory", 1)])])]
_TWO_GROUPS_SAME_RESOURCE = [_rg(["cpu"], [("f1", [("cpu", 1)])]), _rg(["cpu"], [("f2", [("cpu", 1)])])]


@dataclass
class Case:
    name: str
    kind: str
    obj: dict[str, Any]
    want_field: str
    want_message: str
    old: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


CASES = [
    # ---- ClusterQueue
    Case(
        "negative nominalQuota",
        "ClusterQueue",
        _quota_cq(nominalQuota="-1"),
        f"{_CQ_PATH}.nominalQuota",
        "must be greater than or equal to 0",
    ),
    Case(
        "bad quantity",
        "ClusterQueue",
        _quota_cq(nominalQuota="four"),
        f"{_CQ_PATH}.nominalQuota",
        "quantities must match the regular expression",
    ),
    Case(
        "borrowingLimit without cohort (webhook)",
        "ClusterQueue",
        _quota_cq(borrowingLimit="1"),
        f"{_CQ_PATH}.borrowingLimit",
        "must be nil when cohortName is empty",
    ),
    Case(
        "borrowingLimit without cohort (CEL)",
        "ClusterQueue",
        _quota_cq(borrowingLimit="1"),
        "spec",
        "borrowingLimit must be nil when cohort is empty",
    ),
    Case(
        "lendingLimit without cohort",
        "ClusterQueue",
        _quota_cq(lendingLimit="1"),
        f"{_CQ_PATH}.lendingLimit",
        "must be nil when cohortName is empty",
    ),
    Case(
        "lendingLimit above nominalQuota",
        "ClusterQueue",
        _quota_cq(cohort="team", lendingLimit="5"),
        f"{_CQ_PATH}.lendingLimit",
        "must be less than or equal to the nominalQuota",
    ),
    Case(
        "negative borrowingLimit",
        "ClusterQueue",
        _quota_cq(cohort="team", borrowingLimit="-2"),
        f"{_CQ_PATH}.borrowingLimit",
        "must be greater than or equal to 0",
    ),
    Case(
        "resources out of coveredResources order",
        "ClusterQueue",
        _cq_with(resourceGroups=[_rg(["cpu", "memory"], [("f", [("memory", 1), ("cpu", 1)])])]),
        "spec.resourceGroups[0].flavors[0].resources[0].name",
        "coveredResources[0]",
    ),
    Case(
        "flavor with fewer resources than covered",
        "ClusterQueue",
        _cq_with(resourceGroups=[_rg(["cpu", "memory"], [("f", [("cpu", 1)])])]),
        "spec.resourceGroups[0]",
        "flavors must have the same number of resources as the coveredResources",
    ),
    Case(
        "flavor in two groups",
        "ClusterQueue",
        _cq_with(resourceGroups=_TWO_GROUPS_SAME_FLAVOR),
        "spec.resourceGroups[1].flavors[0].name",
        'Duplicate value: "f"',
    ),
    Case(
        "resource in two groups",
        "ClusterQueue",
        _cq_with(resourceGroups=_TWO_GROUPS_SAME_RESOURCE),
        "spec.resourceGroups[1].coveredResources[0]",
        'Duplicate value: "cpu"',
    ),
    Case(
        "flavor listed twice in a group",
        "ClusterQueue",
        _cq_with(resourceGroups=[_rg(["cpu"], [("f", [("cpu", 1)]), ("f", [("cpu", 2)])])]),
        "spec.resourceGroups[0].flavors[1]",
        "Duplicate value",
    ),
    Case(
        "invalid resource name",
        "ClusterQueue",
        _cq_with(resourceGroups=[_rg(["bad name!"], [("f", [("bad name!", 1)])])]),
        "spec.resourceGroups[0].coveredResources[0]",
        "name part must consist of",
    ),
    Case(
        "too many resource groups",
        "ClusterQueue",
        _cq_with(resourceGroups=[_rg([f"r{i}"], [(f"f{i}", [(f"r{i}", 1)])]) for i in range(17)]),
        "spec.resourceGroups",
        "must have at most 16 items",
    ),
    Case(
        "empty coveredResources",
        "ClusterQueue",
        _cq_with(resourceGroups=[_rg([], [("f", [])])]),
        "spec.resourceGroups[0].coveredResources",
        "should have at least 1 items",
    ),
    Case(
        "bad queueingStrategy",
        "ClusterQueue",
        _cq_with(queueingStrategy="LIFO"),
        "spec.queueingStrategy",
        'Unsupported value: "LIFO"',
    ),
    Case("bad cohort name", "ClusterQueue", _cq_with(cohortName="Team_A"), "spec.cohortName", "should match"),
    Case(
        "preference without both TryNextFlavor",
        "ClusterQueue",
        _cq_with(flavorFungibility={"preference": "PreemptionOverBorrowing"}),
        "spec.flavorFungibility",
        "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
    ),
    Case(
        "borrowWithinCohort with reclaimWithinCohort Never",
        "ClusterQueue",
        _cq_with(preemption={"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}),
        "spec.preemption",
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
    ),
    Case(
        "bad withinClusterQueue",
        "ClusterQueue",
        _cq_with(preemption={"withinClusterQueue": "Always"}),
        "spec.preemption.withinClusterQueue",
        "Unsupported value",
    ),
    Case("bad stopPolicy", "ClusterQueue", _cq_with(stopPolicy="Stop"), "spec.stopPolicy", "Unsupported value"),
    Case(
        "negative fair sharing weight",
        "ClusterQueue",
        _cq_with(fairSharing={"weight": "-1"}),
        "spec.fairSharing.weight",
        "must be greater than or equal to 0",
    ),
    Case(
        "tiny fair sharing weight",
        "ClusterQueue",
        _cq_with(fairSharing={"weight": "1n"}),
        "spec.fairSharing.weight",
        "must be greater than 1e-9",
    ),
    Case(
        "onFlavors names an unknown flavor",
        "ClusterQueue",
        _cq_with(admissionChecksStrategy={"admissionChecks": [{"name": "ac", "onFlavors": ["gpu"]}]}),
        "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]",
        "must be one of the ClusterQueue's flavors",
    ),
    Case(
        "empty admissionChecks strategy",
        "ClusterQueue",
        _cq_with(admissionChecksStrategy={"admissionChecks": []}),
        "spec.admissionChecksStrategy.admissionChecks",
        "should have at least 1 items",
    ),
    Case(
        "bad namespaceSelector operator",
        "ClusterQueue",
        _cq_with(namespaceSelector={"matchExpressions": [{"key": "a", "operator": "Like", "values": ["b"]}]}),
        "spec.namespaceSelector.matchExpressions[0].operator",
        "not a valid selector operator",
    ),
    Case(
        "admissionScope without mode",
        "ClusterQueue",
        _cq_with(admissionScope={}),
        "spec.admissionScope.admissionMode",
        "Required value",
    ),
    Case(
        "concurrentAdmission with StrictFIFO",
        "ClusterQueue",
        _cq_with(
            queueingStrategy="StrictFIFO", concurrentAdmissionPolicy={"migration": {"mode": "TryPreferredFlavors"}}
        ),
        "spec.concurrentAdmissionPolicy",
        "StrictFIFO",
    ),
    Case(
        "concurrentAdmission lastAcceptableFlavorName with RetainFirstAdmission",
        "ClusterQueue",
        _cq_with(
            concurrentAdmissionPolicy={
                "migration": {"mode": "RetainFirstAdmission", "constraints": {"lastAcceptableFlavorName": "default"}}
            }
        ),
        "spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName",
        "TryPreferredFlavors",
    ),
    Case(
        "concurrentAdmission is immutable",
        "ClusterQueue",
        _cq_with(concurrentAdmissionPolicy={"migration": {"mode": "RetainFirstAdmission"}}),
        "spec.concurrentAdmissionPolicy",
        "field is immutable",
        old=_cq_with(),
    ),
    Case(
        "unknown field is not a validation error but bad type is",
        "ClusterQueue",
        _cq_with(resourceGroups="cpu"),
        "spec.resourceGroups",
        "must be of type array",
    ),
    Case(
        "bad metadata name",
        "ClusterQueue",
        {**cluster_queue(), "metadata": {"name": "CQ_1"}},
        "metadata.name",
        "RFC 1123 subdomain",
    ),
    # ---- Cohort
    Case(
        "cohort borrowingLimit without parent",
        "Cohort",
        _cohort(
            resourceGroups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1, "borrowingLimit": 1}]}],
                }
            ]
        ),
        f"{_CQ_PATH}.borrowingLimit",
        "must be nil when parent is empty",
    ),
    Case(
        "cohort lendingLimit without parent",
        "Cohort",
        _cohort(
            resourceGroups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1, "lendingLimit": 1}]}],
                }
            ]
        ),
        f"{_CQ_PATH}.lendingLimit",
        "must be nil when parent is empty",
    ),
    Case(
        "cohort resource in two groups",
        "Cohort",
        _cohort(resourceGroups=_TWO_GROUPS_SAME_RESOURCE),
        "spec.resourceGroups[1].coveredResources[0]",
        "Duplicate value",
    ),
    Case(
        "cohort negative quota",
        "Cohort",
        _cohort(resourceGroups=[_rg(["cpu"], [("f", [("cpu", "-3")])])]),
        f"{_CQ_PATH}.nominalQuota",
        "must be greater than or equal to 0",
    ),
    Case(
        "cohort weight",
        "Cohort",
        _cohort(fairSharing={"weight": "-1"}),
        "spec.fairSharing.weight",
        "must be greater than or equal to 0",
    ),
    Case("cohort bad parent name", "Cohort", _cohort(parentName="Root!"), "spec.parentName", "should match"),
    Case("cohort is its own parent", "Cohort", _cohort(parentName="co"), "spec.parentName", "itself"),
    # ---- ResourceFlavor
    Case(
        "too many node labels",
        "ResourceFlavor",
        _rf(nodeLabels={f"k{i}": "v" for i in range(9)}),
        "spec.nodeLabels",
        "must have at most 8 items",
    ),
    Case(
        "bad node label key",
        "ResourceFlavor",
        _rf(nodeLabels={"bad key": "v"}),
        "spec.nodeLabels",
        "name part must consist of",
    ),
    Case(
        "bad node label value",
        "ResourceFlavor",
        _rf(nodeLabels={"k": "bad value"}),
        "spec.nodeLabels",
        "a valid label must be an empty string",
    ),
    Case(
        "taint with bad effect",
        "ResourceFlavor",
        _rf(nodeTaints=[{"key": "k", "effect": "Sometimes"}]),
        "spec.nodeTaints",
        "supported taint effect values",
    ),
    Case(
        "taint with bad key",
        "ResourceFlavor",
        _rf(nodeTaints=[{"key": "a/b/c", "effect": "NoSchedule"}]),
        "spec.nodeTaints[0].key",
        "qualified name",
    ),
    Case(
        "taint with bad value",
        "ResourceFlavor",
        _rf(nodeTaints=[{"key": "k", "value": "no spaces", "effect": "NoSchedule"}]),
        "spec.nodeTaints[0].value",
        "a valid label must be",
    ),
    Case(
        "duplicate taint key/effect",
        "ResourceFlavor",
        _rf(
            nodeTaints=[
                {"key": "k", "value": "a", "effect": "NoSchedule"},
                {"key": "k", "value": "b", "effect": "NoSchedule"},
            ]
        ),
        "spec.nodeTaints[1]",
        "Duplicate value",
    ),
    Case(
        "too many taints",
        "ResourceFlavor",
        _rf(nodeTaints=[{"key": f"k{i}", "effect": "NoSchedule"} for i in range(9)]),
        "spec.nodeTaints",
        "must have at most 8 items",
    ),
    Case(
        "toleration without key needs Exists",
        "ResourceFlavor",
        _rf(tolerations=[{"operator": "Equal"}]),
        "spec.tolerations",
        "operator must be Exists when 'key' is empty",
    ),
    Case(
        "tolerationSeconds needs NoExecute",
        "ResourceFlavor",
        _rf(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
        "spec.tolerations",
        "effect must be 'NoExecute' when 'tolerationSeconds' is set",
    ),
    Case(
        "bad toleration operator",
        "ResourceFlavor",
        _rf(tolerations=[{"key": "k", "operator": "In"}]),
        "spec.tolerations",
        "supported toleration values: 'Equal'(default), 'Exists'",
    ),
    Case(
        "Exists toleration with value",
        "ResourceFlavor",
        _rf(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        "spec.tolerations",
        "a value must be empty when 'operator' is 'Exists'",
    ),
    Case(
        "bad toleration effect",
        "ResourceFlavor",
        _rf(tolerations=[{"key": "k", "operator": "Exists", "effect": "Never"}]),
        "spec.tolerations",
        "supported taint effect values",
    ),
    Case(
        "bad toleration key",
        "ResourceFlavor",
        _rf(tolerations=[{"key": "bad key!", "operator": "Exists"}]),
        "spec.tolerations[0].key",
        "name part must consist of",
    ),
    Case(
        "topologyName without nodeLabels",
        "ResourceFlavor",
        _rf(topologyName="topo"),
        "spec",
        "at least one nodeLabel is required when topology is set",
    ),
    Case(
        "topologyName cannot change",
        "ResourceFlavor",
        _rf(topologyName="b", nodeLabels={"a": "b"}),
        "spec",
        "field is immutable",
        old=_rf(topologyName="a", nodeLabels={"a": "b"}),
    ),
    Case(
        "topologyName cannot be removed",
        "ResourceFlavor",
        _rf(nodeLabels={"a": "b"}),
        "spec",
        "field is immutable",
        old=_rf(topologyName="a", nodeLabels={"a": "b"}),
    ),
    # ---- LocalQueue
    Case(
        "clusterQueue is immutable",
        "LocalQueue",
        _lq("other"),
        "spec.clusterQueue",
        "field is immutable",
        old=_lq("cq"),
    ),
    Case("bad clusterQueue name", "LocalQueue", _lq("Not_Valid"), "spec.clusterQueue", "should match"),
    Case("bad LocalQueue stopPolicy", "LocalQueue", _lq(stopPolicy="Pause"), "spec.stopPolicy", "Unsupported"),
    # ---- WorkloadPriorityClass
    Case(
        "wpc value required",
        "WorkloadPriorityClass",
        {"apiVersion": f"{KUEUE}/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "p"}},
        "value",
        "Required value",
    ),
    Case(
        "wpc description too long",
        "WorkloadPriorityClass",
        {
            "apiVersion": f"{KUEUE}/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "p"},
            "value": 1,
            "description": "x" * 2049,
        },
        "description",
        "Too long",
    ),
    Case(
        "wpc value must be an integer",
        "WorkloadPriorityClass",
        {"apiVersion": f"{KUEUE}/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "p"}, "value": "high"},
        "value",
        "must be of type integer",
    ),
    # ---- AdmissionCheck
    Case(
        "controllerName required",
        "AdmissionCheck",
        {"apiVersion": f"{KUEUE}/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "ac"}, "spec": {}},
        "spec.controllerName",
        "Required value",
    ),
    Case(
        "controllerName immutable",
        "AdmissionCheck",
        _ac(controllerName="other"),
        "spec.controllerName",
        "field is immutable",
        old=_ac(),
    ),
    Case(
        "parameters kind pattern",
        "AdmissionCheck",
        _ac(parameters={"apiGroup": "example.com", "kind": "1Bad", "name": "cfg"}),
        "spec.parameters.kind",
        "should match",
    ),
    Case(
        "parameters name is a DNS label",
        "AdmissionCheck",
        _ac(parameters={"apiGroup": "example.com", "kind": "Config", "name": "a.b"}),
        "spec.parameters.name",
        "should match",
    ),
    # ---- Topology
    Case("duplicate topology level", "Topology", _topology("block", "block"), "spec.levels", "must be unique"),
    Case(
        "hostname not lowest",
        "Topology",
        _topology("kubernetes.io/hostname", "rack"),
        "spec.levels",
        "kubernetes.io/hostname label can only be used at the lowest level",
    ),
    Case(
        "levels immutable",
        "Topology",
        _topology("block", "zone"),
        "spec.levels",
        "field is immutable",
        old=_topology("block", "rack"),
    ),
    Case(
        "too many levels",
        "Topology",
        _topology(*[f"l{i}" for i in range(17)]),
        "spec.levels",
        "must have at most 16 items",
    ),
    Case("empty levels", "Topology", _topology(), "spec.levels", "should have at least 1 items"),
    Case("bad nodeLabel", "Topology", _topology("bad label!"), "spec.levels[0].nodeLabel", "should match"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_rejects_bad_object(case: Case) -> None:
    errors = check(info(case.kind), copy.deepcopy(case.obj), copy.deepcopy(case.old) if case.old else None)
    matching = [e for e in errors if e.field == case.want_field]
    assert matching, f"no error at {case.want_field}; got {errors}"
    assert any(case.want_message in e.message for e in matching), matching


GOOD = [
    ("ClusterQueue", cluster_queue()),
    ("ClusterQueue", _quota_cq(cohort="team", borrowingLimit="2", lendingLimit="4")),
    (
        "ClusterQueue",
        _cq_with(
            flavorFungibility={
                "whenCanBorrow": "TryNextFlavor",
                "whenCanPreempt": "TryNextFlavor",
                "preference": "PreemptionOverBorrowing",
            }
        ),
    ),
    (
        "ClusterQueue",
        _cq_with(
            cohortName="team",
            preemption={"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}},
        ),
    ),
    (
        "ClusterQueue",
        _cq_with(
            admissionChecksStrategy={"admissionChecks": [{"name": "ac", "onFlavors": ["default"]}]},
            fairSharing={"weight": "0"},
        ),
    ),
    (
        "Cohort",
        _cohort(
            parentName="root",
            resourceGroups=[
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 1, "lendingLimit": 5}]}],
                }
            ],
        ),
    ),
    (
        "ResourceFlavor",
        _rf(
            nodeLabels={"cloud.example.com/pool": "spot"},
            topologyName="topo",
            nodeTaints=[{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            tolerations=[{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
        ),
    ),
    ("LocalQueue", _lq()),
    ("Topology", _topology("cloud.example.com/block", "kubernetes.io/hostname")),
    (
        "AdmissionCheck",
        _ac(parameters={"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "cfg"}),
    ),
]


@pytest.mark.parametrize(("kind", "obj"), GOOD, ids=[f"{k}-{i}" for i, (k, _) in enumerate(GOOD)])
def test_valid_objects_pass(kind: str, obj: dict[str, Any]) -> None:
    assert check(info(kind), copy.deepcopy(obj)) == []


def test_topology_levels_may_change_when_hostname_stays_lowest() -> None:
    old = _topology("block", "kubernetes.io/hostname")
    new = _topology("block", "rack", "kubernetes.io/hostname")
    assert check(info("Topology"), new, old) == []


def test_unchanged_lq_update_is_valid() -> None:
    assert check(info("LocalQueue"), _lq(), _lq()) == []


def test_resource_flavor_update_without_topology_is_free() -> None:
    assert check(info("ResourceFlavor"), _rf(nodeLabels={"a": "c"}), _rf(nodeLabels={"a": "b"})) == []
