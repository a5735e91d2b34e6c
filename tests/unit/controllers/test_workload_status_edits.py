"""Pure Workload-status edits: conditions, reasons and messages of each lifecycle step."""

from __future__ import annotations

import hashlib

from pykueue.api.meta.clock import format_time
from pykueue.controllers.conditions import condition, set_condition
from pykueue.controllers.jobs.framework import workload_name
from pykueue.controllers.workload_status_edits import (
    backoff_seconds,
    prepare_eviction,
    release_after_eviction,
    reserve_quota,
    update_requeue_state,
)

T0 = 1_700_000_000.0
ADMISSION = {
    "clusterQueue": "cq",
    "podSetAssignments": [{"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "3"}, "count": 1}],
}


def _wl(status: dict) -> dict:
    return {"status": status}


def test_set_condition_moves_transition_time_only_on_status_flip() -> None:
    conds: list[dict] = []
    assert set_condition(conds, "A", "False", "R1", "m", T0)
    assert not set_condition(conds, "A", "False", "R1", "m", T0 + 5)
    assert set_condition(conds, "A", "False", "R2", "m", T0 + 5)
    assert conds[0]["lastTransitionTime"] == format_time(T0)
    assert set_condition(conds, "A", "True", "R2", "m", T0 + 9)
    assert conds[0]["lastTransitionTime"] == format_time(T0 + 9)


def test_reserve_quota_without_checks_admits_in_the_same_write() -> None:
    status: dict = {}
    reserve_quota(status, ADMISSION, [], T0)
    wl = _wl(status)
    assert condition(wl, "QuotaReserved")["message"] == "Quota reserved in ClusterQueue cq"
    assert condition(wl, "Admitted")["message"] == "The workload is admitted"
    assert status["admission"] == ADMISSION


def test_reserve_quota_with_checks_waits_for_them() -> None:
    status: dict = {}
    reserve_quota(status, ADMISSION, ["prov"], T0)
    admitted = condition(_wl(status), "Admitted")
    assert (admitted["status"], admitted["reason"]) == ("False", "UnsatisfiedAdmissionChecks")
    assert status["admissionChecks"][0]["state"] == "Pending"


def test_eviction_then_release_requeues_preempted_immediately_and_accumulates_time() -> None:
    status: dict = {}
    reserve_quota(status, ADMISSION, [], T0)
    event = prepare_eviction(
        status, "Preempted", "Preempted to accommodate", T0 + 10, preempted_reason="InClusterQueue"
    )
    assert event == "EvictedDueToPreempted"
    assert condition(_wl(status), "Preempted")["reason"] == "InClusterQueue"
    assert status["schedulingStats"]["evictions"] == [{"reason": "Preempted", "underlyingCause": "", "count": 1}]
    release_after_eviction(status, T0 + 20)
    wl = _wl(status)
    assert "admission" not in status
    assert condition(wl, "QuotaReserved")["reason"] == "PendingEvaluation"
    assert condition(wl, "Admitted")["status"] == "False"
    assert condition(wl, "Requeued")["status"] == "True"
    assert status["accumulatedPastExecutionTimeSeconds"] == 20
    # the next reservation resets Evicted/Preempted with "Previously: ..."
    reserve_quota(status, ADMISSION, [], T0 + 30)
    assert condition(_wl(status), "Evicted")["message"] == "Previously: Preempted to accommodate"


def test_pods_ready_timeout_is_not_requeued_and_deactivation_reason_carries_cause() -> None:
    status: dict = {}
    reserve_quota(status, ADMISSION, [], T0)
    prepare_eviction(status, "PodsReadyTimeout", "Exceeded", T0, underlying_cause="WaitForStart")
    release_after_eviction(status, T0)
    assert condition(_wl(status), "Requeued")["status"] == "False"
    assert condition(_wl(status), "Requeued")["reason"] == "PodsReadyTimeout"
    other: dict = {}
    assert (
        prepare_eviction(other, "Deactivated", "m", T0, underlying_cause="RequeuingLimitExceeded")
        == "EvictedDueToDeactivatedDueToRequeuingLimitExceeded"
    )


def test_backoff_doubles_up_to_the_cap_and_never_moves_back() -> None:
    assert [backoff_seconds(n, 60, 3600) for n in (1, 2, 3, 7, 8)] == [60, 120, 240, 3600, 3600]
    status: dict = {"requeueState": {"count": 0, "requeueAt": format_time(T0 + 10_000)}}
    update_requeue_state(status, 60, 3600, T0)
    assert status["requeueState"] == {"count": 1, "requeueAt": format_time(T0 + 10_000)}


def test_workload_name_is_kind_owner_and_five_hex_of_sha1() -> None:
    digest = hashlib.sha1(b"Job\nbatch\nsample-job\nuid-1").hexdigest()[:5]
    assert workload_name("Job", "batch", "sample-job", "uid-1") == f"job-sample-job-{digest}"
    long = workload_name("Job", "batch", "x" * 300, "u")
    assert len(long) == 253
