"""Queue behaviour end to end: preemption, cohort borrowing and reclaim, stop policies, queue status."""

from __future__ import annotations

from typing import Any

from tests.waiting import eventually, stays_true

from pykueue.controllers.resource_names import CLUSTER_QUEUES, JOBS, LOCAL_QUEUES, WORKLOAD_PRIORITY_CLASSES
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"
NS_B = "team-b"


async def _admitted(env: Env, job: str, ns: str = NS) -> Any:
    wl = await env.workload_of_job(job, ns)
    return wl if cond(wl, "Admitted").get("status") == "True" else None


async def _not_reserved(env: Env, job: str, ns: str = NS) -> Any:
    wl = await env.workload_of_job(job, ns)
    return wl if wl is not None and cond(wl, "QuotaReserved").get("status") != "True" else None


async def _running(env: Env, job: str, ns: str = NS) -> bool:
    obj = await env.get(JOBS, job, ns)
    return bool(obj and obj["spec"].get("suspend") is False)


async def _suspended(env: Env, job: str, ns: str = NS) -> bool:
    obj = await env.get(JOBS, job, ns)
    return bool(obj and obj["spec"].get("suspend") is True)


async def _priority_class(env: Env, name: str, value: int) -> None:
    await env.create(
        WORKLOAD_PRIORITY_CLASSES,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": name},
            "value": value,
        },
    )
    await eventually(lambda: env.manager.caches.workload_priority_classes.get(name) is not None or None)


async def test_higher_priority_job_preempts_a_lower_one_from_another_local_queue(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq")
        .quota("default-flavor", "cpu", 4)
        .preemption(within_cluster_queue="LowerPriority")
        .obj(),
        make_local_queue("lq-a", NS, "cq").obj(),
        make_local_queue("lq-b", NS_B, "cq").obj(),
    )
    await _priority_class(env, "low", 10)
    await _priority_class(env, "high", 1000)
    await env.create(JOBS, make_job("low", NS, queue="lq-a", cpu="3", labels={"kueue.x-k8s.io/priority-class": "low"}))
    await eventually(lambda: _admitted(env, "low"))
    await eventually(lambda: _running(env, "low"))
    await env.create(
        JOBS, make_job("high", NS_B, queue="lq-b", cpu="3", labels={"kueue.x-k8s.io/priority-class": "high"})
    )

    async def victim_evicted() -> Any:
        wl = await env.workload_of_job("low", NS)
        return wl if cond(wl, "Evicted").get("status") == "True" else None

    wl = await eventually(victim_evicted, what="low-priority workload evicted")
    assert cond(wl, "Evicted")["reason"] == "Preempted"
    assert cond(wl, "Preempted")["reason"] == "InClusterQueue"
    assert cond(wl, "Preempted")["message"].startswith("Preempted to accommodate a workload")
    await eventually(lambda: _admitted(env, "high", NS_B), what="high-priority job admitted")
    await eventually(lambda: _running(env, "high", NS_B))
    low = await eventually(lambda: _not_reserved(env, "low"), what="victim released its reservation")
    assert cond(low, "Requeued")["status"] == "True"
    assert cond(low, "QuotaReserved")["status"] == "False"
    assert low["status"]["schedulingStats"]["evictions"] == [{"reason": "Preempted", "underlyingCause": "", "count": 1}]
    assert await _suspended(env, "low"), "the preempted job is suspended again"


async def test_borrowing_then_reclaim_across_a_cohort(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq-a")
        .cohort("team")
        .quota("default-flavor", "cpu", 4)
        .preemption(reclaim_within_cohort="Any")
        .obj(),
        make_cluster_queue("cq-b")
        .cohort("team")
        .quota("default-flavor", "cpu", 4)
        .preemption(reclaim_within_cohort="Any")
        .obj(),
        make_local_queue("lq-a", NS, "cq-a").obj(),
        make_local_queue("lq-b", NS_B, "cq-b").obj(),
    )
    await env.create(JOBS, make_job("borrower", NS, queue="lq-a", cpu="6"))
    await eventually(lambda: _admitted(env, "borrower"), what="borrowing admission")

    async def borrowed() -> Any:
        cq = await env.get(CLUSTER_QUEUES, "cq-a")
        for flavor in ((cq or {}).get("status") or {}).get("flavorsReservation") or []:
            for res in flavor["resources"]:
                if res["name"] == "cpu" and res.get("borrowed") in ("2", "2000m"):
                    return res
        return None

    await eventually(borrowed, what="cq-a status shows 2 cpu borrowed")
    await env.create(JOBS, make_job("owner", NS_B, queue="lq-b", cpu="4"))

    async def reclaimed() -> Any:
        wl = await env.workload_of_job("borrower", NS)
        return wl if cond(wl, "Preempted").get("reason") == "InCohortReclamation" else None

    await eventually(reclaimed, what="borrower preempted for reclamation")
    await eventually(lambda: _admitted(env, "owner", NS_B), what="owner admitted within its nominal quota")


async def _two_jobs_on_a_stoppable_queue(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await env.create(JOBS, make_job("running", NS, queue="lq", cpu="3"))
    await eventually(lambda: _admitted(env, "running"))
    await eventually(lambda: _running(env, "running"))


async def _set_stop_policy(env: Env, res: Any, name: str, policy: str, namespace: str = "") -> None:
    await env.client.patch(res, name, {"spec": {"stopPolicy": policy}}, namespace=namespace)


async def test_cluster_queue_hold_keeps_running_work_and_admits_nothing_new(env: Env) -> None:
    await _two_jobs_on_a_stoppable_queue(env)
    await _set_stop_policy(env, CLUSTER_QUEUES, "cq", "Hold")

    async def inactive() -> Any:
        cq = await env.get(CLUSTER_QUEUES, "cq")
        return cq if cond(cq, "Active").get("reason") == "Stopped" else None

    cq = await eventually(inactive, what="stopped CQ is inactive")
    assert cond(cq, "Active")["status"] == "False"
    await env.create(JOBS, make_job("new", NS, queue="lq", cpu="1"))
    await eventually(lambda: _not_reserved(env, "new"))
    await stays_true(lambda: _running(env, "running"))
    assert await _suspended(env, "new")
    await _set_stop_policy(env, CLUSTER_QUEUES, "cq", "None")
    await eventually(lambda: _admitted(env, "new"), what="admission resumes after the hold is lifted")


async def test_cluster_queue_hold_and_drain_evicts_and_restart_requeues(env: Env) -> None:
    await _two_jobs_on_a_stoppable_queue(env)
    await _set_stop_policy(env, CLUSTER_QUEUES, "cq", "HoldAndDrain")

    async def drained() -> Any:
        wl = await env.workload_of_job("running", NS)
        return wl if cond(wl, "Requeued").get("reason") == "ClusterQueueStopped" else None

    wl = await eventually(drained, what="admitted workload evicted and not requeued")
    assert cond(wl, "Evicted")["reason"] == "ClusterQueueStopped"
    assert cond(wl, "Evicted")["message"] == "The ClusterQueue is stopped"
    assert cond(wl, "Requeued")["status"] == "False"
    assert await _suspended(env, "running")
    await _set_stop_policy(env, CLUSTER_QUEUES, "cq", "None")

    async def restarted() -> Any:
        wl = await env.workload_of_job("running", NS)
        return wl if cond(wl, "Requeued").get("reason") == "ClusterQueueRestarted" else None

    wl = await eventually(restarted)
    assert cond(wl, "Requeued")["status"] == "True"
    await eventually(lambda: _admitted(env, "running"), what="re-admitted after restart")


async def test_local_queue_hold_and_drain_evicts_with_its_own_reason(env: Env) -> None:
    await _two_jobs_on_a_stoppable_queue(env)
    await _set_stop_policy(env, LOCAL_QUEUES, "lq", "HoldAndDrain", NS)

    async def drained() -> Any:
        wl = await env.workload_of_job("running", NS)
        return wl if cond(wl, "Evicted").get("reason") == "LocalQueueStopped" else None

    await eventually(drained)

    async def lq_stopped() -> Any:
        lq = await env.get(LOCAL_QUEUES, "lq", NS)
        return lq if cond(lq, "Active").get("reason") == "Stopped" else None

    lq = await eventually(lq_stopped)
    assert cond(lq, "Active")["message"] == "LocalQueue is stopped"


async def test_local_queue_pointing_at_a_missing_cluster_queue_is_inactive(env: Env) -> None:
    await env.namespace(NS)
    await env.create(LOCAL_QUEUES, make_local_queue("orphan", NS, "nowhere").obj())

    async def inactive() -> Any:
        lq = await env.get(LOCAL_QUEUES, "orphan", NS)
        return lq if cond(lq, "Active").get("status") == "False" else None

    lq = await eventually(inactive)
    assert cond(lq, "Active")["reason"] == "ClusterQueueDoesNotExist"
    assert cond(lq, "Active")["message"] == "Can't submit new workloads to clusterQueue"
    await env.create(JOBS, make_job("stuck", NS, queue="orphan"))

    async def explained() -> Any:
        wl = await env.workload_of_job("stuck", NS)
        return wl if cond(wl, "QuotaReserved").get("message") == "ClusterQueue nowhere doesn't exist" else None

    await eventually(explained)

    async def counted() -> Any:  # as Kueue: the LocalQueue keeps (and counts) what waits in it
        lq = await env.get(LOCAL_QUEUES, "orphan", NS)
        return lq if (lq.get("status") or {}).get("pendingWorkloads") == 1 else None

    await eventually(counted)


async def test_cluster_queue_with_a_missing_flavor_is_inactive_and_gets_its_finalizer(env: Env) -> None:
    await env.create(CLUSTER_QUEUES, make_cluster_queue("cq").quota("ghost", "cpu", 1).obj())

    async def inactive() -> Any:
        cq = await env.get(CLUSTER_QUEUES, "cq")
        return cq if cond(cq, "Active").get("reason") == "FlavorNotFound" else None

    cq = await eventually(inactive)
    assert "kueue.x-k8s.io/resource-in-use" in cq["metadata"]["finalizers"]
    await env.client.delete(CLUSTER_QUEUES, "cq")
    await eventually(lambda: _gone(env, "cq"), what="a CQ without reservations is deleted")


async def _gone(env: Env, cq: str) -> bool:
    return await env.get(CLUSTER_QUEUES, cq) is None
