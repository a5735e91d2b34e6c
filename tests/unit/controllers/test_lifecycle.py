"""Workload lifecycle driven by time and by users: waitForPodsReady, deactivation, execution limits."""

from __future__ import annotations

from typing import Any

import pytest
from tests.waiting import eventually

from pykueue.controllers.config import KueueConfig, RequeuingStrategy, WaitForPodsReady
from pykueue.controllers.resource_names import JOBS, WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"


async def _queues(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("user-queue", NS, "cq").obj(),
    )


async def _wl_where(env: Env, job: str, predicate: Any) -> Any:
    wl = await env.workload_of_job(job, NS)
    return wl if wl is not None and predicate(wl) else None


def _admitted(wl: dict) -> bool:
    return cond(wl, "Admitted").get("status") == "True"


@pytest.fixture
def config() -> KueueConfig:
    return KueueConfig(
        wait_for_pods_ready=WaitForPodsReady(
            timeout_seconds=60,
            requeuing_strategy=RequeuingStrategy(
                backoff_base_seconds=10, backoff_max_seconds=100, backoff_limit_count=1
            ),
        )
    )


async def test_pods_ready_timeout_evicts_backs_off_and_finally_deactivates(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("slow", NS))
    wl = await eventually(lambda: _wl_where(env, "slow", _admitted), what="admitted")
    assert cond(wl, "PodsReady") == {} or cond(wl, "PodsReady")["status"] == "False"
    await eventually(lambda: _wl_where(env, "slow", lambda w: cond(w, "PodsReady").get("reason") == "WaitForStart"))

    env.clock.advance(59)
    assert await env.workload_of_job("slow", NS) is not None
    env.clock.advance(2)

    def requeue_pending(w: dict) -> bool:
        return cond(w, "Requeued").get("reason") == "PodsReadyTimeout"

    wl = await eventually(lambda: _wl_where(env, "slow", requeue_pending), what="evicted by PodsReadyTimeout")
    evicted = cond(wl, "Evicted")
    assert evicted["reason"] == "PodsReadyTimeout"
    assert evicted["message"] == f"Exceeded the PodsReady timeout {NS}/{wl['metadata']['name']}"
    assert cond(wl, "Requeued")["status"] == "False"
    assert wl["status"]["requeueState"]["count"] == 1
    assert wl["status"]["schedulingStats"]["evictions"] == [
        {"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}
    ]
    assert (await env.get(JOBS, "slow", NS))["spec"]["suspend"] is True

    env.clock.advance(11)  # backoff base 10 s
    wl = await eventually(
        lambda: _wl_where(
            env, "slow", lambda w: cond(w, "Requeued").get("reason") == "BackoffFinished" and _admitted(w)
        ),
        what="backoff finished and re-admitted",
    )
    assert cond(wl, "Requeued")["status"] == "True"

    env.clock.advance(61)  # second timeout: the requeue limit (1) is exceeded -> deactivated

    def deactivated(w: dict) -> bool:
        return w["spec"].get("active") is False and cond(w, "Evicted").get("reason", "").startswith("Deactivated")

    wl = await eventually(lambda: _wl_where(env, "slow", deactivated), what="deactivated")
    assert cond(wl, "Evicted")["reason"] == "DeactivatedDueToRequeuingLimitExceeded"
    assert "exceeding the maximum number of re-queuing retries" in cond(wl, "Evicted")["message"]
    await eventually(lambda: _wl_where(env, "slow", lambda w: cond(w, "QuotaReserved").get("status") == "False"))
    assert (await env.get(JOBS, "slow", NS))["spec"]["suspend"] is True


async def test_deactivating_and_reactivating_a_workload(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("toggle", NS))
    wl = await eventually(lambda: _wl_where(env, "toggle", _admitted))
    name = wl["metadata"]["name"]
    await env.client.patch(WORKLOADS, name, {"spec": {"active": False}}, namespace=NS)

    def released(w: dict) -> bool:
        return cond(w, "Requeued").get("reason") == "Deactivated" and cond(w, "QuotaReserved").get("status") == "False"

    wl = await eventually(lambda: _wl_where(env, "toggle", released), what="deactivated and released")
    assert cond(wl, "Evicted")["reason"] == "Deactivated"
    assert cond(wl, "Evicted")["message"] == "The workload is deactivated"
    assert (await env.get(JOBS, "toggle", NS))["spec"]["suspend"] is True
    await env.client.patch(WORKLOADS, name, {"spec": {"active": True}}, namespace=NS)
    wl = await eventually(
        lambda: _wl_where(env, "toggle", lambda w: cond(w, "Requeued").get("reason") == "Reactivated" and _admitted(w)),
        what="reactivated and re-admitted",
    )
    assert cond(wl, "Requeued")["status"] == "True"


async def test_maximum_execution_time_deactivates(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("capped", NS, labels={"kueue.x-k8s.io/max-exec-time-seconds": "30"}))
    wl = await eventually(lambda: _wl_where(env, "capped", _admitted))
    assert wl["spec"]["maximumExecutionTimeSeconds"] == 30
    env.clock.advance(31)

    def deactivated(w: dict) -> bool:
        return cond(w, "Evicted").get("reason") == "DeactivatedDueToMaximumExecutionTimeExceeded"

    wl = await eventually(lambda: _wl_where(env, "capped", deactivated))
    assert wl["spec"]["active"] is False


@pytest.mark.parametrize("config", [KueueConfig(wait_for_pods_ready=WaitForPodsReady(block_admission=True))])
async def test_block_admission_waits_for_admitted_pods_to_be_ready(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("first", NS))
    await eventually(lambda: _wl_where(env, "first", _admitted))
    await env.create(JOBS, make_job("second", NS))

    def waiting(w: dict) -> bool:
        return cond(w, "QuotaReserved").get("reason") == "WaitingForPodsReady"

    wl = await eventually(lambda: _wl_where(env, "second", waiting), what="second blocked by the unready first")
    assert cond(wl, "QuotaReserved")["message"] == "Waiting for all admitted workloads to be in PodsReady condition"
    await env.client.patch(JOBS, "first", {"status": {"active": 1, "ready": 1}}, namespace=NS, subresource="status")
    await eventually(lambda: _wl_where(env, "first", lambda w: cond(w, "PodsReady").get("status") == "True"))
    await eventually(lambda: _wl_where(env, "second", _admitted), what="admitted once the first is ready")


async def test_pods_that_stop_being_ready_get_the_recovery_timeout(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("flaky", NS))
    await eventually(lambda: _wl_where(env, "flaky", _admitted))
    await env.client.patch(JOBS, "flaky", {"status": {"active": 1, "ready": 1}}, namespace=NS, subresource="status")
    await eventually(lambda: _wl_where(env, "flaky", lambda w: cond(w, "PodsReady").get("reason") == "Started"))
    await env.client.patch(JOBS, "flaky", {"status": {"active": 1, "ready": 0}}, namespace=NS, subresource="status")
    await eventually(lambda: _wl_where(env, "flaky", lambda w: cond(w, "PodsReady").get("reason") == "WaitForRecovery"))
    env.clock.advance(61)

    def evicted(w: dict) -> bool:
        return cond(w, "Evicted").get("reason") == "PodsReadyTimeout"

    wl = await eventually(lambda: _wl_where(env, "flaky", evicted), what="evicted after the recovery timeout")
    assert wl["status"]["schedulingStats"]["evictions"][0]["underlyingCause"] == "WaitForRecovery"


@pytest.mark.parametrize("config", [KueueConfig(retain_finished_workloads_seconds=600)])
async def test_finished_workloads_are_deleted_after_the_retention_period(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("done", NS))
    await eventually(lambda: _wl_where(env, "done", _admitted))
    await env.finish_job("done", NS)
    await eventually(lambda: _wl_where(env, "done", lambda w: cond(w, "Finished").get("status") == "True"))
    env.clock.advance(599)
    assert await env.workload_of_job("done", NS) is not None
    env.clock.advance(2)

    async def gone() -> bool:
        return await env.workload_of_job("done", NS) is None

    await eventually(gone, what="finished workload deleted after the retention period")
    assert await env.get(JOBS, "done", NS) is not None, "the job itself stays"
