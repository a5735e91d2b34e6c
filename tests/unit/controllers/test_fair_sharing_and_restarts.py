"""Fair-sharing status, LocalQueue restart, Hold on a reservation still waiting for its checks,
and PodsReady from real (simulated) pods."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.waiting import eventually

from pykueue.cluster import NodeSpec
from pykueue.cluster.embedded import EmbeddedCluster
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.resource_names import CLUSTER_QUEUES, JOBS, LOCAL_QUEUES
from pykueue.scheduler import FairSharingConfig
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"
NS_B = "team-b"


async def _wl(env: Env, job: str, predicate: Any, ns: str = NS) -> Any:
    wl = await env.workload_of_job(job, ns)
    return wl if wl is not None and predicate(wl) else None


def _admitted(wl: dict[str, Any]) -> bool:
    return cond(wl, "Admitted").get("status") == "True"


@pytest.mark.parametrize("config", [KueueConfig(fair_sharing=FairSharingConfig())])
async def test_borrowing_queue_reports_its_weighted_share(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq-a").cohort("team").quota("default-flavor", "cpu", 4).obj(),
        make_cluster_queue("cq-b").cohort("team").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("lq-a", NS, "cq-a").obj(),
    )
    await env.create(JOBS, make_job("big", NS, queue="lq-a", cpu="6"))
    await eventually(lambda: _wl(env, "big", _admitted))

    async def shares() -> Any:
        a = await env.get(CLUSTER_QUEUES, "cq-a")
        b = await env.get(CLUSTER_QUEUES, "cq-b")
        share_a = ((a or {}).get("status") or {}).get("fairSharing", {}).get("weightedShare")
        share_b = ((b or {}).get("status") or {}).get("fairSharing", {}).get("weightedShare")
        return (share_a, share_b) if share_a and share_b is not None else None

    share_a, share_b = await eventually(shares, what="weighted shares in CQ status")
    assert share_a > 0
    assert share_b == 0


async def test_local_queue_restart_requeues_drained_workloads(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await env.create(JOBS, make_job("job", NS, queue="lq"))
    await eventually(lambda: _wl(env, "job", _admitted))
    await env.client.patch(LOCAL_QUEUES, "lq", {"spec": {"stopPolicy": "HoldAndDrain"}}, namespace=NS)
    wl = await eventually(lambda: _wl(env, "job", lambda w: cond(w, "Requeued").get("reason") == "LocalQueueStopped"))
    assert cond(wl, "Requeued")["status"] == "False"
    await env.client.patch(LOCAL_QUEUES, "lq", {"spec": {"stopPolicy": "None"}}, namespace=NS)
    wl = await eventually(
        lambda: _wl(env, "job", lambda w: cond(w, "Requeued").get("reason") == "LocalQueueRestarted" and _admitted(w)),
        what="restarted and re-admitted",
    )
    assert cond(wl, "Requeued")["message"] == "The LocalQueue was restarted after being stopped"


async def test_hold_releases_a_reservation_that_is_not_admitted_yet(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).admission_checks("prov").obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await env.create(JOBS, make_job("job", NS, queue="lq"))
    await eventually(lambda: _wl(env, "job", lambda w: cond(w, "QuotaReserved").get("status") == "True"))
    await env.client.patch(CLUSTER_QUEUES, "cq", {"spec": {"stopPolicy": "Hold"}})
    wl = await eventually(lambda: _wl(env, "job", lambda w: cond(w, "QuotaReserved").get("status") == "False"))
    assert cond(wl, "QuotaReserved")["reason"] == "Suspended"
    # released with "ClusterQueue cq is stopped"; the scheduler then keeps it pending as "... is inactive"
    assert cond(wl, "QuotaReserved")["message"] in ("ClusterQueue cq is stopped", "ClusterQueue cq is inactive")
    assert "admission" not in wl["status"]


@pytest.fixture
async def cluster(env: Env) -> AsyncIterator[EmbeddedCluster]:
    node = NodeSpec(
        name="node-1", kind="simulated", capacity={"cpu": "8", "memory": "16Gi", "pods": "110"}, default_duration=3600
    )
    c = EmbeddedCluster(env.client, [node], env.clock)
    await c.start()
    try:
        yield c
    finally:
        await c.stop()


async def test_pods_ready_condition_follows_the_jobs_pods(env: Env, cluster: EmbeddedCluster) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("lq", NS_B, "cq").obj(),
    )
    await env.create(JOBS, make_job("pair", NS_B, queue="lq", parallelism=2, completions=2))
    wl = await eventually(
        lambda: _wl(env, "pair", lambda w: cond(w, "PodsReady").get("status") == "True", NS_B),
        within=20,
        what="PodsReady=True once both pods run",
    )
    assert cond(wl, "PodsReady")["reason"] == "Started"
