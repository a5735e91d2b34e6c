"""A second EmbeddedCluster on the state of the first: what a restart of ``pykueue up --data-dir`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.waiting import eventually

from pykueue.api.meta.clock import ManualClock, SystemClock
from pykueue.api.meta.errors import NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client.group_version_resource import NODES, PODS
from pykueue.cluster import NodeSpec
from pykueue.registry.resource_registry import Registry
from pykueue.store import Store

from .conftest import has_condition, make_pod, running_cluster


async def running(env: Any, name: str) -> JSONDict:
    async def check() -> JSONDict | None:
        pod = await env.client.get(PODS, name, "default")
        return pod if pod.get("status", {}).get("phase") == "Running" else None

    return await eventually(check)


async def phase(env: Any, name: str, want: str) -> JSONDict:
    async def check() -> JSONDict | None:
        pod = await env.client.get(PODS, name, "default")
        return pod if pod.get("status", {}).get("phase") == want else None

    return await eventually(check)


async def test_simulated_pods_resume_and_process_pods_are_lost_across_a_restart(tmp_path: Path) -> None:
    clock = ManualClock(start=2_000_000_000.0)
    registry = Registry(Store(None), clock=clock)
    nodes = [NodeSpec(name="sim", kind="simulated", default_duration=3600), NodeSpec(name="proc", kind="process")]
    async with running_cluster(nodes, tmp_path, registry=registry, clock=clock) as env:
        simmed = make_pod("simmed", annotations={"pykueue.io/simulated-duration": "5"})
        simmed["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "sim"}
        await env.client.create(PODS, simmed)
        worker = make_pod("worker", command="sleep 600")
        worker["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "proc"}
        await env.client.create(PODS, worker)
        started = (await running(env, "simmed"))["status"]["startTime"]
        await running(env, "worker")
    clock.advance(10)  # the restart took longer than the pod had left to run
    async with running_cluster(nodes, tmp_path, registry=registry, clock=clock) as env:
        done = await phase(env, "simmed", "Succeeded")
        terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
        assert terminated["exitCode"] == 0
        assert terminated["startedAt"] == started, "resumed from its start, not run again from scratch"
        lost = await phase(env, "worker", "Failed")
        assert "lost" in lost["status"]["containerStatuses"][0]["state"]["terminated"]["message"]


async def test_nodes_no_longer_declared_are_removed_and_their_pods_fail(tmp_path: Path) -> None:
    registry = Registry(Store(None), clock=SystemClock())
    async with running_cluster(
        [NodeSpec(name="old", kind="simulated", default_duration=3600)], tmp_path, registry=registry
    ) as env:
        await env.client.create(PODS, make_pod("orphan"))
        await running(env, "orphan")
    async with running_cluster([NodeSpec(name="new", kind="simulated")], tmp_path, registry=registry) as env:
        failed = await phase(env, "orphan", "Failed")
        assert failed["status"]["reason"] == "NodeLost"
        assert has_condition(failed, "DisruptionTarget")
        try:
            await env.client.get(NODES, "old")
            raise AssertionError("node 'old' should be gone")
        except NotFound:
            pass
        assert (await env.client.get(NODES, "new"))["metadata"]["name"] == "new"
