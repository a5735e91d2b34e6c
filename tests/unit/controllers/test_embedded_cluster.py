"""The quickstart with the embedded cluster's Job controller, binder and a simulated node: pods really
(virtually) run, finish, and the next job gets the quota."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.waiting import eventually

from pykueue.cluster import NodeSpec
from pykueue.cluster.embedded import EmbeddedCluster
from pykueue.controllers.config import IntegrationsConfig, KueueConfig
from pykueue.controllers.resource_names import JOBS, JOBSETS, PODS, WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"


@pytest.fixture
async def cluster(env: Env) -> AsyncIterator[EmbeddedCluster]:
    node = NodeSpec(
        name="node-1",
        kind="simulated",
        capacity={"cpu": "8", "memory": "16Gi", "pods": "110"},
        labels={"instance-type": "on-demand"},
        default_duration=0.3,
    )
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

    wl1 = await eventually(lambda: finished("first"), within=20, what="first job ran to completion")
    assert cond(wl1, "Finished")["reason"] == "Succeeded"
    wl2 = await eventually(lambda: finished("second"), within=20, what="second job ran after the first")
    assert cond(wl2, "Finished")["reason"] == "Succeeded"
    items, _ = await env.client.list(PODS, NS)
    assert items, "pods were created by the embedded Job controller"
    assert all(p["spec"].get("nodeSelector", {}).get("instance-type") == "on-demand" for p in items)
    assert all(p["spec"].get("nodeName") == "node-1" for p in items)


@pytest.mark.parametrize("config", [KueueConfig(integrations=IntegrationsConfig(frameworks=("batch/job", "pod")))])
async def test_plain_pod_is_gated_admitted_run_and_finished(env: Env, cluster: EmbeddedCluster) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cluster-queue").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("user-queue", NS, "cluster-queue").obj(),
    )
    pod = await env.create(
        PODS,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "solo", "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
            },
        },
    )
    assert [g["name"] for g in pod["spec"]["schedulingGates"]] == ["kueue.x-k8s.io/admission"]

    async def finished() -> Any:
        items, _ = await env.client.list(WORKLOADS, NS)
        done = [w for w in items if cond(w, "Finished").get("status") == "True"]
        return done[0] if done else None

    wl = await eventually(finished, within=20, what="the pod's workload finished after the pod succeeded")
    assert wl["metadata"]["name"].startswith("pod-solo-")
    assert cond(wl, "Finished")["reason"] == "Succeeded"
    done = await env.get(PODS, "solo", NS)
    assert done["status"]["phase"] == "Succeeded"


@pytest.mark.parametrize(
    "config", [KueueConfig(integrations=IntegrationsConfig(frameworks=("batch/job", "jobset.x-k8s.io/jobset")))]
)
async def test_jobset_runs_to_completion_as_one_workload(env: Env, cluster: EmbeddedCluster) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cluster-queue").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("user-queue", NS, "cluster-queue").obj(),
    )
    rjob = {
        "name": "workers",
        "replicas": 2,
        "template": {
            "spec": {
                "parallelism": 1,
                "completions": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
                    }
                },
            }
        },
    }
    await env.create(
        JOBSETS,
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "js", "namespace": NS, "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
            "spec": {"replicatedJobs": [rjob]},
        },
    )

    async def finished() -> Any:
        items, _ = await env.client.list(WORKLOADS, NS)
        done = [w for w in items if cond(w, "Finished").get("status") == "True"]
        return done if done else None

    done = await eventually(finished, within=30, what="the JobSet's single workload finished")
    assert [w["metadata"]["name"].startswith("jobset-js-") for w in done] == [True]
    items, _ = await env.client.list(WORKLOADS, NS)
    assert len(items) == 1, "child Jobs of a JobSet get no Workload of their own"
