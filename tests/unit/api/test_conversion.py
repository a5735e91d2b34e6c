"""v1beta1 <-> v1beta2 conversion (Kueue's v1beta1 conversion), including property-based round trips."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pykueue.testing.builders.raw_specs import KUEUE, cluster_queue, info, reserved, workload

CQ = info("ClusterQueue")
WL = info("Workload")
LQ = info("LocalQueue")


def test_cluster_queue_v1beta1_to_v1beta2() -> None:
    old: dict[str, Any] = {
        "apiVersion": f"{KUEUE}/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "cohort": "team",
            "admissionChecks": ["prov"],
            "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
        },
        "status": {"pendingWorkloadsStatus": {"head": []}, "pendingWorkloads": 1},
    }
    new = CQ.convert(old, "v1beta2")
    assert new["apiVersion"] == f"{KUEUE}/v1beta2"
    assert new["spec"]["cohortName"] == "team"
    assert "cohort" not in new["spec"]
    assert new["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "prov"}]}
    assert new["spec"]["flavorFungibility"] == {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
    assert new["status"] == {"pendingWorkloads": 1}
    assert old["spec"]["cohort"] == "team"  # input untouched
    assert CQ.validate(CQ.default(new), None) == []


def test_cluster_queue_v1beta2_to_v1beta1() -> None:
    v1beta1 = CQ.convert(cluster_queue(cohort="team"), "v1beta1")
    assert v1beta1["spec"]["cohort"] == "team"
    assert "cohortName" not in v1beta1["spec"]
    assert CQ.validate(CQ.default(v1beta1), None) == []


def test_workload_priority_class_conversion() -> None:
    for source, group, kind in (
        ("kueue.x-k8s.io/workloadpriorityclass", "kueue.x-k8s.io", "WorkloadPriorityClass"),
        ("scheduling.k8s.io/priorityclass", "scheduling.k8s.io", "PriorityClass"),
    ):
        old = {**workload(), "apiVersion": f"{KUEUE}/v1beta1"}
        old["spec"].update(priorityClassName="high", priorityClassSource=source, priority=10)
        new = WL.convert(old, "v1beta2")
        assert new["spec"]["priorityClassRef"] == {"group": group, "kind": kind, "name": "high"}
        assert "priorityClassName" not in new["spec"]
        assert WL.convert(new, "v1beta1")["spec"] == old["spec"]


def test_workload_status_typo_and_topology_assignment() -> None:
    wl = reserved(workload())
    wl["status"]["accumulatedPastExecutionTimeSeconds"] = 42
    wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = {
        "levels": ["rack", "kubernetes.io/hostname"],
        "slices": [
            {
                "domainCount": 2,
                "valuesPerLevel": [{"universal": "r1"}, {"individual": {"prefix": "n-", "roots": ["a", "b"]}}],
                "podCounts": {"individual": [2, 1]},
            }
        ],
    }
    old = WL.convert(wl, "v1beta1")
    assert old["status"]["accumulatedPastExexcutionTimeSeconds"] == 42
    assert old["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] == {
        "levels": ["rack", "kubernetes.io/hostname"],
        "domains": [{"values": ["r1", "n-a"], "count": 2}, {"values": ["r1", "n-b"], "count": 1}],
    }
    back = WL.convert(old, "v1beta2")
    assert back["status"]["accumulatedPastExecutionTimeSeconds"] == 42
    domains = WL.convert(back, "v1beta1")["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert domains == old["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
    assert WL.validate(WL.default(old), None) == []


def test_local_queue_flavor_usage_rename() -> None:
    lq = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": {"clusterQueue": "cq"},
        "status": {"flavorsUsage": [{"name": "f", "resources": [{"name": "cpu", "total": "1"}]}]},
    }
    old = LQ.convert(lq, "v1beta1")
    assert "flavorUsage" in old["status"]
    assert "flavorsUsage" not in old["status"]
    assert LQ.convert(old, "v1beta2") == lq


def test_single_version_kinds_only_change_api_version() -> None:
    job_info = info("Job", "batch")
    obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
    assert job_info.convert(obj, "v1") == obj


names = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
quantities = st.one_of(st.integers(min_value=0, max_value=10**6), st.sampled_from(["1", "500m", "8Gi", "2k"]))


@st.composite
def cluster_queues(draw: st.DrawFn) -> dict[str, Any]:
    cohort = draw(st.one_of(st.none(), names))
    resources = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    flavors = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    cq = cluster_queue(
        cohort=cohort,
        resourceGroups=[
            {
                "coveredResources": resources,
                "flavors": [
                    {"name": f, "resources": [{"name": r, "nominalQuota": draw(quantities)} for r in resources]}
                    for f in flavors
                ],
            }
        ],
    )
    if draw(st.booleans()):
        cq["spec"]["admissionChecksStrategy"] = {
            "admissionChecks": [{"name": n} for n in draw(st.lists(names, min_size=1, unique=True))]
        }
    cq["spec"]["queueingStrategy"] = draw(st.sampled_from(["StrictFIFO", "BestEffortFIFO"]))
    cq["spec"]["flavorFungibility"] = {"whenCanBorrow": draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"]))}
    if draw(st.booleans()):
        cq["status"] = {
            "pendingWorkloads": draw(st.integers(0, 100)),
            "flavorsUsage": [{"name": flavors[0], "resources": [{"name": resources[0], "total": "1"}]}],
        }
    return cq


@settings(max_examples=60, deadline=None)
@given(cluster_queues())
def test_cluster_queue_round_trip(cq: dict[str, Any]) -> None:
    assert CQ.convert(CQ.convert(cq, "v1beta1"), "v1beta2") == cq


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    pod_sets = [
        {
            "name": n,
            "count": draw(st.integers(1, 5)),
            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
        }
        for n in draw(st.lists(names, min_size=1, max_size=3, unique=True))
    ]
    wl = workload(pod_sets=pod_sets)
    if draw(st.booleans()):
        group, kind = draw(
            st.sampled_from([("kueue.x-k8s.io", "WorkloadPriorityClass"), ("scheduling.k8s.io", "PriorityClass")])
        )
        wl["spec"]["priorityClassRef"] = {"group": group, "kind": kind, "name": draw(names)}
        wl["spec"]["priority"] = draw(st.integers(-100, 100))
    if draw(st.booleans()):
        wl = reserved(wl)
        wl["status"]["accumulatedPastExecutionTimeSeconds"] = draw(st.integers(0, 10**6))
    return wl


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_workload_round_trip(wl: dict[str, Any]) -> None:
    assert WL.convert(WL.convert(wl, "v1beta1"), "v1beta2") == wl
    back = WL.convert(wl, "v1beta1")
    assert WL.convert(WL.convert(back, "v1beta2"), "v1beta1") == back
