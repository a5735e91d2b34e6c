"""Partial admission, admission checks and the Admit record, Admission Fair Sharing ordering,
and the engine's reaction to object changes (CQ/cohort/flavor updates and deletions)."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.scheduler import AdmissionFairSharingConfig, InvalidObject, ResourceTransformation, SchedulerConfig
from pykueue.scheduler.algorithm.partial_admission import counts_for
from pykueue.scheduler.state.workload_info import parse_workload
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    by_name,
    cohort,
    finished,
    flavor,
    local_queue,
    make_scheduler,
    workload,
)

RF = flavor("f")
LQ = local_queue("ns", "lq", "cq")


def counts(admit: Any) -> list[int]:
    return [ps["count"] for ps in admit.admission["podSetAssignments"]]


def test_partial_admission_search_formula() -> None:
    ps = [
        {"name": "a", "count": 10, "minCount": 2, "template": {"spec": {}}},
        {"name": "b", "count": 4, "template": {"spec": {}}},
    ]
    wl = parse_workload(workload("w", podsets=ps))
    assert counts_for(wl, 0) == [10, 4]
    assert counts_for(wl, 4) == [6, 4]
    assert counts_for(wl, 8) == [2, 4]


def test_partial_admission_admits_the_largest_count_that_fits() -> None:
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=5).obj(), LQ, workload("w", cpu="1", count=8, min_count=2))
    [admit] = s.schedule().admitted
    assert counts(admit) == [5]
    assert admit.admission["podSetAssignments"][0]["resourceUsage"] == {"cpu": "5"}


def test_partial_admission_respects_min_count() -> None:
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, workload("w", cpu="1", count=8, min_count=2))
    result = s.schedule()
    assert result.admitted == []
    assert by_name(result.pending)["w"].reason == "ExceedsMaxQuota"


def test_partial_admission_off_in_config() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=5).obj(),
        LQ,
        workload("w", cpu="1", count=8, min_count=2),
        config=SchedulerConfig(partial_admission=False),
    )
    assert s.schedule().admitted == []


def test_admission_checks_apply_per_flavor() -> None:
    cq = (
        CQ("cq")
        .flavor("a", cpu=1)
        .flavor("b", cpu=4)
        .set(
            "admissionChecksStrategy",
            {
                "admissionChecks": [
                    {"name": "everywhere"},
                    {"name": "only-b", "onFlavors": ["b"]},
                    {"name": "only-a", "onFlavors": ["a"]},
                ]
            },
        )
    )
    s = make_scheduler(flavor("a"), flavor("b"), cq.obj(), LQ, workload("w", cpu="2"))
    [admit] = s.schedule().admitted
    assert admit.admission_checks == ["everywhere", "only-b"]
    usage = s.cluster_queue_usage("cq")
    assert (usage.reserving_workloads, usage.admitted_workloads) == (1, 0)  # waits for its checks


def test_failed_admission_checks_are_not_nominated() -> None:
    w = workload("w")
    w["status"] = {"admissionChecks": [{"name": "ac", "state": "Retry"}]}
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=4).obj(), LQ, w)
    pending = by_name(s.schedule().pending)["w"]
    assert (pending.reason, pending.message) == ("PendingEvaluation", "The workload has failed admission checks")


def test_admit_record_is_exactly_status_admission() -> None:
    cq = CQ("cq").group("cpu", "memory").flavor("f", cpu=8, memory="8Gi")
    s = make_scheduler(RF, cq.obj(), LQ, workload("w", count=3, requests={"cpu": "250m", "memory": "1Gi"}))
    [admit] = s.schedule().admitted
    assert admit.admission == {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"cpu": "f", "memory": "f"},
                "resourceUsage": {"cpu": "750m", "memory": "3Gi"},
                "count": 3,
            }
        ],
    }
    assert admit.borrowing is False


def test_requests_like_kube_scheduler() -> None:
    spec = {
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1"}}},
            {"name": "b", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
        ],
        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "3"}}}],
        "overhead": {"cpu": "100m"},
    }
    wl = parse_workload(workload("w", podsets=[{"name": "main", "count": 2, "template": {"spec": spec}}]))
    assert wl.podsets[0].per_pod == {"cpu": 3100, "memory": 2**30}
    assert wl.resource_requests() == [{"name": "main", "resources": {"cpu": "6200m", "memory": "2Gi"}}]


def test_reclaimable_pods_release_quota() -> None:
    running = admitted(workload("r", cpu="1", count=4), "cq", {"cpu": "f"}, {"cpu": "4"})
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=4).obj(), LQ, running, workload("w", cpu="2", created=T0 + 5))
    assert s.schedule().admitted == []
    running["status"]["reclaimablePods"] = [{"name": "main", "count": 2}]
    s.upsert_workload(running)
    assert [a.name for a in s.schedule().admitted] == ["w"]


def test_quota_change_requeues_and_admits() -> None:
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, workload("w", cpu="2"))
    assert s.schedule().admitted == []
    s.upsert_cluster_queue(CQ("cq").flavor("f", cpu=2).obj())
    assert [a.name for a in s.schedule().admitted] == ["w"]


def test_cohort_quota_is_shared_extra_capacity() -> None:
    pool = [
        {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "3"}]}]}
    ]
    s = make_scheduler(
        RF, cohort("co", groups=pool), CQ("cq").cohort("co").flavor("f", cpu=1).obj(), LQ, workload("w", cpu="4")
    )
    [admit] = s.schedule().admitted
    assert admit.borrowing is True


def test_deleting_a_cluster_queue_keeps_its_workloads_and_reports_them() -> None:
    running = admitted(workload("r", cpu="1"), "cq", {"cpu": "f"}, {"cpu": "1"})
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, running, workload("w", cpu="1"))
    s.schedule()
    s.delete_cluster_queue("cq")
    assert by_name(s.schedule().pending)["w"].message == "ClusterQueue cq doesn't exist"
    s.upsert_cluster_queue(CQ("cq").flavor("f", cpu=1).obj())
    assert s.cluster_queue_usage("cq").reserving_workloads == 1  # the running one came back
    assert s.schedule().admitted == []
    s.upsert_workload(finished(running))
    assert [a.name for a in s.schedule().admitted] == ["w"]


def test_malformed_input_is_a_bad_request() -> None:
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ)
    with pytest.raises(InvalidObject, match="cannot be scheduled"):
        s.upsert_workload(workload("w", cpu="lots"))
    assert s.pending_workloads("cq") == []
    assert s.workloads == {}


def afs_world(config: SchedulerConfig) -> Any:
    cq = CQ("cq").flavor("f", cpu=1).set("admissionScope", {"admissionMode": "UsageBasedAdmissionFairSharing"})
    heavy = local_queue("ns", "heavy", "cq")
    heavy["status"] = {
        "fairSharing": {
            "admissionFairSharingStatus": {"consumedResources": {"cpu": "10"}, "lastUpdate": "2023-11-14T22:13:20Z"}
        }
    }
    return make_scheduler(
        RF,
        cq.obj(),
        heavy,
        local_queue("ns", "light", "cq"),
        workload("from-heavy", queue="heavy", priority=5, created=T0),
        workload("from-light", queue="light", priority=0, created=T0 + 1),
        config=config,
    )


def test_admission_fair_sharing_orders_by_local_queue_usage_before_priority() -> None:
    s = afs_world(SchedulerConfig(admission_fair_sharing=AdmissionFairSharingConfig()))
    assert [p.name for p in s.pending_workloads("cq")] == ["from-light", "from-heavy"]
    assert [a.name for a in s.schedule().admitted] == ["from-light"]


def test_admission_fair_sharing_off_keeps_priority_order() -> None:
    s = afs_world(SchedulerConfig())
    assert [a.name for a in s.schedule().admitted] == ["from-heavy"]


def test_block_admission_until_pods_ready() -> None:
    not_ready = admitted(workload("starting", cpu="1"), "cq", {"cpu": "f"}, {"cpu": "1"})
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=4).obj(),
        LQ,
        not_ready,
        workload("next", created=T0 + 5),
        config=SchedulerConfig(block_admission_until_pods_ready=True),
    )
    pending = by_name(s.schedule().pending)["next"]
    assert (pending.reason, pending.message) == (
        "WaitingForPodsReady",
        "waiting for all admitted workloads to be in PodsReady condition",
    )
    not_ready["status"]["conditions"].append({"type": "PodsReady", "status": "True", "reason": "Started"})
    s.upsert_workload(not_ready)
    assert [a.name for a in s.schedule().admitted] == ["next"]
    # the workload just admitted is not ready yet: the one after it waits again
    s.upsert_workload(workload("after", created=T0 + 6))
    assert s.schedule().admitted == []


def test_resource_transformations_and_excluded_prefixes() -> None:
    config = SchedulerConfig(
        resource_transformations=(
            ResourceTransformation("example.com/gpu-slice", {"example.com/gpu-mem": "5Gi"}, "Replace"),
        ),
        exclude_resource_prefixes=("ephemeral-",),
    )
    cq = CQ("cq").group("cpu", "example.com/gpu-mem").flavor("f", cpu=4, example_com_gpu_mem="20Gi")
    s = make_scheduler(
        RF,
        cq.obj(),
        LQ,
        workload("w", count=2, requests={"cpu": "1", "example.com/gpu-slice": "2", "ephemeral-storage": "1Gi"}),
        config=config,
    )
    [admit] = s.schedule().admitted
    assert admit.admission["podSetAssignments"][0]["resourceUsage"] == {"cpu": "2", "example.com/gpu-mem": "20Gi"}
