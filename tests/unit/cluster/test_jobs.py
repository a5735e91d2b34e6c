"""The embedded Job controller with process and simulated nodes, on a real registry."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest
from tests.waiting import eventually

from pykueue.api.meta.clock import ManualClock, format_time
from pykueue.api.meta.json_types import JSONDict
from pykueue.client.group_version_resource import EVENTS, JOBS, PODS
from pykueue.cluster import NodeSpec
from pykueue.cluster.jobs import INDEX_KEY, format_indexes, parse_indexes

from .conftest import Env, has_condition, make_job, running_cluster

PROCESS = NodeSpec(name="local", kind="process")


async def finished(env: Env, name: str, kind: str = "Complete") -> JSONDict:
    async def check() -> JSONDict | None:
        job = await env.job(name)
        return job if has_condition(job, kind) else None

    return await eventually(check)


@pytest.mark.parametrize("via", ["local", "http"])
async def test_parallel_job_completes_on_a_process_node_and_its_logs_are_served(tmp_path: Path, via: str) -> None:
    async with running_cluster([PROCESS], tmp_path, via=via) as env:
        await env.client.create(JOBS, make_job("hello", 'echo "hello from $HOSTNAME"', parallelism=2, completions=2))
        job = await finished(env, "hello")
        status = job["status"]
        assert status["succeeded"] == 2
        assert not status.get("active")
        assert status["startTime"]
        assert status["completionTime"]
        assert has_condition(job, "SuccessCriteriaMet")
        pods = await env.pods_of("hello")
        assert len(pods) == 2
        uid = job["metadata"]["uid"]
        for pod in pods:
            name = pod["metadata"]["name"]
            assert re.fullmatch(r"hello-[a-z0-9]{5}", name)
            labels = pod["metadata"]["labels"]
            assert labels["batch.kubernetes.io/job-name"] == labels["job-name"] == "hello"
            assert labels["batch.kubernetes.io/controller-uid"] == labels["controller-uid"] == uid
            [owner] = pod["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["uid"], owner["controller"]) == ("Job", uid, True)
            assert pod["status"]["phase"] == "Succeeded"
            assert env.cluster.pod_log("default", name) == f"hello from {name}\n"


async def test_logs_through_the_real_api_server(tmp_path: Path) -> None:
    from tests.unit.client.conftest import start_server  # the same API server the client tests use

    async with running_cluster([PROCESS], tmp_path) as env:
        server, url, token = await start_server(env.registry)
        server.set_pod_log_handler(env.cluster.open_pod_log)
        try:
            await env.client.create(JOBS, make_job("served", "echo via http"))
            await finished(env, "served")
            [pod] = await env.pods_of("served")
            async with (
                aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session,
                session.get(f"{url}/api/v1/namespaces/default/pods/{pod['metadata']['name']}/log") as resp,
            ):
                assert resp.status == 200
                assert await resp.text() == "via http\n"
        finally:
            await server.close()


async def test_backoff_limit_exceeded_fails_the_job(tmp_path: Path) -> None:
    async with running_cluster([PROCESS], tmp_path) as env:
        await env.client.create(JOBS, make_job("flaky", "exit 2", backoff_limit=1))
        job = await finished(env, "flaky", "Failed")
        [cond] = [c for c in job["status"]["conditions"] if c["type"] == "Failed"]
        assert cond["reason"] == "BackoffLimitExceeded"
        assert has_condition(job, "FailureTarget")
        assert job["status"]["failed"] == 2, "backoffLimit 1 allows one retry: two failed pods"
        assert not has_condition(job, "Complete")
        pods = await env.pods_of("flaky")
        assert sorted(p["status"]["phase"] for p in pods) == ["Failed", "Failed"]


async def test_suspend_deletes_active_pods_and_resume_starts_again(tmp_path: Path) -> None:
    sim = NodeSpec(name="sim", kind="simulated", default_duration=3600)
    async with running_cluster([sim], tmp_path) as env:
        await env.client.create(JOBS, make_job("pausable", "true", parallelism=2, completions=2))

        async def two_active() -> JSONDict | None:
            job = await env.job("pausable")
            return job if (job.get("status") or {}).get("active") == 2 else None

        first = await eventually(two_active)
        first_start = first["status"]["startTime"]
        await env.client.patch(JOBS, "pausable", {"spec": {"suspend": True}}, namespace="default")

        async def suspended() -> JSONDict | None:
            job = await env.job("pausable")
            pods = await env.pods_of("pausable")
            return job if has_condition(job, "Suspended") and not pods else None

        job = await eventually(suspended)
        assert not job["status"].get("active")
        assert "startTime" not in job["status"]
        await env.client.patch(JOBS, "pausable", {"spec": {"suspend": False}}, namespace="default")
        resumed = await eventually(two_active)
        assert has_condition(resumed, "Suspended", "False")
        assert resumed["status"]["startTime"] >= first_start
        assert len(await env.pods_of("pausable")) == 2


async def test_created_suspended_job_makes_no_pods(tmp_path: Path) -> None:
    async with running_cluster([PROCESS], tmp_path) as env:
        await env.client.create(JOBS, make_job("held", "true", suspend=True))
        job = await eventually(lambda: _with_condition(env, "held", "Suspended"))
        assert not job["status"].get("startTime")
        assert await env.pods_of("held") == []


async def _with_condition(env: Env, name: str, kind: str) -> JSONDict | None:
    job = await env.job(name)
    return job if has_condition(job, kind) else None


async def test_indexed_job_runs_each_index_once(tmp_path: Path) -> None:
    async with running_cluster([PROCESS], tmp_path) as env:
        await env.client.create(
            JOBS, make_job("idx", "echo index=$JOB_COMPLETION_INDEX", parallelism=2, completions=3, indexed=True)
        )
        job = await finished(env, "idx")
        assert job["status"]["completedIndexes"] == "0-2"
        assert job["status"]["succeeded"] == 3
        pods = await env.pods_of("idx")
        indexes = sorted(int(p["metadata"]["annotations"][INDEX_KEY]) for p in pods)
        assert indexes == [0, 1, 2]
        for pod in pods:
            index = pod["metadata"]["labels"][INDEX_KEY]
            assert pod["metadata"]["name"].startswith(f"idx-{index}-")
            assert env.cluster.pod_log("default", pod["metadata"]["name"]) == f"index={index}\n"


def test_completed_indexes_round_trip() -> None:
    assert parse_indexes("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}
    assert format_indexes({8, 0, 1, 2, 5, 7}) == "0-2,5,7-8"
    assert format_indexes(set()) == ""


async def test_deleting_a_job_removes_its_pods_and_stops_their_processes(tmp_path: Path, pod_scratch: Path) -> None:
    marker = pod_scratch / "pids"  # pods may not write to tmp_path
    async with running_cluster([PROCESS], tmp_path) as env:
        await env.client.create(
            JOBS, make_job("doomed", f"echo $$ >> {marker}; exec sleep 600", parallelism=2, completions=2)
        )

        async def both_running() -> list[int] | None:
            pids = marker.read_text().split() if marker.exists() else []
            return [int(p) for p in pids] if len(pids) == 2 else None

        pids = await eventually(both_running)
        await env.client.delete(JOBS, "doomed", "default", propagation="Background")

        async def gone() -> bool:
            return not await env.pods_of("doomed") and not any(_alive(pid) for pid in pids)

        await eventually(gone)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


async def test_active_deadline_is_measured_on_the_injected_clock(tmp_path: Path) -> None:
    clock = ManualClock(start=2_000_000_000.0)
    sim = NodeSpec(name="sim", kind="simulated", default_duration=3600)
    async with running_cluster([sim], tmp_path, clock=clock) as env:
        job = make_job("bounded", "true")
        job["spec"]["activeDeadlineSeconds"] = 100
        await env.client.create(JOBS, job)

        async def active() -> JSONDict | None:
            current = await env.job("bounded")
            return current if (current.get("status") or {}).get("active") == 1 else None

        started = await eventually(active)
        assert started["status"]["startTime"] == format_time(clock.now())
        clock.advance(101)
        # Any event makes the controller look again; the deadline is judged on the clock, not on sleeping.
        await env.client.patch(JOBS, "bounded", {"metadata": {"labels": {"poke": "1"}}}, namespace="default")
        failed = await finished(env, "bounded", "Failed")
        [cond] = [c for c in failed["status"]["conditions"] if c["type"] == "Failed"]
        assert cond["reason"] == "DeadlineExceeded"
        assert await eventually(lambda: _no_active_pods(env, "bounded"))


async def _no_active_pods(env: Env, name: str) -> bool:
    return all(p.get("status", {}).get("phase") in ("Succeeded", "Failed") for p in await env.pods_of(name))


async def test_events_tell_the_story_like_kubectl_describe(tmp_path: Path) -> None:
    async with running_cluster([PROCESS], tmp_path) as env:
        await env.client.create(JOBS, make_job("storied", "true"))
        await finished(env, "storied")
        [pod] = await env.pods_of("storied")
        pod_name = pod["metadata"]["name"]

        async def reasons() -> set[tuple[str, str, str]] | None:
            events, _ = await env.client.list(EVENTS, "default")
            seen = {(e["involvedObject"]["name"], e["reason"], e["source"]["component"]) for e in events}
            wanted = {
                ("storied", "SuccessfulCreate", "job-controller"),
                ("storied", "Completed", "job-controller"),
                (pod_name, "Scheduled", "default-scheduler"),
                (pod_name, "Started", "kubelet"),
            }
            return seen if wanted <= seen else None

        seen = await eventually(reasons)
        assert ("storied", "SuccessfulCreate", "job-controller") in seen


async def test_a_running_pod_deleted_by_someone_else_counts_as_failed_and_is_replaced(tmp_path: Path) -> None:
    sim = NodeSpec(name="sim", kind="simulated", default_duration=3600)
    async with running_cluster([sim], tmp_path) as env:
        await env.client.create(JOBS, make_job("victim", "true", backoff_limit=3))

        async def one_running() -> JSONDict | None:
            pods = [p for p in await env.pods_of("victim") if p.get("status", {}).get("phase") == "Running"]
            return pods[0] if pods else None

        first = await eventually(one_running)
        await env.client.delete(PODS, first["metadata"]["name"], "default")

        async def replaced() -> JSONDict | None:
            job = await env.job("victim")
            pods = await env.pods_of("victim")
            names = {p["metadata"]["name"] for p in pods}
            ok = job.get("status", {}).get("failed") == 1 and pods and first["metadata"]["name"] not in names
            return job if ok else None

        job = await eventually(replaced)
        assert job["status"]["active"] == 1
        assert not has_condition(job, "Failed")


async def test_on_failure_restarts_in_place_and_counts_restarts_against_the_backoff_limit(
    tmp_path: Path, pod_scratch: Path
) -> None:
    marker = pod_scratch / "tried"  # pods may not write to tmp_path
    async with running_cluster([PROCESS], tmp_path) as env:
        second_time_lucky = make_job("retry", f"if [ -f {marker} ]; then echo ok; else touch {marker}; exit 1; fi")
        second_time_lucky["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
        await env.client.create(JOBS, second_time_lucky)
        hopeless = make_job("hopeless", "exit 3", backoff_limit=1)
        hopeless["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
        await env.client.create(JOBS, hopeless)

        done = await finished(env, "retry")
        assert not done["status"].get("failed"), "a restart in place is not a failed pod"
        [pod] = await env.pods_of("retry")
        status = pod["status"]["containerStatuses"][0]
        assert status["restartCount"] == 1
        assert status["lastState"]["terminated"]["exitCode"] == 1
        assert env.cluster.pod_log("default", pod["metadata"]["name"]).endswith("ok\n")

        failed = await finished(env, "hopeless", "Failed")
        [cond] = [c for c in failed["status"]["conditions"] if c["type"] == "Failed"]
        assert cond["reason"] == "BackoffLimitExceeded"
        assert failed["status"]["failed"] == 1, "OnFailure retried inside its one pod, killed when the Job failed"
