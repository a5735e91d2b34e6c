"""``pykueue.testing``: the public builders produce the objects users would write."""

from __future__ import annotations

import pytest

import pykueue.testing as testing
from pykueue.testing import (
    make_cluster_queue,
    make_cohort,
    make_flavor,
    make_local_queue,
    make_namespace,
    make_workload,
)


def test_public_surface_is_pinned() -> None:
    assert sorted(testing.__all__) == sorted(
        [
            "ClusterQueueBuilder",
            "CohortBuilder",
            "FlavorBuilder",
            "LocalQueueBuilder",
            "Scenario",
            "ScenarioDriver",
            "ScenarioFormatError",
            "WorkloadBuilder",
            "load_scenario_dir",
            "load_scenario_file",
            "make_cluster_queue",
            "make_cohort",
            "make_flavor",
            "make_local_queue",
            "make_namespace",
            "make_workload",
            "run_scenario",
            "workload_state",
        ]
    )


def test_cluster_queue_builder_matches_the_brief_example() -> None:
    cq = make_cluster_queue("cq").cohort("team").quota("default", "cpu", 4).obj()
    assert cq == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "cohortName": "team",
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
                }
            ],
        },
    }


def test_cluster_queue_groups_limits_and_policies() -> None:
    cq = (
        make_cluster_queue("cq")
        .quota("a", "cpu", 4, borrowing_limit=1, lending_limit=2)
        .quota("a", "memory", "8Gi")
        .quota("b", "cpu", 2)
        .quota("b", "memory", "4Gi")
        .new_group()
        .quota("gpu", "nvidia.com/gpu", 8)
        .preemption(
            within_cluster_queue="LowerPriority",
            reclaim_within_cohort="Any",
            borrow_within_cohort="LowerPriority",
            max_priority_threshold=5,
        )
        .fungibility(when_can_borrow="TryNextFlavor")
        .queueing_strategy("StrictFIFO")
        .stop_policy("Hold")
        .admission_checks("prov", on_flavors=["b"])
        .fair_weight(2)
        .namespace_selector(None)
        .obj()
    )
    spec = cq["spec"]
    assert "namespaceSelector" not in spec
    assert spec["resourceGroups"][0]["coveredResources"] == ["cpu", "memory"]
    assert spec["resourceGroups"][0]["flavors"][0]["resources"][0] == {
        "name": "cpu",
        "nominalQuota": "4",
        "borrowingLimit": "1",
        "lendingLimit": "2",
    }
    assert spec["resourceGroups"][1]["coveredResources"] == ["nvidia.com/gpu"]
    assert spec["preemption"] == {
        "withinClusterQueue": "LowerPriority",
        "reclaimWithinCohort": "Any",
        "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 5},
    }
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "prov", "onFlavors": ["b"]}]}
    assert spec["fairSharing"] == {"weight": "2"}
    assert spec["queueingStrategy"] == "StrictFIFO"
    assert spec["stopPolicy"] == "Hold"


def test_non_rectangular_resource_group_is_rejected() -> None:
    with pytest.raises(ValueError, match="every flavor of a resource group"):
        make_cluster_queue("cq").quota("a", "cpu", 1).quota("b", "memory", 1).obj()


def test_obj_returns_independent_copies() -> None:
    builder = make_cluster_queue("cq").quota("default", "cpu", 1)
    first = builder.obj()
    first["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "changed"
    assert builder.obj()["spec"]["resourceGroups"][0]["flavors"][0]["name"] == "default"


def test_cohort_flavor_queue_namespace() -> None:
    assert make_cohort("c").parent("r").quota("default", "cpu", 4, borrowing_limit=2).fair_weight("0.5").obj() == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Cohort",
        "metadata": {"name": "c"},
        "spec": {
            "parentName": "r",
            "fairSharing": {"weight": "0.5"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2"}]}
                    ],
                }
            ],
        },
    }
    rf = make_flavor("spot").label("zone", "a").taint("spot", "true").toleration("spot", "true").obj()
    assert rf["spec"] == {
        "nodeLabels": {"zone": "a"},
        "nodeTaints": [{"key": "spot", "effect": "NoSchedule", "value": "true"}],
        "tolerations": [{"key": "spot", "operator": "Equal", "effect": "NoSchedule", "value": "true"}],
    }
    lq = make_local_queue("lq", "ns", "cq").stop_policy("Hold").fair_weight(3).obj()
    assert lq["spec"] == {"clusterQueue": "cq", "stopPolicy": "Hold", "fairSharing": {"weight": "3"}}
    assert make_namespace("ns", {"team": "a"})["metadata"]["labels"] == {
        "kubernetes.io/metadata.name": "ns",
        "team": "a",
    }


def test_workload_builder_pod_sets_and_admission() -> None:
    wl = (
        make_workload("w", "ns")
        .queue("lq")
        .priority(3)
        .created(1_700_000_000)
        .pod_set("driver", 1, cpu=1)
        .pod_set("workers", 4, min_count=2, cpu="500m", memory="1Gi")
        .admitted("cq", {"driver": {"cpu": "default"}, "workers": {"cpu": "default", "memory": "default"}})
        .obj()
    )
    assert wl["spec"]["priority"] == 3
    assert wl["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    workers = wl["spec"]["podSets"][1]
    assert workers["minCount"] == 2
    assert workers["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    psa = wl["status"]["admission"]["podSetAssignments"]
    assert psa[1] == {
        "name": "workers",
        "flavors": {"cpu": "default", "memory": "default"},
        "resourceUsage": {"cpu": "2", "memory": "4Gi"},
        "count": 4,
    }
    assert testing.workload_state(wl) == "admitted"
    assert testing.workload_state(make_workload("p").request("cpu", 1).obj()) == "pending"
    assert testing.workload_state(make_workload("r").request("cpu", 1).reserved("cq", {"cpu": "d"}).obj()) == "reserved"
    assert (
        testing.workload_state(make_workload("f").request("cpu", 1).admitted("cq", {"cpu": "d"}).finished().obj())
        == "finished"
    )
