"""Admission checks gate Admitted; finalizers keep in-use queues and flavors; decisions leave Events."""

from __future__ import annotations

from typing import Any

import pytest
from tests.waiting import eventually, stays_true

from pykueue.api.meta.clock import format_time
from pykueue.controllers.config import KueueConfig, WaitForPodsReady
from pykueue.controllers.resource_names import CLUSTER_QUEUES, EVENTS, JOBS, RESOURCE_FLAVORS, WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"


@pytest.fixture
def config() -> KueueConfig:
    return KueueConfig(wait_for_pods_ready=WaitForPodsReady(enable=False))


async def _queues(env: Env, *, checks: tuple[str, ...] = ()) -> None:
    cq = make_cluster_queue("cq").quota("default-flavor", "cpu", 4)
    if checks:
        cq = cq.admission_checks(*checks)
    await env.setup_queues(make_flavor("default-flavor").obj(), cq.obj(), make_local_queue("lq", NS, "cq").obj())


async def _wl(env: Env, job: str, predicate: Any) -> Any:
    wl = await env.workload_of_job(job, NS)
    return wl if wl is not None and predicate(wl) else None


async def _set_check(env: Env, wl: dict[str, Any], state: str, message: str = "") -> None:
    await env.client.patch(
        WORKLOADS,
        wl["metadata"]["name"],
        {
            "status": {
                "admissionChecks": [
                    {
                        "name": "prov",
                        "state": state,
                        "message": message,
                        "lastTransitionTime": format_time(env.clock.now()),
                    }
                ]
            }
        },
        namespace=NS,
        subresource="status",
    )


async def test_admitted_only_once_every_admission_check_is_ready(env: Env) -> None:
    await _queues(env, checks=("prov",))
    await env.create(JOBS, make_job("checked", NS, queue="lq"))
    wl = await eventually(lambda: _wl(env, "checked", lambda w: cond(w, "QuotaReserved").get("status") == "True"))
    assert [c["name"] for c in wl["status"]["admissionChecks"]] == ["prov"]
    assert wl["status"]["admissionChecks"][0]["state"] == "Pending"
    assert cond(wl, "Admitted").get("status") != "True"
    job = await env.get(JOBS, "checked", NS)
    assert job["spec"]["suspend"] is True
    await _set_check(env, wl, "Ready")
    await eventually(lambda: _wl(env, "checked", lambda w: cond(w, "Admitted").get("status") == "True"))

    async def running() -> Any:
        obj = await env.get(JOBS, "checked", NS)
        return obj if obj["spec"]["suspend"] is False else None

    await eventually(running, what="job starts once admitted")


async def test_rejected_check_deactivates_the_workload(env: Env) -> None:
    await _queues(env, checks=("prov",))
    await env.create(JOBS, make_job("rejected", NS, queue="lq"))
    wl = await eventually(lambda: _wl(env, "rejected", lambda w: cond(w, "QuotaReserved").get("status") == "True"))
    await _set_check(env, wl, "Rejected", "no capacity anywhere")
    wl = await eventually(
        lambda: _wl(
            env, "rejected", lambda w: w["spec"].get("active") is False and cond(w, "Evicted").get("status") == "True"
        )
    )
    assert cond(wl, "Evicted")["reason"] == "DeactivatedDueToAdmissionCheck"
    assert "Admission check(s): prov, were rejected" in cond(wl, "Evicted")["message"]


async def test_cluster_queue_deletion_waits_for_its_workloads(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("holder", NS, queue="lq"))
    await eventually(lambda: _wl(env, "holder", lambda w: cond(w, "Admitted").get("status") == "True"))
    await env.client.delete(CLUSTER_QUEUES, "cq")
    await env.client.delete(RESOURCE_FLAVORS, "default-flavor")

    async def cq_terminating() -> Any:
        cq = await env.get(CLUSTER_QUEUES, "cq")
        return cq if cq and cq["metadata"].get("deletionTimestamp") else None

    await eventually(cq_terminating)
    await stays_true(lambda: env.get(CLUSTER_QUEUES, "cq"))
    assert await env.get(RESOURCE_FLAVORS, "default-flavor") is not None, "a flavor in use by a CQ stays"
    await env.finish_job("holder", NS)

    async def both_gone() -> bool:
        return await env.get(CLUSTER_QUEUES, "cq") is None and await env.get(RESOURCE_FLAVORS, "default-flavor") is None

    await eventually(both_gone, what="CQ and then its flavor are deleted once nothing uses them")


async def test_decisions_are_recorded_as_events(env: Env) -> None:
    await _queues(env)
    await env.create(JOBS, make_job("noted", NS, queue="lq", cpu="3"))
    await env.create(JOBS, make_job("waiting", NS, queue="lq", cpu="3"))

    async def one_admitted() -> Any:
        # Both are created within one second: queue order among them is by UID, so either may win.
        admitted = [
            await _wl(env, job, lambda w: cond(w, "Admitted").get("status") == "True") for job in ("noted", "waiting")
        ]
        return [w for w in admitted if w] or None

    await eventually(one_admitted, what="one of the two jobs admitted")

    async def reasons() -> Any:
        items, _ = await env.client.list(EVENTS, NS)
        found = {e["reason"] for e in items}
        wanted = {"CreatedWorkload", "QuotaReserved", "Admitted", "Started"}
        return found if wanted <= found and any(r in found for r in ("Pending", "WaitingForQuota")) else None

    found = await eventually(reasons, what="events for creation, reservation, admission, start and pending")
    items, _ = await env.client.list(EVENTS, NS)
    quota = next(e for e in items if e["reason"] == "QuotaReserved")
    assert quota["message"].startswith("Quota reserved in ClusterQueue cq, wait time since queued was")
    assert quota["involvedObject"]["kind"] == "Workload"
    assert "Started" in found
