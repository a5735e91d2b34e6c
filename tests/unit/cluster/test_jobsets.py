"""The embedded JobSet controller: child Jobs, suspend propagation, completion and failure."""

from __future__ import annotations

from pathlib import Path

from tests.waiting import eventually

from pykueue.api.meta.json_types import JSONDict
from pykueue.client.group_version_resource import JOBS, JOBSETS
from pykueue.cluster import NodeSpec

from .conftest import Env, has_condition, running_cluster

SIM = NodeSpec(name="sim", kind="simulated", default_duration=0.2)


def make_jobset(
    name: str, *, suspend: bool = False, exit_code: str = "0", replicas: int = 2, max_restarts: int | None = None
) -> JSONDict:
    def rjob(rname: str, reps: int) -> JSONDict:
        return {
            "name": rname,
            "replicas": reps,
            "template": {
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "backoffLimit": 0,
                    "template": {
                        "metadata": {"annotations": {"pykueue.io/simulated-exit-code": exit_code}},
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "main",
                                    "image": "busybox",
                                    "command": ["true"],
                                    "resources": {"requests": {"cpu": "100m"}},
                                }
                            ],
                        },
                    },
                }
            },
        }

    spec: JSONDict = {"suspend": suspend, "replicatedJobs": [rjob("driver", 1), rjob("workers", replicas)]}
    if max_restarts is not None:
        spec["failurePolicy"] = {"maxRestarts": max_restarts}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


async def children(env: Env, name: str) -> list[JSONDict]:
    jobs, _ = await env.client.list(JOBS, "default", label_selector=f"jobset.sigs.k8s.io/jobset-name={name}")
    return sorted(jobs, key=lambda j: str(j["metadata"]["name"]))


async def jobset_with(env: Env, name: str, kind: str) -> JSONDict:
    async def check() -> JSONDict | None:
        js = await env.client.get(JOBSETS, name, "default")
        return js if has_condition(js, kind) else None

    return await eventually(check)


async def test_jobset_creates_labelled_child_jobs_and_completes(tmp_path: Path) -> None:
    async with running_cluster([SIM], tmp_path) as env:
        created = await env.client.create(JOBSETS, make_jobset("train"))
        js = await jobset_with(env, "train", "Completed")
        assert js["status"]["terminalState"] == "Completed"
        jobs = await children(env, "train")
        assert [j["metadata"]["name"] for j in jobs] == ["train-driver-0", "train-workers-0", "train-workers-1"]
        for job in jobs:
            labels = job["metadata"]["labels"]
            assert labels["jobset.sigs.k8s.io/jobset-name"] == "train"
            assert labels["jobset.sigs.k8s.io/replicatedjob-name"] in ("driver", "workers")
            assert labels["jobset.sigs.k8s.io/job-index"] == job["metadata"]["name"][-1]
            [owner] = job["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["uid"], owner["controller"]) == ("JobSet", created["metadata"]["uid"], True)
            assert has_condition(job, "Complete")
        by_name = {s["name"]: s for s in js["status"]["replicatedJobsStatus"]}
        assert by_name["workers"]["succeeded"] == 2
        assert by_name["driver"]["succeeded"] == 1


async def test_suspended_jobset_keeps_children_suspended_until_resumed_with_injected_template(tmp_path: Path) -> None:
    async with running_cluster([SIM], tmp_path) as env:
        await env.client.create(JOBSETS, make_jobset("held", suspend=True, replicas=1))

        async def suspended_children() -> list[JSONDict] | None:
            jobs = await children(env, "held")
            return jobs if len(jobs) == 2 and all(j["spec"]["suspend"] for j in jobs) else None

        await eventually(suspended_children)
        js = await jobset_with(env, "held", "Suspended")
        assert not has_condition(js, "Completed")
        # What Kueue's JobSet integration does on admission: inject scheduling directives, unsuspend.
        current = await env.client.get(JOBSETS, "held", "default")
        for rjob in current["spec"]["replicatedJobs"]:
            pod_spec = rjob["template"]["spec"]["template"]["spec"]
            pod_spec["nodeSelector"] = {"kubernetes.io/hostname": "sim"}
            rjob["template"]["spec"]["template"]["metadata"]["labels"] = {"kueue.x-k8s.io/podset": rjob["name"]}
        current["spec"]["suspend"] = False
        await env.client.update(JOBSETS, current)
        await jobset_with(env, "held", "Completed")
        for job in await children(env, "held"):
            template = job["spec"]["template"]
            assert template["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "sim"}
            assert template["metadata"]["labels"]["kueue.x-k8s.io/podset"] in ("driver", "workers")


async def test_a_failed_child_fails_the_jobset_without_restarts(tmp_path: Path) -> None:
    async with running_cluster([SIM], tmp_path) as env:
        await env.client.create(JOBSETS, make_jobset("broken", exit_code="1", replicas=1))
        js = await jobset_with(env, "broken", "Failed")
        assert js["status"]["terminalState"] == "Failed"
        [cond] = [c for c in js["status"]["conditions"] if c["type"] == "Failed"]
        assert cond["reason"] == "FailedJobs"
        assert not has_condition(js, "Completed")


async def test_success_policy_any_on_the_driver_completes_and_stops_the_workers(tmp_path: Path) -> None:
    nodes = [SIM, NodeSpec(name="slow", kind="simulated", default_duration=3600, labels={"speed": "slow"})]
    async with running_cluster(nodes, tmp_path) as env:
        js = make_jobset("driven", replicas=2)
        js["spec"]["successPolicy"] = {"operator": "Any", "targetReplicatedJobs": ["driver"]}
        workers = js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
        workers["nodeSelector"] = {"speed": "slow"}  # workers would run for an hour
        await env.client.create(JOBSETS, js)
        done = await jobset_with(env, "driven", "Completed")
        assert done["status"]["terminalState"] == "Completed"

        async def workers_gone() -> bool:
            return [j["metadata"]["name"] for j in await children(env, "driven")] == ["driven-driver-0"]

        await eventually(workers_gone)


async def test_max_restarts_recreates_children_before_failing(tmp_path: Path) -> None:
    async with running_cluster([SIM], tmp_path) as env:
        await env.client.create(JOBSETS, make_jobset("retry", exit_code="1", replicas=1, max_restarts=1))
        js = await jobset_with(env, "retry", "Failed")
        assert js["status"]["restarts"] == 1
        jobs = await children(env, "retry")
        assert {j["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] for j in jobs} == {"1"}
