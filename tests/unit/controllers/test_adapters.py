"""The integration adapters on plain dicts: podSets (Workload construction), finished, PodsReady, reclaimable pods."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.controllers.jobs.framework import (
    PodSetInfo,
    apply_pod_set_info,
    restore_template,
)
from pykueue.controllers.jobs.job import BatchJob
from pykueue.controllers.jobs.jobset import JobSetJob
from pykueue.controllers.jobs.pod import PodGroup


def _job(
    parallelism: int | None = None,
    completions: int | None = None,
    status: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> BatchJob:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"app": "x", "controller-uid": "u", "batch.kubernetes.io/job-name": "j"}},
            "spec": {"containers": [{"name": "c"}]},
        }
    }
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    return BatchJob(
        {
            "metadata": {"name": "j", "namespace": "ns", "uid": "u", "annotations": annotations or {}},
            "spec": spec,
            "status": status or {},
        }
    )


@pytest.mark.parametrize(
    ("parallelism", "completions", "want"),
    [
        (None, None, 1),
        (3, None, 3),
        (3, 2, 2),
        (2, 5, 2),
    ],
)
def test_job_pod_count_is_min_of_parallelism_and_completions(
    parallelism: int | None, completions: int | None, want: int
) -> None:
    assert _job(parallelism, completions).pod_sets()[0]["count"] == want


def test_job_pod_set_drops_controller_labels_and_reads_min_parallelism() -> None:
    pod_set = _job(4, 4, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}).pod_sets()[0]
    assert pod_set["name"] == "main"
    assert pod_set["minCount"] == 2
    assert pod_set["template"]["metadata"]["labels"] == {"app": "x", "batch.kubernetes.io/job-name": "j"}
    assert "minCount" not in _job(4, 4, annotations={"kueue.x-k8s.io/job-min-parallelism": "4"}).pod_sets()[0]


@pytest.mark.parametrize(
    ("conditions", "want"),
    [
        ([], None),
        ([{"type": "Complete", "status": "True", "message": ""}], (True, "Job finished successfully")),
        ([{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}], (False, "BackoffLimitExceeded")),
        ([{"type": "Failed", "status": "False"}], None),
    ],
)
def test_job_finished(conditions: list[dict[str, Any]], want: tuple[bool, str] | None) -> None:
    finished = _job(status={"conditions": conditions}).finished()
    assert ((finished.succeeded, finished.message) if finished else None) == want


def test_job_pods_ready_and_reclaimable_pods() -> None:
    assert _job(3, 3, status={"ready": 2, "succeeded": 1}).pods_ready()
    assert not _job(3, 3, status={"ready": 2}).pods_ready()
    assert _job(3, 6, status={"succeeded": 4}).reclaimable_pods() == [{"name": "main", "count": 1}]
    assert _job(3, 6, status={"succeeded": 2}).reclaimable_pods() == []
    assert _job(1, 6, status={"succeeded": 5}).reclaimable_pods() == []


def test_jobset_pod_sets_count_replicas_times_pods_per_replica() -> None:
    def rjob(name: str, replicas: int, parallelism: int, completions: int) -> dict[str, Any]:
        return {
            "name": name,
            "replicas": replicas,
            "template": {
                "spec": {
                    "parallelism": parallelism,
                    "completions": completions,
                    "template": {"spec": {"containers": []}},
                }
            },
        }

    js = JobSetJob(
        {
            "metadata": {"name": "js", "namespace": "ns", "uid": "u"},
            "spec": {"replicatedJobs": [rjob("Leader", 1, 1, 1), rjob("workers", 3, 2, 4)]},
            "status": {
                "replicatedJobsStatus": [
                    {"name": "workers", "ready": 2, "succeeded": 1},
                    {"name": "Leader", "ready": 1},
                ]
            },
        }
    )
    assert [(p["name"], p["count"]) for p in js.pod_sets()] == [("leader", 1), ("workers", 6)]
    assert js.pods_ready()
    assert js.reclaimable_pods() == [{"name": "workers", "count": 2}]
    assert js.workload_name().startswith("jobset-js-")


def _pod(name: str, cpu: str, phase: str = "Pending", gated: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if gated:
        spec["schedulingGates"] = [{"name": "kueue.x-k8s.io/admission"}]
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "labels": {"kueue.x-k8s.io/pod-group-name": "g"},
            "annotations": {"kueue.x-k8s.io/pod-group-total-count": "3"},
        },
        "spec": spec,
        "status": {"phase": phase},
    }


def test_pod_group_roles_become_pod_sets_and_the_group_finishes_together() -> None:
    group = PodGroup(("ns", "group:g"), [_pod("a", "1"), _pod("b", "1"), _pod("c", "2")])
    assert group.workload_name() == "g"
    assert group.ready_to_create()
    assert sorted(p["count"] for p in group.pod_sets()) == [1, 2]
    assert group.is_suspended()
    assert group.finished() is None
    done = PodGroup(
        ("ns", "group:g"),
        [_pod("a", "1", "Succeeded", False), _pod("b", "1", "Succeeded", False), _pod("c", "2", "Failed", False)],
    )
    finished = done.finished()
    assert finished is not None
    assert not finished.succeeded
    partial = PodGroup(("ns", "group:g"), [_pod("a", "1")])
    assert not partial.ready_to_create()


def test_apply_then_restore_gives_back_the_original_template() -> None:
    original = {"metadata": {"labels": {"app": "x"}}, "spec": {"nodeSelector": {"disk": "ssd"}, "containers": []}}
    info = PodSetInfo(
        name="main",
        count=1,
        node_selector={"zone": "a"},
        tolerations=[{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
        labels={"kueue.x-k8s.io/podset": "main"},
    )
    started = apply_pod_set_info(original, info)
    assert started["spec"]["nodeSelector"] == {"disk": "ssd", "zone": "a"}
    assert started["spec"]["tolerations"] == info.tolerations
    assert restore_template(started, original) == original
