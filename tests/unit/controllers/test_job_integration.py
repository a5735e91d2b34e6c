"""batch/v1 Jobs through the whole control plane: the quickstart, naming, missing queues, deletion."""

from __future__ import annotations

from typing import Any

from tests.waiting import eventually, stays_true

from pykueue.controllers.jobs.framework import workload_name
from pykueue.controllers.resource_names import CLUSTER_QUEUES, JOBS, LOCAL_QUEUES, WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"


async def _quickstart_queues(env: Env, cpu: int = 4) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").node_labels(**{"instance-type": "on-demand"}).obj(),
        make_cluster_queue("cluster-queue").quota("default-flavor", "cpu", cpu).obj(),
        make_local_queue("user-queue", NS, "cluster-queue").obj(),
    )


async def test_quickstart_two_jobs_on_a_four_cpu_queue(env: Env) -> None:
    await _quickstart_queues(env)
    first = await env.create(JOBS, make_job("first", NS, cpu="3"))
    assert first["spec"]["suspend"] is True, "a Job with a queue-name label is created suspended"

    async def running(name: str) -> Any:
        job = await env.get(JOBS, name, NS)
        return job if job and job["spec"].get("suspend") is False else None

    job = await eventually(lambda: running("first"), what="first job unsuspended")
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"instance-type": "on-demand"}
    wl = await env.workload_of_job("first", NS)
    assert wl is not None
    assert wl["metadata"]["name"] == workload_name("Job", "batch", "first", first["metadata"]["uid"])
    assert cond(wl, "QuotaReserved")["message"] == "Quota reserved in ClusterQueue cluster-queue"
    assert cond(wl, "Admitted")["status"] == "True"
    assert wl["status"]["admission"]["podSetAssignments"][0]["flavors"] == {"cpu": "default-flavor"}
    assert "kueue.x-k8s.io/resource-in-use" in wl["metadata"]["finalizers"]

    await env.create(JOBS, make_job("second", NS, cpu="3"))

    async def second_pending() -> Any:
        wl2 = await env.workload_of_job("second", NS)
        qr = cond(wl2, "QuotaReserved")
        return wl2 if qr.get("status") == "False" and "cpu" in qr.get("message", "") else None

    wl2 = await eventually(second_pending, what="second workload pending on cpu")
    assert cond(wl2, "QuotaReserved")["reason"] in ("WaitingForQuota", "Pending")
    assert (await env.get(JOBS, "second", NS))["spec"]["suspend"] is True

    async def cq_counts() -> Any:
        cq = await env.get(CLUSTER_QUEUES, "cluster-queue")
        st = (cq or {}).get("status") or {}
        return st if (st.get("admittedWorkloads"), st.get("pendingWorkloads")) == (1, 1) else None

    st = await eventually(cq_counts, what="cluster queue status counts")
    usage = st["flavorsUsage"][0]
    assert usage["name"] == "default-flavor"
    assert usage["resources"][0]["name"] == "cpu"
    assert usage["resources"][0]["total"] in ("3", "3000m")
    assert cond({"status": st}, "Active")["status"] == "True"

    async def lq_counts() -> Any:
        lq = await env.get(LOCAL_QUEUES, "user-queue", NS)
        st = (lq or {}).get("status") or {}
        return st if (st.get("admittedWorkloads"), st.get("pendingWorkloads")) == (1, 1) else None

    lq_st = await eventually(lq_counts, what="local queue status counts")
    assert cond({"status": lq_st}, "Active")["reason"] == "Ready"

    await env.finish_job("first", NS)

    async def first_finished() -> Any:
        wl1 = await env.workload_of_job("first", NS)
        return wl1 if cond(wl1, "Finished").get("status") == "True" else None

    wl1 = await eventually(first_finished, what="first workload finished")
    assert cond(wl1, "Finished")["reason"] == "Succeeded"
    await eventually(lambda: running("second"), what="second job admitted after the first finished")


async def test_failed_job_finishes_its_workload_with_the_jobs_message(env: Env) -> None:
    await _quickstart_queues(env)
    await env.create(JOBS, make_job("doomed", NS))
    await eventually(lambda: _admitted(env, "doomed"))
    await env.finish_job("doomed", NS, failed=True, message="Job has reached the specified backoff limit")

    async def finished() -> Any:
        wl = await env.workload_of_job("doomed", NS)
        return wl if cond(wl, "Finished").get("status") == "True" else None

    wl = await eventually(finished)
    assert cond(wl, "Finished")["reason"] == "Failed"
    assert cond(wl, "Finished")["message"] == "Job has reached the specified backoff limit"


async def _admitted(env: Env, job: str, ns: str = NS) -> Any:
    wl = await env.workload_of_job(job, ns)
    return wl if cond(wl, "Admitted").get("status") == "True" else None


async def test_job_naming_a_missing_local_queue_stays_suspended_and_says_why(env: Env) -> None:
    await _quickstart_queues(env)
    await env.create(JOBS, make_job("lost", NS, queue="no-such-queue"))

    async def explained() -> Any:
        wl = await env.workload_of_job("lost", NS)
        qr = cond(wl, "QuotaReserved")
        return wl if qr.get("message") == "LocalQueue no-such-queue doesn't exist" else None

    wl = await eventually(explained, what="workload says the LocalQueue is missing")
    assert cond(wl, "QuotaReserved")["status"] == "False"
    assert cond(wl, "QuotaReserved")["reason"] == "Misconfigured"
    await stays_true(lambda: _suspended(env, "lost"))


async def _suspended(env: Env, job: str, ns: str = NS) -> bool:
    obj = await env.get(JOBS, job, ns)
    return bool(obj and obj["spec"].get("suspend") is True)


async def test_job_without_queue_label_is_left_alone_by_default(env: Env) -> None:
    await _quickstart_queues(env)
    created = await env.create(JOBS, make_job("plain", NS, queue=None))
    assert created["spec"].get("suspend") in (None, False)
    await stays_true(lambda: _no_workload(env, "plain"))


async def _no_workload(env: Env, job: str) -> bool:
    return await env.workload_of_job(job, NS) is None


async def test_deleting_a_running_job_frees_its_quota(env: Env) -> None:
    await _quickstart_queues(env)
    await env.create(JOBS, make_job("big", NS, cpu="3"))
    await eventually(lambda: _admitted(env, "big"))
    await env.create(JOBS, make_job("waiting", NS, cpu="3"))
    await eventually(lambda: _pending(env, "waiting"))
    await env.client.delete(JOBS, "big", NS)
    await eventually(lambda: _admitted(env, "waiting"), what="quota freed by deleting the running job")

    async def gone() -> bool:
        items, _ = await env.client.list(WORKLOADS, NS)
        return all(all(r.get("name") != "big" for r in w["metadata"].get("ownerReferences") or []) for w in items)

    await eventually(gone, what="the deleted job's workload is gone")


async def _pending(env: Env, job: str, ns: str = NS) -> Any:
    wl = await env.workload_of_job(job, ns)
    return wl if cond(wl, "QuotaReserved").get("status") == "False" else None


async def test_default_local_queue_is_used_when_the_job_names_none(env: Env) -> None:
    await env.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cluster-queue").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("default", NS, "cluster-queue").obj(),
    )
    await eventually(lambda: env.manager.caches.local_queues.get("default", NS) is not None or None)
    created = await env.create(JOBS, make_job("defaulted", NS, queue=None))
    assert created["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"
    assert created["spec"]["suspend"] is True
    await eventually(lambda: _admitted(env, "defaulted"))


async def test_partial_admission_lowers_parallelism(env: Env) -> None:
    await _quickstart_queues(env, cpu=4)
    await env.create(
        JOBS,
        make_job(
            "wide", NS, cpu="1", parallelism=6, completions=6, annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}
        ),
    )
    wl = await eventually(lambda: _admitted(env, "wide"))
    assert wl["spec"]["podSets"][0]["minCount"] == 2
    assert wl["status"]["admission"]["podSetAssignments"][0]["count"] == 4

    async def started() -> Any:
        job = await env.get(JOBS, "wide", NS)
        return job if job["spec"].get("suspend") is False else None

    job = await eventually(started, what="job started with the admitted count")
    assert job["spec"]["parallelism"] == 4


async def test_priority_comes_from_the_workload_priority_class_label(env: Env) -> None:
    from pykueue.controllers.resource_names import WORKLOAD_PRIORITY_CLASSES

    await _quickstart_queues(env)
    await env.create(
        WORKLOAD_PRIORITY_CLASSES,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
    )
    await eventually(lambda: env.manager.caches.workload_priority_classes.get("high") is not None or None)
    await env.create(JOBS, make_job("vip", NS, labels={"kueue.x-k8s.io/priority-class": "high"}))
    wl = await eventually(lambda: env.workload_of_job("vip", NS))
    assert wl["spec"]["priority"] == 1000
    assert wl["spec"]["priorityClassRef"] == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "high",
    }


async def test_evicted_job_is_suspended_with_its_original_template(env: Env) -> None:
    await _quickstart_queues(env)
    created = await env.create(JOBS, make_job("drained", NS))
    original_labels = created["spec"]["template"]["metadata"]["labels"]

    async def started() -> Any:
        job = await env.get(JOBS, "drained", NS)
        return job if job["spec"].get("suspend") is False else None

    job = await eventually(started)
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"instance-type": "on-demand"}
    assert job["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "main"
    await env.client.patch(CLUSTER_QUEUES, "cluster-queue", {"spec": {"stopPolicy": "HoldAndDrain"}})

    async def restored() -> Any:
        job = await env.get(JOBS, "drained", NS)
        template = job["spec"]["template"]
        return job if job["spec"]["suspend"] and "nodeSelector" not in template["spec"] else None

    job = await eventually(restored, what="job suspended and its template restored")
    assert job["spec"]["template"]["metadata"]["labels"] == original_labels


async def test_restart_rebuilds_state_without_double_admission(env: Env) -> None:
    from pykueue.controllers.manager import ControllerManager

    await _quickstart_queues(env)
    await env.create(JOBS, make_job("first", NS, cpu="3"))
    first = await eventually(lambda: _admitted(env, "first"))
    await env.create(JOBS, make_job("second", NS, cpu="3"))
    await eventually(lambda: _pending(env, "second"))
    await env.manager.stop()
    env.manager = ControllerManager(env.client, env.manager.config, env.clock)
    await env.manager.start()
    await stays_true(lambda: _pending(env, "second"))
    again = await env.workload_of_job("first", NS)
    assert again["status"]["admission"] == first["status"]["admission"]
    assert cond(again, "QuotaReserved")["lastTransitionTime"] == cond(first, "QuotaReserved")["lastTransitionTime"]
    await env.finish_job("first", NS)
    await eventually(lambda: _admitted(env, "second"), what="the restarted controllers hand the quota on")


async def test_changing_the_priority_class_label_updates_the_workload(env: Env) -> None:
    from pykueue.controllers.resource_names import WORKLOAD_PRIORITY_CLASSES

    await _quickstart_queues(env)
    for name, value in (("low", 1), ("high", 100)):
        await env.create(
            WORKLOAD_PRIORITY_CLASSES,
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
        )
    await eventually(lambda: env.manager.caches.workload_priority_classes.get("high") is not None or None)
    await env.create(
        JOBS, make_job("mover", NS, queue="no-such-queue", labels={"kueue.x-k8s.io/priority-class": "low"})
    )
    await eventually(lambda: env.workload_of_job("mover", NS))
    await env.client.patch(
        JOBS, "mover", {"metadata": {"labels": {"kueue.x-k8s.io/priority-class": "high"}}}, namespace=NS
    )

    async def raised() -> Any:
        wl = await env.workload_of_job("mover", NS)
        return wl if wl["spec"].get("priority") == 100 else None

    wl = await eventually(raised, what="workload priority follows the job's label")
    assert wl["spec"]["priorityClassRef"]["name"] == "high"


async def test_admission_gated_by_holds_the_workload_until_the_gate_is_removed(env: Env) -> None:
    await _quickstart_queues(env)
    gate = "kueue.x-k8s.io/admission-gated-by"
    await env.create(JOBS, make_job("gated", NS, annotations={gate: "example.com/approval"}))
    wl = await eventually(lambda: env.workload_of_job("gated", NS))
    assert wl["metadata"]["annotations"][gate] == "example.com/approval"
    await stays_true(lambda: _not_admitted(env, "gated"))
    await env.client.patch(JOBS, "gated", {"metadata": {"annotations": {gate: None}}}, namespace=NS)
    await eventually(lambda: _admitted(env, "gated"), what="admitted once the gate is gone")


async def _not_admitted(env: Env, job: str) -> bool:
    return await _admitted(env, job) is None


async def test_priority_falls_back_to_the_pod_templates_priority_class(env: Env) -> None:
    from pykueue.controllers.resource_names import PRIORITY_CLASSES

    await _quickstart_queues(env)
    await env.create(
        PRIORITY_CLASSES,
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 5000},
    )
    await eventually(lambda: env.manager.caches.priority_classes.get("urgent") is not None or None)
    await env.create(JOBS, make_job("pc", NS, priority_class="urgent"))
    wl = await eventually(lambda: env.workload_of_job("pc", NS))
    assert wl["spec"]["priority"] == 5000
    assert wl["spec"]["priorityClassRef"] == {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "urgent"}


async def test_a_queued_jobs_workload_follows_its_parallelism(env: Env) -> None:
    await _quickstart_queues(env)
    await env.create(JOBS, make_job("grows", NS, queue="no-such-queue", parallelism=2))
    await eventually(lambda: env.workload_of_job("grows", NS))
    await env.client.patch(JOBS, "grows", {"spec": {"parallelism": 3}}, namespace=NS)

    async def followed() -> Any:
        wl = await env.workload_of_job("grows", NS)
        return wl if wl["spec"]["podSets"][0]["count"] == 3 else None

    await eventually(followed, what="podSet count updated in place")
    await env.client.patch(
        JOBS, "grows", {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "user-queue"}}}, namespace=NS
    )
    wl = await eventually(lambda: _admitted(env, "grows"), what="queue name followed, then admitted")
    assert wl["spec"]["queueName"] == "user-queue"


async def test_a_workload_priority_class_named_default_is_applied_to_new_jobs(env: Env) -> None:
    from pykueue.controllers.resource_names import WORKLOAD_PRIORITY_CLASSES

    await _quickstart_queues(env)
    await env.create(
        WORKLOAD_PRIORITY_CLASSES,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "default"},
            "value": 7,
        },
    )
    await eventually(lambda: env.manager.caches.workload_priority_classes.get("default") is not None or None)
    created = await env.create(JOBS, make_job("plain-priority", NS))
    assert created["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "default"
    wl = await eventually(lambda: env.workload_of_job("plain-priority", NS))
    assert wl["spec"]["priority"] == 7
