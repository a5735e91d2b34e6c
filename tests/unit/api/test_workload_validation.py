"""Kueue's Workload rules (schema, CEL and webhook), each with the exact field path."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest

from pykueue.testing.builders.raw_specs import check, info, pod_template, reserved, workload

WL = info("Workload")


def _pod_set(name: str = "main", count: int = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "count": count, "template": pod_template(), **extra}


def _with(wl: dict[str, Any], **spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(wl)
    out["spec"].update(spec)
    return out


def _with_status(wl: dict[str, Any], **status: Any) -> dict[str, Any]:
    out = copy.deepcopy(wl)
    out.setdefault("status", {}).update(status)
    return out


def _annotated(wl: dict[str, Any], **annotations: str) -> dict[str, Any]:
    out = copy.deepcopy(wl)
    out["metadata"].setdefault("annotations", {}).update(annotations)
    return out


_C0 = "spec.podSets[0].template.spec.containers[0]"
_RESERVED = reserved(workload())
_ADMITTED = reserved(workload(maximumExecutionTimeSeconds=60), admitted=True)
_WPC_REF = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
_PC_REF = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "high"}


@dataclass
class Case:
    name: str
    obj: dict[str, Any]
    want_field: str
    want_message: str
    old: dict[str, Any] | None = None


CASES = [
    Case("no podSets", workload(pod_sets=[]), "spec.podSets", "should have at least 1 items"),
    Case(
        "19 podSets",
        workload(pod_sets=[_pod_set(f"p{i}") for i in range(19)]),
        "spec.podSets",
        "must have at most 18 items",
    ),
    Case(
        "duplicate podSet name", workload(pod_sets=[_pod_set("a"), _pod_set("a")]), "spec.podSets[1]", "Duplicate value"
    ),
    Case("podSet name not a DNS label", workload(pod_sets=[_pod_set("Main")]), "spec.podSets[0].name", "should match"),
    Case(
        "template required",
        workload(pod_sets=[{"name": "main", "count": 1}]),
        "spec.podSets[0].template",
        "Required value",
    ),
    Case(
        "negative count", workload(pod_sets=[_pod_set(count=-1)]), "spec.podSets[0].count", "greater than or equal to 0"
    ),
    Case(
        "minCount above count",
        workload(pod_sets=[_pod_set(count=2, minCount=3)]),
        "spec.podSets[0]",
        "minCount should be positive and less or equal to count",
    ),
    Case(
        "minCount zero",
        workload(pod_sets=[_pod_set(count=2, minCount=0)]),
        "spec.podSets[0].minCount",
        "greater than or equal to 1",
    ),
    Case(
        "two podSets with minCount",
        workload(pod_sets=[_pod_set("a", 3, minCount=1), _pod_set("b", 3, minCount=1)]),
        "spec.podSets",
        "at most one podSet can use minCount",
    ),
    Case(
        "pods resource requested",
        workload(
            pod_sets=[{"name": "main", "count": 1, "template": pod_template(resources={"requests": {"pods": "1"}})}]
        ),
        f"{_C0}.resources.requests[pods]",
        "reserved",
    ),
    Case(
        "pods resource as limit",
        workload(
            pod_sets=[{"name": "main", "count": 1, "template": pod_template(resources={"limits": {"pods": "1"}})}]
        ),
        f"{_C0}.resources.limits[pods]",
        "reserved",
    ),
    Case(
        "negative request",
        workload(pod_sets=[{"name": "main", "count": 1, "template": pod_template(cpu="-1")}]),
        "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]",
        "greater than or equal to 0",
    ),
    Case(
        "negative init container limit",
        workload(
            pod_sets=[
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "image": "i"}],
                            "initContainers": [
                                {"name": "i", "image": "i", "resources": {"limits": {"memory": "-1Gi"}}}
                            ],
                        }
                    },
                }
            ]
        ),
        "spec.podSets[0].template.spec.initContainers[0].resources.limits[memory]",
        "greater than or equal to 0",
    ),
    Case(
        "bad quantity in template",
        workload(pod_sets=[{"name": "main", "count": 1, "template": pod_template(cpu="lots")}]),
        "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]",
        "quantities must match the regular expression",
    ),
    Case(
        "unknown-typed template field",
        workload(pod_sets=[{"name": "main", "count": 1, "template": {"spec": {"containers": "c"}}}]),
        "spec.podSets[0].template.spec.containers",
        "must be of type array",
    ),
    Case(
        "priorityClassRef requires priority",
        workload(priorityClassRef=_WPC_REF),
        "spec",
        "priority should not be nil when priorityClassRef is set",
    ),
    Case(
        "scheduling group needs PriorityClass kind",
        workload(priority=1, priorityClassRef={**_PC_REF, "kind": "WorkloadPriorityClass"}),
        "spec.priorityClassRef",
        "kind must be PriorityClass when group is scheduling.k8s.io",
    ),
    Case(
        "kueue group needs WorkloadPriorityClass kind",
        workload(priority=1, priorityClassRef={**_WPC_REF, "kind": "PriorityClass"}),
        "spec.priorityClassRef",
        "kind must be WorkloadPriorityClass when group is kueue.x-k8s.io",
    ),
    Case(
        "unknown priority group",
        workload(priority=1, priorityClassRef={**_WPC_REF, "group": "example.com"}),
        "spec.priorityClassRef.group",
        "Unsupported value",
    ),
    Case(
        "priorityClassRef name required",
        workload(priority=1, priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass"}),
        "spec.priorityClassRef.name",
        "Required",
    ),
    Case(
        "maximumExecutionTimeSeconds >= 1",
        workload(maximumExecutionTimeSeconds=0),
        "spec.maximumExecutionTimeSeconds",
        "greater than or equal to 1",
    ),
    Case("bad queueName", workload(queueName="Q!"), "spec.queueName", "should match"),
    Case(
        "too many preemption gates",
        workload(preemptionGates=[{"name": f"g{i}"} for i in range(9)]),
        "spec.preemptionGates",
        "must have at most 8 items",
    ),
    Case(
        "queueName immutable while reserved",
        _with(_RESERVED, queueName="other"),
        "spec.queueName",
        "field is immutable",
        old=_RESERVED,
    ),
    Case(
        "podSets immutable while reserved",
        _with(_RESERVED, podSets=[_pod_set(count=5)]),
        "spec.podSets",
        "field is immutable",
        old=_RESERVED,
    ),
    Case(
        "priorityClassRef cannot appear while reserved",
        _with(_RESERVED, priority=1, priorityClassRef=_WPC_REF),
        "spec.priorityClassRef",
        "field is immutable",
        old=_RESERVED,
    ),
    Case(
        "priorityClassRef kind frozen while reserved",
        _with(_RESERVED, priority=1, priorityClassRef=_PC_REF),
        "spec.priorityClassRef.group",
        "field is immutable",
        old=_with(_RESERVED, priority=1, priorityClassRef=_WPC_REF),
    ),
    Case(
        "PriorityClass name frozen while reserved",
        _with(_RESERVED, priority=1, priorityClassRef={**_PC_REF, "name": "low"}),
        "spec.priorityClassRef.name",
        "field is immutable",
        old=_with(_RESERVED, priority=1, priorityClassRef=_PC_REF),
    ),
    Case(
        "maximumExecutionTimeSeconds frozen while admitted",
        _with(_ADMITTED, maximumExecutionTimeSeconds=120),
        "spec.maximumExecutionTimeSeconds",
        "field is immutable",
        old=_ADMITTED,
    ),
    Case(
        "admission required while QuotaReserved",
        _with_status(_RESERVED, admission=None),
        "status.admission",
        "Required value",
    ),
    Case(
        "podSetAssignments count must match podSets",
        _with_status(_RESERVED, admission={"clusterQueue": "cq", "podSetAssignments": []}),
        "",
        "podSetAssignments must have the same number of podSets as the spec",
    ),
    Case(
        "admission fields cannot change",
        _with_status(_RESERVED, admission={**_RESERVED["status"]["admission"], "clusterQueue": "other"}),
        "status.admission",
        "field is immutable",
        old=_RESERVED,
    ),
    Case(
        "assignment names a missing podSet",
        _with_status(
            _RESERVED,
            admission={
                "clusterQueue": "cq",
                "podSetAssignments": [{"name": "other", "count": 3, "resourceUsage": {"cpu": "3"}}],
            },
        ),
        "status.admission.podSetAssignments[0].name",
        "must match one of the workload's podSets",
    ),
    Case(
        "resourceUsage not a multiple of count",
        _with_status(
            _RESERVED,
            admission={
                "clusterQueue": "cq",
                "podSetAssignments": [{"name": "main", "count": 3, "resourceUsage": {"cpu": "4"}}],
            },
        ),
        "status.admission.podSetAssignments[0].resourceUsage[cpu]",
        "must be a multiple of count",
    ),
    Case(
        "reclaimable pods name unknown",
        _with_status(workload(), reclaimablePods=[{"name": "x", "count": 1}]),
        "status.reclaimablePods[0].name",
        "Not found",
    ),
    Case(
        "reclaimable pods above count",
        _with_status(workload(), reclaimablePods=[{"name": "main", "count": 4}]),
        "status.reclaimablePods[0].count",
        "should be less or equal to 3",
    ),
    Case(
        "reclaimable pods may only grow while reserved",
        _with_status(_RESERVED, reclaimablePods=[{"name": "main", "count": 1}]),
        "status.reclaimablePods[0].count",
        "cannot be less than 2",
        old=_with_status(_RESERVED, reclaimablePods=[{"name": "main", "count": 2}]),
    ),
    Case(
        "admission check state enum",
        _with_status(
            workload(),
            admissionChecks=[
                {"name": "ac", "state": "Done", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
            ],
        ),
        "status.admissionChecks[0].state",
        "Unsupported value",
    ),
    Case(
        "podSetUpdates frozen while Ready",
        _with_status(
            workload(),
            admissionChecks=[
                {
                    "name": "ac",
                    "state": "Ready",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "podSetUpdates": [{"name": "main", "labels": {"a": "c"}}],
                }
            ],
        ),
        "status.admissionChecks[0].podSetUpdates",
        "cannot change",
        old=_with_status(
            workload(),
            admissionChecks=[
                {
                    "name": "ac",
                    "state": "Ready",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                    "podSetUpdates": [{"name": "main", "labels": {"a": "b"}}],
                }
            ],
        ),
    ),
    Case(
        "clusterName and nominated are exclusive",
        _with_status(workload(), clusterName="w1", nominatedClusterNames=["w1"]),
        "status",
        "mutually exclusive",
    ),
    Case(
        "clusterName immutable",
        _with_status(workload(), clusterName="w2"),
        "status.clusterName",
        "field is immutable",
        old=_with_status(workload(), clusterName="w1"),
    ),
    Case(
        "clusterName must be nominated",
        _with_status(workload(), clusterName="w3"),
        "status.clusterName",
        "nominated",
        old=_with_status(workload(), nominatedClusterNames=["w1", "w2"]),
    ),
    Case(
        "condition status enum",
        _with_status(
            workload(),
            conditions=[
                {
                    "type": "Finished",
                    "status": "Yes",
                    "reason": "Succeeded",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        ),
        "status.conditions[0].status",
        "Unsupported value",
    ),
    Case(
        "priority-boost must be an integer",
        _annotated(workload(), **{"kueue.x-k8s.io/priority-boost": "high"}),
        "metadata.annotations[kueue.x-k8s.io/priority-boost]",
        "signed integer",
    ),
    Case(
        "admission-gated-by may only shrink",
        _annotated(workload(), **{"kueue.x-k8s.io/admission-gated-by": "a,b"}),
        "metadata.annotations[kueue.x-k8s.io/admission-gated-by]",
        "only be removed",
        old=_annotated(workload(), **{"kueue.x-k8s.io/admission-gated-by": "a"}),
    ),
    Case(
        "slice topology needs size",
        workload(pod_sets=[_pod_set(topologyRequest={"podSetSliceRequiredTopology": "rack"})]),
        "spec.podSets[0].topologyRequest",
        "podSetSliceSize must be set",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_rejects_bad_workload(case: Case) -> None:
    errors = check(WL, copy.deepcopy(case.obj), copy.deepcopy(case.old) if case.old else None)
    matching = [e for e in errors if e.field == case.want_field]
    assert matching, f"no error at {case.want_field!r}; got {errors}"
    assert any(case.want_message in e.message for e in matching), matching


def test_valid_workloads_pass() -> None:
    assert check(WL, workload()) == []
    assert check(WL, workload(priority=100, priorityClassRef=_WPC_REF)) == []
    assert check(WL, workload(pod_sets=[_pod_set("a", 4, minCount=2), _pod_set("b", 1)])) == []
    assert check(WL, _RESERVED) == []
    assert check(WL, _ADMITTED) == []


def test_changes_allowed_while_reserved() -> None:
    # priority is always mutable; WorkloadPriorityClass names may change; admission may be cleared.
    old = _with(_RESERVED, priority=1, priorityClassRef=_WPC_REF)
    assert check(WL, _with(old, priority=5, priorityClassRef={**_WPC_REF, "name": "low"}), old) == []
    cleared = copy.deepcopy(workload())
    assert check(WL, cleared, _RESERVED) == []
    # queueName may change before any reservation.
    assert check(WL, workload(queueName="other"), workload()) == []


def test_elastic_workload_may_shrink_while_reserved() -> None:
    old = _annotated(_RESERVED, **{"kueue.x-k8s.io/elastic-job": "true"})
    shrunk = _with(old, podSets=[_pod_set(count=2)])
    shrunk["spec"]["podSets"][0]["template"] = pod_template()
    errors = check(WL, shrunk, old)
    assert [e for e in errors if e.field == "spec.podSets"] == []
    grown = _with(old, podSets=[_pod_set(count=4)])
    assert any(e.field == "spec.podSets" for e in check(WL, grown, old))


def test_tas_fields_of_admission_may_change() -> None:
    new = copy.deepcopy(_RESERVED)
    new["status"]["admission"]["podSetAssignments"][0]["delayedTopologyRequest"] = "Ready"
    assert check(WL, new, _RESERVED) == []


def test_topology_assignment_shape_rules() -> None:
    wl = reserved(workload())
    assignment = wl["status"]["admission"]["podSetAssignments"][0]
    assignment["topologyAssignment"] = {
        "levels": ["rack"],
        "slices": [
            {
                "domainCount": 1,
                "valuesPerLevel": [{"universal": "r1", "individual": {"roots": ["r1"]}}],
                "podCounts": {},
            }
        ],
    }
    errors = check(WL, wl)
    path = "status.admission.podSetAssignments[0].topologyAssignment.slices[0]"
    assert {e.field for e in errors} >= {f"{path}.valuesPerLevel[0]", f"{path}.podCounts"}
    assignment["topologyAssignment"]["slices"][0].update(
        valuesPerLevel=[{"universal": "r1"}], podCounts={"universal": 3}
    )
    assert check(WL, wl) == []


def test_template_label_syntax() -> None:
    wl = workload(
        pod_sets=[
            {"name": "main", "count": 1, "template": {**pod_template(), "metadata": {"labels": {"bad key": "v"}}}}
        ]
    )
    assert any(e.field == "spec.podSets[0].template.metadata.labels" for e in check(WL, wl))


def test_status_write_keeps_the_verdict_of_an_unchanged_spec_and_metadata() -> None:
    """Pod-set and metadata rules read only the spec and name/labels/annotations: a write that
    leaves them unchanged (every status write) is not re-checked against them, as validation
    ratcheting does; a write that changes them is."""
    bad_template = {**pod_template(), "metadata": {"labels": {"bad key": "v"}}}
    stored = workload(pod_sets=[{"name": "main", "count": 1, "template": bad_template}])
    stored["metadata"]["labels"] = {"bad label": "x"}  # as if stored before these rules existed
    status_write = _with_status(stored, conditions=[])
    fields = {e.field for e in check(WL, status_write, stored)}
    assert "spec.podSets[0].template.metadata.labels" not in fields
    assert "metadata.labels" not in fields
    relabelled = copy.deepcopy(status_write)
    relabelled["metadata"]["labels"] = {"still bad": "y"}
    assert "metadata.labels" in {e.field for e in check(WL, relabelled, stored)}
    fresh = workload(pod_sets=[{"name": "main", "count": 1, "template": pod_template()}])
    broken = _with(fresh, podSets=[{"name": "main", "count": 1, "template": bad_template}])
    assert "spec.podSets[0].template.metadata.labels" in {e.field for e in check(WL, broken, fresh)}


def test_an_unchanged_admission_keeps_its_verdict_unless_the_pod_sets_change() -> None:
    """The admission rules read only the admission and the pod sets: a status write that leaves
    both unchanged (Finished, a condition) keeps the stored object's verdict; renaming the pod set
    the admission names is checked again."""
    stored = _with_status(
        workload(),
        admission={
            "clusterQueue": "cq",
            "podSetAssignments": [{"name": "main", "count": 3, "resourceUsage": {"cpu": "4"}}],
        },
    )  # as if stored before the rule
    finished = _with_status(
        stored,
        conditions=[
            {
                "type": "Finished",
                "status": "True",
                "reason": "Done",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    )
    assert not [e for e in check(WL, finished, stored) if e.field.startswith("status.admission")]
    renamed = _with(finished, podSets=[_pod_set("other", 3)])
    fields = {e.field for e in check(WL, renamed, stored)}
    assert "status.admission.podSetAssignments[0].name" in fields
