"""JobSets and plain pod groups as single units; manageJobsWithoutQueueName."""

from __future__ import annotations

from typing import Any

import pytest
from tests.waiting import eventually, stays_true

from pykueue.controllers.config import IntegrationsConfig, KueueConfig
from pykueue.controllers.resource_names import JOBS, JOBSETS, PODS, WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue, make_workload

from .conftest import QUEUE_LABEL, Env, cond, make_job

NS = "team-a"
GROUP = "kueue.x-k8s.io/pod-group-name"
TOTAL = "kueue.x-k8s.io/pod-group-total-count"


@pytest.fixture
def config() -> KueueConfig:
    return KueueConfig(
        manage_jobs_without_queue_name=True,
        integrations=IntegrationsConfig(frameworks=("batch/job", "jobset.x-k8s.io/jobset", "pod")),
    )


async def _queues(env: Env, cpu: int = 4) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").node_labels(**{"instance-type": "on-demand"}).obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", cpu).obj(),
        make_local_queue("user-queue", NS, "cq").obj(),
    )


def _jobset(name: str, workers: int) -> dict[str, Any]:
    def rjob(rname: str, replicas: int) -> dict[str, Any]:
        return {
            "name": rname,
            "replicas": replicas,
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

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": NS, "labels": {QUEUE_LABEL: "user-queue"}},
        "spec": {"replicatedJobs": [rjob("driver", 1), rjob("workers", workers)]},
    }


async def _workload(env: Env, name: str) -> Any:
    items, _ = await env.client.list(WORKLOADS, NS)
    for wl in items:
        refs = wl["metadata"].get("ownerReferences") or []
        if wl["metadata"]["name"] == name or any(r.get("name") == name for r in refs):
            return wl
    return None


async def test_jobset_is_admitted_as_one_unit(env: Env) -> None:
    await _queues(env)
    created = await env.create(JOBSETS, _jobset("training", workers=2))
    assert created["spec"]["suspend"] is True

    async def admitted() -> Any:
        wl = await _workload(env, "training")
        return wl if cond(wl, "Admitted").get("status") == "True" else None

    wl = await eventually(admitted, what="jobset workload admitted")
    assert wl["metadata"]["name"].startswith("jobset-training-")
    assert [(ps["name"], ps["count"]) for ps in wl["spec"]["podSets"]] == [("driver", 1), ("workers", 2)]

    async def running() -> Any:
        js = await env.get(JOBSETS, "training", NS)
        return js if js and js["spec"].get("suspend") is False else None

    js = await eventually(running, what="jobset unsuspended")
    for rjob in js["spec"]["replicatedJobs"]:
        assert rjob["template"]["spec"]["template"]["spec"]["nodeSelector"] == {"instance-type": "on-demand"}

    await env.create(JOBSETS, _jobset("second", workers=2))

    async def pending() -> Any:
        wl2 = await _workload(env, "second")
        return wl2 if cond(wl2, "QuotaReserved").get("status") == "False" else None

    await eventually(pending, what="second jobset waits for quota as a whole")
    js2 = await env.get(JOBSETS, "second", NS)
    assert js2["spec"]["suspend"] is True


def _pod(name: str, group: str, total: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "labels": {QUEUE_LABEL: "user-queue", GROUP: group},
            "annotations": {TOTAL: str(total)},
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


def _gates(pod: dict[str, Any] | None) -> list[str]:
    return [g["name"] for g in ((pod or {}).get("spec") or {}).get("schedulingGates") or []]


async def test_pod_group_waits_for_all_members_then_is_ungated_together(env: Env) -> None:
    await _queues(env)
    first = await env.create(PODS, _pod("p0", "grp", 3))
    assert "kueue.x-k8s.io/admission" in _gates(first)
    await env.create(PODS, _pod("p1", "grp", 3))
    await stays_true(lambda: _no_workload(env, "grp"))
    await env.create(PODS, _pod("p2", "grp", 3))

    async def admitted() -> Any:
        wl = await env.get(WORKLOADS, "grp", NS)
        return wl if cond(wl, "Admitted").get("status") == "True" else None

    wl = await eventually(admitted, what="pod group workload admitted")
    assert sum(ps["count"] for ps in wl["spec"]["podSets"]) == 3

    async def ungated() -> bool:
        pods = [await env.get(PODS, n, NS) for n in ("p0", "p1", "p2")]
        return all(p is not None and "kueue.x-k8s.io/admission" not in _gates(p) for p in pods)

    await eventually(ungated, what="all pods of the group ungated")


async def _no_workload(env: Env, name: str) -> bool:
    return await env.get(WORKLOADS, name, NS) is None


async def test_manage_jobs_without_queue_name(env: Env) -> None:
    await _queues(env)
    await env.namespace("kube-system")
    created = await env.create(JOBS, make_job("unlabelled", NS, queue=None))
    assert created["spec"]["suspend"] is True

    async def explained() -> Any:
        wl = await env.workload_of_job("unlabelled", NS)
        qr = cond(wl, "QuotaReserved")
        return wl if qr.get("reason") == "Misconfigured" else None

    wl = await eventually(explained, what="workload with an empty queue name is inadmissible")
    assert wl["spec"].get("queueName", "") == ""
    assert cond(wl, "QuotaReserved")["message"] == "LocalQueue  doesn't exist"
    system = await env.create(JOBS, make_job("system", "kube-system", queue=None))
    assert system["spec"].get("suspend") in (None, False), "kube-system is outside the managed namespaces"


async def test_jobs_outside_the_managed_namespaces_are_ignored_even_with_a_queue_name(env: Env) -> None:
    await _queues(env)
    await env.namespace("kube-system")
    created = await env.create(JOBS, make_job("labelled", "kube-system", queue="user-queue"))
    assert created["spec"].get("suspend") in (None, False)

    async def no_workload() -> bool:
        return await env.workload_of_job("labelled", "kube-system") is None

    await stays_true(no_workload)


async def test_an_integration_whose_kind_is_not_served_stays_off(config: KueueConfig) -> None:
    env = Env(config, without=("jobsets.jobset.x-k8s.io",))
    await env.start()
    try:
        assert [r.integration.name for r in env.manager.jobs] == ["batch/job", "pod"]
        await _queues(env)
        wl = make_workload("orphan-of-jobset", NS).queue("user-queue").request("cpu", 1).obj()
        wl["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "name": "js",
                "uid": "js-uid",
                "controller": True,
            }
        ]
        await env.create(WORKLOADS, wl)

        async def admitted() -> Any:
            obj = await env.get(WORKLOADS, "orphan-of-jobset", NS)
            return obj if cond(obj, "Admitted").get("status") == "True" else None

        await eventually(admitted, what="workloads of an unserved kind are still scheduled, never deleted")
        await stays_true(lambda: env.get(WORKLOADS, "orphan-of-jobset", NS))
    finally:
        await env.stop()
