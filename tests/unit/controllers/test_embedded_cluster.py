"""The quickstart with the embedded cluster's Job controller, binder and a simulated node: pods really
(virtually) run, finish, and the next job gets the quota."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from pykueue.cluster import NodeSpec
from pykueue.cluster.embedded import EmbeddedCluster
from pykueue.controllers.resources import JOBS, PODS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, eventually, make_job

NS = "team-a"


@pytest.fixture
async def cluster(env: Env) -> AsyncIterator[EmbeddedCluster]:
    node = NodeSpec(name="node-1", kind="simulated", capacity={"cpu": "8", "memory": "16Gi", "pods": "110"},
                    labels={"instance-type": "on-demand"}, default_duration=0.3)
    c = EmbeddedCluster(env.client, [node], env.clock)
    await c.start()
    try:
        yield c
    finally:
        await c.stop()


async def test_jobs_run_on_nodes_and_hand_quota_on(env: Env, cluster: EmbeddedCluster) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").node_labels(**{"instance-type": "on-demand"}).obj(),
        make_cluster_queue("cluster-queue").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("user-queue", NS, "cluster-queue").obj(),
    )
    await env.create(JOBS, make_job("first", NS, cpu="3"))
    await env.create(JOBS, make_job("second", NS, cpu="3"))

    async def finished(job: str) -> Any:
        wl = await env.workload_of_job(job, NS)
        return wl if cond(wl, "Finished").get("status") == "True" else None

    wl1 = await eventually(lambda: finished("first"), limit=20, what="first job ran to completion")
    assert cond(wl1, "Finished")["reason"] == "Succeeded"
    wl2 = await eventually(lambda: finished("second"), limit=20, what="second job ran after the first")
    assert cond(wl2, "Finished")["reason"] == "Succeeded"
    items, _ = await env.client.list(PODS, NS)
    assert items, "pods were created by the embedded Job controller"
    assert all(p["spec"].get("nodeSelector", {}).get("instance-type") == "on-demand" for p in items)
    assert all(p["spec"].get("nodeName") == "node-1" for p in items)
