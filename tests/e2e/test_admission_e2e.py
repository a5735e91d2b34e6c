"""Admission behaviour end to end with the real kubectl (issue [3]): preemption, borrowing, stop/resume, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.harness import Pykueue
from tests.e2e.k8s import condition, get, is_true, items, job_manifest, workload_of
from tests.waiting import eventually_blocking

FLAVOR = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
"""


def _cq(name: str, cpu: int, *, cohort: str = "", preemption: str = "", extra: str = "") -> str:
    cohort_line = f"  cohortName: {cohort}\n" if cohort else ""
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
{cohort_line}  namespaceSelector: {{}}
{preemption}{extra}  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - {{name: cpu, nominalQuota: {cpu}}}
"""


def _lq(name: str, cq: str, namespace: str = "default") -> str:
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {name}, namespace: {namespace}}}
spec: {{clusterQueue: {cq}}}
"""


def _apply(server: Pykueue, *docs: str) -> None:
    server.kubectl("apply", "-f", "-", input="\n---\n".join(docs))


def _admitted(server: Pykueue, job: str) -> dict[str, Any] | None:
    wl = workload_of(server, job)
    return wl if wl is not None and is_true(wl, "Admitted") else None


def _suspended(server: Pykueue, job: str) -> bool:
    return bool(get(server, "job", job)["spec"].get("suspend"))


def test_priority_preemption_between_two_local_queues(pykueue: Pykueue) -> None:
    _apply(
        pykueue,
        FLAVOR,
        _cq("cq", 4, preemption="  preemption: {withinClusterQueue: LowerPriority}\n"),
        _lq("lq-low", "cq"),
        _lq("lq-high", "cq"),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: low}\nvalue: 100",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 1000",
    )
    pykueue.kubectl(
        "create",
        "-f",
        "-",
        input=job_manifest("low", "lq-low", cpu="3", labels={"kueue.x-k8s.io/priority-class": "low"}),
    )
    eventually_blocking(lambda: _admitted(pykueue, "low"))
    pykueue.kubectl(
        "create",
        "-f",
        "-",
        input=job_manifest("high", "lq-high", cpu="3", labels={"kueue.x-k8s.io/priority-class": "high"}),
    )
    eventually_blocking(lambda: _admitted(pykueue, "high"), within=90)
    low = workload_of(pykueue, "low")
    assert low is not None
    assert condition(low, "Preempted").get("reason") == "InClusterQueue"
    assert not is_true(low, "Admitted")
    assert low["spec"]["priority"] == 100
    eventually_blocking(lambda: _suspended(pykueue, "low"))


def test_borrowing_across_a_cohort_and_reclaim(pykueue: Pykueue) -> None:
    _apply(
        pykueue,
        FLAVOR,
        _cq("cq-a", 2, cohort="team", preemption="  preemption: {reclaimWithinCohort: Any}\n"),
        _cq("cq-b", 2, cohort="team"),
        _lq("lq-a", "cq-a"),
        _lq("lq-b", "cq-b"),
    )
    pykueue.kubectl("create", "-f", "-", input=job_manifest("borrower", "lq-b", cpu="3"))
    wl = eventually_blocking(lambda: _admitted(pykueue, "borrower"))
    assert isinstance(wl, dict)
    cq_b = get(pykueue, "cq", "cq-b")
    eventually_blocking(lambda: get(pykueue, "cq", "cq-b").get("status", {}).get("admittedWorkloads") == 1)
    cq_b = get(pykueue, "cq", "cq-b")
    usage = cq_b["status"]["flavorsUsage"][0]["resources"][0]
    assert usage["name"] == "cpu"
    assert usage["total"] == "3"
    assert usage["borrowed"] == "1"

    pykueue.kubectl("create", "-f", "-", input=job_manifest("owner", "lq-a", cpu="2"))
    eventually_blocking(lambda: _admitted(pykueue, "owner"), within=90)
    borrower = workload_of(pykueue, "borrower")
    assert borrower is not None
    assert condition(borrower, "Preempted").get("reason") == "InCohortReclamation"


def test_stop_and_resume_a_cluster_queue(pykueue: Pykueue) -> None:
    _apply(pykueue, FLAVOR, _cq("cq", 4), _lq("lq", "cq"))
    pykueue.kubectl("patch", "cq", "cq", "--type", "merge", "-p", '{"spec":{"stopPolicy":"Hold"}}')
    eventually_blocking(lambda: condition(get(pykueue, "cq", "cq"), "Active").get("reason") == "Stopped")
    pykueue.kubectl("create", "-f", "-", input=job_manifest("held", "lq"))

    def held_pending() -> bool:
        wl = workload_of(pykueue, "held")
        return wl is not None and condition(wl, "QuotaReserved").get("status") == "False"

    eventually_blocking(held_pending)
    assert _suspended(pykueue, "held")
    pykueue.kubectl("patch", "cq", "cq", "--type", "merge", "-p", '{"spec":{"stopPolicy":"None"}}')
    eventually_blocking(lambda: _admitted(pykueue, "held"))


def test_deleting_a_running_job_frees_its_quota(pykueue: Pykueue) -> None:
    _apply(pykueue, FLAVOR, _cq("cq", 4), _lq("lq", "cq"))
    pykueue.kubectl("create", "-f", "-", input=job_manifest("first", "lq", cpu="3"))
    eventually_blocking(lambda: _admitted(pykueue, "first"))
    pykueue.kubectl("create", "-f", "-", input=job_manifest("second", "lq", cpu="3"))
    eventually_blocking(lambda: (workload_of(pykueue, "second") or {}).get("status", {}).get("conditions"))
    assert _admitted(pykueue, "second") is None
    pykueue.kubectl("delete", "job", "first")
    eventually_blocking(lambda: _admitted(pykueue, "second"), within=60)
    eventually_blocking(lambda: workload_of(pykueue, "first") is None)


def test_job_without_quota_for_its_resources_stays_pending(pykueue: Pykueue) -> None:
    _apply(pykueue, FLAVOR, _cq("cq", 4), _lq("lq", "cq"))
    pykueue.kubectl("create", "-f", "-", input=job_manifest("gpu", "lq", extra_requests={"nvidia.com/gpu": "1"}))

    def message() -> str:
        wl = workload_of(pykueue, "gpu")
        return str(condition(wl, "QuotaReserved").get("message", "")) if wl else ""

    text = eventually_blocking(message)
    assert "nvidia.com/gpu" in str(text)
    assert "unavailable in ClusterQueue" in str(text)
    assert _suspended(pykueue, "gpu")


def test_job_naming_a_missing_local_queue(pykueue: Pykueue) -> None:
    pykueue.kubectl("create", "-f", "-", input=job_manifest("lost", "no-such-queue"))

    def reason() -> dict[str, Any] | None:
        wl = workload_of(pykueue, "lost")
        cond = condition(wl, "QuotaReserved") if wl else {}
        return cond if cond.get("status") == "False" else None

    cond = eventually_blocking(reason)
    assert isinstance(cond, dict)
    assert "no-such-queue" in cond["message"]
    assert "doesn't exist" in cond["message"]
    assert _suspended(pykueue, "lost")


def test_local_queue_pointing_at_a_missing_cluster_queue_is_inactive(pykueue: Pykueue) -> None:
    _apply(pykueue, _lq("orphan", "missing-cq"))

    def active() -> dict[str, Any] | None:
        cond = condition(get(pykueue, "lq", "orphan"), "Active")
        return cond or None

    cond = eventually_blocking(active)
    assert isinstance(cond, dict)
    assert cond["status"] == "False"
    assert cond["reason"] == "ClusterQueueDoesNotExist"


def test_pending_workloads_counted_on_local_queue(pykueue: Pykueue) -> None:
    _apply(pykueue, FLAVOR, _cq("cq", 1), _lq("lq", "cq"))
    for name in ("a", "b", "c"):
        pykueue.kubectl("create", "-f", "-", input=job_manifest(name, "lq", cpu="1"))
    eventually_blocking(lambda: get(pykueue, "lq", "lq").get("status", {}).get("pendingWorkloads") == 2)
    assert len(items(pykueue, "workloads", "-n", "default")) == 3


def test_preempted_job_on_a_labelled_flavor_is_suspended_and_restored(tmp_path: Path) -> None:
    """Eviction must suspend the Job and restore its pod template (the flavor's nodeSelector removed)."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("nodes:\n  - name: pool-a\n    kind: process\n    labels: {pool: a}\n")
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--nodes", str(nodes)]).start()
    try:
        labelled = FLAVOR.replace(
            "metadata: {name: default-flavor}", "metadata: {name: default-flavor}\nspec:\n  nodeLabels: {pool: a}"
        )
        _apply(
            server,
            labelled,
            _cq("cq", 4, preemption="  preemption: {withinClusterQueue: LowerPriority}\n"),
            _lq("lq", "cq"),
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: low}\nvalue: 1",
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 9",
        )
        server.kubectl(
            "create",
            "-f",
            "-",
            input=job_manifest("low", "lq", cpu="3", labels={"kueue.x-k8s.io/priority-class": "low"}),
        )
        eventually_blocking(lambda: _admitted(server, "low"))

        def running_on_pool_a() -> bool:
            pods = items(server, "pods", "-l", "batch.kubernetes.io/job-name=low")
            return any(p.get("status", {}).get("phase") == "Running" for p in pods)

        eventually_blocking(running_on_pool_a)
        assert get(server, "job", "low")["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "a"}
        server.kubectl(
            "create",
            "-f",
            "-",
            input=job_manifest("high", "lq", cpu="3", labels={"kueue.x-k8s.io/priority-class": "high"}),
        )
        eventually_blocking(lambda: _admitted(server, "high"), within=90)
        eventually_blocking(lambda: _suspended(server, "low"))
        low_job = get(server, "job", "low")
        assert "nodeSelector" not in low_job["spec"]["template"]["spec"]
        low = workload_of(server, "low")
        assert low is not None
        assert condition(low, "Preempted").get("reason") == "InClusterQueue"
        eventually_blocking(lambda: not items(server, "pods", "-l", "batch.kubernetes.io/job-name=low"))
    finally:
        server.stop()
