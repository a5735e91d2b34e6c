"""Kueue defaults of ClusterQueue, LocalQueue, Workload and AdmissionCheck, applied like kube-apiserver's."""

from __future__ import annotations

import copy

from pykueue.api.schema.defaults import apply_schema_defaults
from pykueue.testing.builders.raw_specs import KUEUE, cluster_queue, info, pod_template, workload


def test_cluster_queue_defaults() -> None:
    spec = info("ClusterQueue").default(cluster_queue())["spec"]
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    assert spec["stopPolicy"] == "None"
    assert spec["flavorFungibility"] == {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}
    assert spec["preemption"] == {
        "reclaimWithinCohort": "Never",
        "borrowWithinCohort": {"policy": "Never"},
        "withinClusterQueue": "Never",
    }
    assert "cohortName" not in spec
    assert "preference" not in spec["flavorFungibility"]


def test_cluster_queue_defaults_keep_user_values() -> None:
    cq = cluster_queue(
        queueingStrategy="StrictFIFO",
        preemption={"withinClusterQueue": "LowerPriority"},
        flavorFungibility={"whenCanBorrow": "TryNextFlavor"},
    )
    spec = info("ClusterQueue").default(cq)["spec"]
    assert spec["queueingStrategy"] == "StrictFIFO"
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert spec["preemption"]["reclaimWithinCohort"] == "Never"
    assert spec["flavorFungibility"] == {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"}


def test_cluster_queue_v1beta1_defaults_use_v1beta1_schema() -> None:
    cq = {**cluster_queue(), "apiVersion": f"{KUEUE}/v1beta1"}
    spec = info("ClusterQueue").default(cq)["spec"]
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    assert spec["flavorFungibility"]["whenCanBorrow"] == "MayStopSearch"


def test_local_queue_defaults() -> None:
    lq = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": {"clusterQueue": "cq"},
    }
    assert info("LocalQueue").default(lq)["spec"]["stopPolicy"] == "None"


def test_workload_defaults() -> None:
    wl = workload(
        pod_sets=[
            {"template": pod_template(resources={"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}})}
        ]
    )
    spec = info("Workload").default(wl)["spec"]
    assert spec["active"] is True
    pod_set = spec["podSets"][0]
    assert (pod_set["name"], pod_set["count"]) == ("main", 1)
    # requests default to limits for resources without a request
    assert pod_set["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}


def test_workload_admission_assignment_name_defaults_to_main() -> None:
    wl = workload()
    wl["status"] = {"admission": {"clusterQueue": "cq", "podSetAssignments": [{"count": 3}]}}
    out = info("Workload").default(wl)
    assert out["status"]["admission"]["podSetAssignments"][0]["name"] == "main"


def test_admission_check_v1beta1_retry_delay_default() -> None:
    ac = {
        "apiVersion": f"{KUEUE}/v1beta1",
        "kind": "AdmissionCheck",
        "metadata": {"name": "ac"},
        "spec": {"controllerName": "x"},
    }
    assert info("AdmissionCheck").default(ac)["spec"]["retryDelayMinutes"] == 15
    v1beta2 = {**ac, "apiVersion": f"{KUEUE}/v1beta2"}
    assert "retryDelayMinutes" not in info("AdmissionCheck").default(v1beta2)["spec"]


def test_defaulting_is_pure_and_idempotent() -> None:
    cq_info = info("ClusterQueue")
    original = cluster_queue()
    snapshot = copy.deepcopy(original)
    once = cq_info.default(original)
    assert original == snapshot
    assert cq_info.default(once) == once


def test_schema_defaults_recurse_into_defaulted_objects() -> None:
    schema = {
        "type": "object",
        "properties": {
            "outer": {"type": "object", "default": {}, "properties": {"inner": {"type": "string", "default": "x"}}},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}},
            },
        },
    }
    value: dict[str, object] = {"items": [{}, {"n": 5}]}
    apply_schema_defaults(schema, value)
    assert value == {"outer": {"inner": "x"}, "items": [{"n": 1}, {"n": 5}]}
