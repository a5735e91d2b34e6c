"""The binder and the node agents on a real registry (LocalClient): placement, waiting, running, killing."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from tests.waiting import eventually

from pykueue.api.meta.clock import parse_time
from pykueue.api.meta.errors import BadRequest, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.apiserver.pod_log_endpoint import PodLogOptions
from pykueue.client.group_version_resource import LEASES, NODES, PODS
from pykueue.cluster import NodeSpec

from .conftest import has_condition, make_pod, running_cluster


def small(name: str, cpu: str = "4", **kwargs: Any) -> NodeSpec:
    return NodeSpec(
        name=name, kind="simulated", capacity={"cpu": cpu, "memory": "8Gi", "pods": "10"}, default_duration=60, **kwargs
    )


async def test_nodes_register_ready_with_capacity_labels_and_taints(tmp_path: Path) -> None:
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    async with running_cluster([small("a", labels={"zone": "x"}, taints=[taint])], tmp_path) as env:
        node = await env.client.get(NODES, "a")
        assert node["status"]["allocatable"]["cpu"] == "4"
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "a"
        assert node["metadata"]["labels"]["zone"] == "x"
        assert node["spec"]["taints"] == [taint]
        assert has_condition(node, "Ready")


async def test_binder_respects_capacity_and_explains_unschedulable_pods(tmp_path: Path) -> None:
    async with running_cluster([small("only")], tmp_path) as env:
        await env.client.create(PODS, make_pod("first", cpu="3"))
        await env.client.create(PODS, make_pod("second", cpu="3"))

        async def placed() -> tuple[JSONDict, JSONDict] | None:
            first = await env.client.get(PODS, "first", "default")
            second = await env.client.get(PODS, "second", "default")
            return (
                (first, second)
                if first["spec"].get("nodeName") and has_condition(second, "PodScheduled", "False")
                else None
            )

        first, second = await eventually(placed)
        assert first["spec"]["nodeName"] == "only"
        assert not second["spec"].get("nodeName")
        [cond] = [c for c in second["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert cond["reason"] == "Unschedulable"
        assert cond["message"] == "0/1 nodes are available: 1 Insufficient cpu."
        # Freeing the CPU lets the waiting pod in.
        await env.client.delete(PODS, "first", "default")

        async def second_bound() -> bool:
            return bool((await env.client.get(PODS, "second", "default"))["spec"].get("nodeName"))

        await eventually(second_bound)


async def test_binder_honours_selectors_and_taints(tmp_path: Path) -> None:
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    nodes = [small("plain"), small("gpu", labels={"accel": "a100"}, taints=[taint])]
    async with running_cluster(nodes, tmp_path) as env:
        await env.client.create(
            PODS,
            make_pod("tolerant", node_selector={"accel": "a100"}, tolerations=[{"key": "gpu", "operator": "Exists"}]),
        )
        await env.client.create(PODS, make_pod("intolerant", node_selector={"accel": "a100"}))
        await env.client.create(PODS, make_pod("anywhere"))

        async def settled() -> dict[str, str] | None:
            out = {}
            for name in ("tolerant", "intolerant", "anywhere"):
                p = await env.client.get(PODS, name, "default")
                if p["spec"].get("nodeName"):
                    out[name] = p["spec"]["nodeName"]
                elif has_condition(p, "PodScheduled", "False"):
                    out[name] = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")["message"]
            return out if len(out) == 3 else None

        placed = await eventually(settled)
        assert placed["tolerant"] == "gpu"
        assert placed["anywhere"] == "plain", "untolerated taints keep ordinary pods off the gpu node"
        assert placed["intolerant"] == (
            "0/2 nodes are available: 1 node(s) didn't match Pod's node "
            "affinity/selector, 1 node(s) had untolerated taint {gpu: yes}."
        )


async def test_gated_pods_wait_until_their_gates_are_removed(tmp_path: Path) -> None:
    async with running_cluster([small("n")], tmp_path) as env:
        await env.client.create(PODS, make_pod("gated", gates=["example.com/wait"]))
        await env.client.create(PODS, make_pod("canary"))

        async def canary_bound() -> bool:
            return bool((await env.client.get(PODS, "canary", "default"))["spec"].get("nodeName"))

        await eventually(canary_bound)  # the binder has had its chance at both pods
        assert not (await env.client.get(PODS, "gated", "default"))["spec"].get("nodeName")
        await env.client.patch(PODS, "gated", {"spec": {"schedulingGates": None}}, namespace="default")

        async def gated_bound() -> bool:
            return bool((await env.client.get(PODS, "gated", "default"))["spec"].get("nodeName"))

        await eventually(gated_bound)


async def test_simulated_node_finishes_pods_with_the_annotated_duration_and_exit_code(tmp_path: Path) -> None:
    async with running_cluster([small("sim")], tmp_path) as env:
        await env.client.create(PODS, make_pod("ok", annotations={"pykueue.io/simulated-duration": "0.2"}))
        await env.client.create(
            PODS,
            make_pod(
                "bad", annotations={"pykueue.io/simulated-duration": "0.1", "pykueue.io/simulated-exit-code": "3"}
            ),
        )
        await env.client.create(PODS, make_pod("long", annotations={"pykueue.io/simulated-duration": "3600"}))

        async def finished() -> tuple[JSONDict, JSONDict] | None:
            ok = await env.client.get(PODS, "ok", "default")
            bad = await env.client.get(PODS, "bad", "default")
            done = all(p.get("status", {}).get("phase") in ("Succeeded", "Failed") for p in (ok, bad))
            return (ok, bad) if done else None

        ok, bad = await eventually(finished)
        assert ok["status"]["phase"] == "Succeeded"
        assert ok["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
        assert bad["status"]["phase"] == "Failed"
        assert bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
        long = await env.client.get(PODS, "long", "default")
        assert long["status"]["phase"] == "Running"
        assert has_condition(long, "Ready")


async def test_process_node_runs_commands_and_deleting_a_pod_kills_its_process(
    tmp_path: Path, pod_scratch: Path
) -> None:
    pid_file = pod_scratch / "pid"
    node = NodeSpec(name="proc", kind="process")
    async with running_cluster([node], tmp_path) as env:
        pod = make_pod("runner", command=f"echo started; echo $$ > {pid_file}; exec sleep 600")
        await env.client.create(PODS, pod)

        async def running() -> bool:
            p = await env.client.get(PODS, "runner", "default")
            phase = p.get("status", {}).get("phase")
            return phase == "Running" and pid_file.exists() and pid_file.read_text().strip() != ""

        await eventually(running)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        # the shim copies output to the log as it comes: wait for it, as `kubectl logs` would
        await eventually(lambda: _async("started" in env.cluster.pod_log("default", "runner")))
        await env.client.delete(PODS, "runner", "default")

        async def dead() -> bool:
            return not _alive(pid)

        await eventually(dead)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


async def test_pod_held_by_a_finalizer_is_stopped_and_reported_failed_on_delete(
    tmp_path: Path, pod_scratch: Path
) -> None:
    pid_file = pod_scratch / "pid"
    async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path) as env:
        pod = make_pod("held", command=f"echo $$ > {pid_file}; exec sleep 600")
        pod["metadata"]["finalizers"] = ["example.com/keep"]
        await env.client.create(PODS, pod)

        async def running() -> bool:
            p = await env.client.get(PODS, "held", "default")
            return (
                p.get("status", {}).get("phase") == "Running"
                and pid_file.exists()
                and bool(pid_file.read_text().strip())
            )

        await eventually(running)
        pid = int(pid_file.read_text())
        await env.client.delete(PODS, "held", "default")

        async def failed() -> JSONDict | None:
            p = await env.client.get(PODS, "held", "default")
            return p if p.get("status", {}).get("phase") == "Failed" else None

        p = await eventually(failed)
        assert p["metadata"]["deletionTimestamp"]
        assert p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143
        await eventually(lambda: _async(not _alive(pid)))
        await env.client.patch(PODS, "held", {"metadata": {"finalizers": None}}, namespace="default")


async def test_node_heartbeats_through_a_lease(tmp_path: Path) -> None:
    async with running_cluster([small("beating")], tmp_path) as env:

        async def lease() -> JSONDict | None:
            try:
                return await env.client.get(LEASES, "beating", "kube-node-lease")
            except NotFound:
                return None

        found = await eventually(lease)
        assert found["spec"]["holderIdentity"] == "beating"
        assert found["spec"]["renewTime"]


async def _async(value: bool) -> bool:
    return value


class VirtualClock:
    """A clock with its own ``sleep``: simulated pods wait on it, never on wall time."""

    def __init__(self) -> None:
        self.time = 1_900_000_000.0

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        self.time += seconds


async def test_simulated_durations_run_on_a_clock_that_can_sleep(tmp_path: Path) -> None:
    clock = VirtualClock()
    async with running_cluster([small("virtual")], tmp_path, clock=clock) as env:
        await env.client.create(PODS, make_pod("day-long", annotations={"pykueue.io/simulated-duration": "86400"}))

        async def done() -> JSONDict | None:
            p = await env.client.get(PODS, "day-long", "default")
            return p if p.get("status", {}).get("phase") == "Succeeded" else None

        p = await eventually(done)
        terminated = p["status"]["containerStatuses"][0]["state"]["terminated"]
        assert parse_time(terminated["finishedAt"]) - parse_time(terminated["startedAt"]) >= 86400


async def test_process_node_commands_from_images_and_a_clear_error_without_one(tmp_path: Path) -> None:
    async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path) as env:
        args_only = make_pod("args-only")
        args_only["spec"]["containers"][0].pop("command")
        args_only["spec"]["containers"][0]["args"] = ["sh", "-c", "echo from args"]
        sleeper = make_pod("sleeper")
        sleeper["spec"]["containers"][0] = {
            "name": "main",
            "image": "gcr.io/k8s-staging-perf-tests/sleep:v0.1.0",
            "args": ["100ms"],
        }
        opaque = make_pod("opaque")
        opaque["spec"]["containers"][0] = {"name": "main", "image": "example.com/trainer:v1"}
        for pod in (args_only, sleeper, opaque):
            await env.client.create(PODS, pod)

        async def all_done() -> dict[str, JSONDict] | None:
            pods = {n: await env.client.get(PODS, n, "default") for n in ("args-only", "sleeper", "opaque")}
            terminal = all(p.get("status", {}).get("phase") in ("Succeeded", "Failed") for p in pods.values())
            return pods if terminal else None

        pods = await eventually(all_done)
        assert pods["args-only"]["status"]["phase"] == "Succeeded"
        assert env.cluster.pod_log("default", "args-only") == "from args\n"
        assert pods["sleeper"]["status"]["phase"] == "Succeeded"
        assert pods["opaque"]["status"]["phase"] == "Failed"
        terminated = pods["opaque"]["status"]["containerStatuses"][0]["state"]["terminated"]
        assert terminated["reason"] == "ContainerCannotRun"
        assert "has no command" in terminated["message"]


async def test_pod_log_errors_read_like_the_kubelets(tmp_path: Path) -> None:
    async with running_cluster([small("tiny", cpu="1")], tmp_path) as env:
        pair = make_pod("pair", cpu="100m")
        pair["spec"]["containers"].append({"name": "side", "image": "busybox", "command": ["true"]})
        await env.client.create(PODS, pair)
        await env.client.create(PODS, make_pod("waiting", cpu="8"))

        async def cached() -> bool:
            return (
                env.cluster.pods.get("pair", "default") is not None
                and env.cluster.pods.get("waiting", "default") is not None
            )

        await eventually(cached)
        with pytest.raises(NotFound):
            env.cluster.pod_log("default", "ghost")
        with pytest.raises(
            BadRequest,
            match=r"a container name must be specified for pod pair, choose one of: "
            r"\[main side\]",
        ):
            env.cluster.pod_log("default", "pair")
        with pytest.raises(BadRequest, match="container nope is not valid for pod pair"):
            env.cluster.pod_log("default", "pair", "nope")
        with pytest.raises(BadRequest, match="is waiting to start: ContainerCreating"):
            env.cluster.pod_log("default", "waiting")


async def test_a_process_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path: Path, pod_scratch: Path) -> None:
    pid_file = pod_scratch / "pid"
    async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path) as env:
        pod = make_pod("stubborn", command=f"trap '' TERM; echo $$ > {pid_file}; while true; do sleep 0.1; done")
        pod["spec"]["terminationGracePeriodSeconds"] = 1
        await env.client.create(PODS, pod)

        async def started() -> bool:
            return pid_file.exists() and bool(pid_file.read_text().strip())

        await eventually(started)
        pid = int(pid_file.read_text())
        await env.client.delete(PODS, "stubborn", "default")
        await eventually(lambda: _async(not _alive(pid)))


async def test_process_env_reads_configmaps_and_secrets_and_fails_clearly_on_missing_ones(tmp_path: Path) -> None:
    import base64

    from pykueue.client import GroupVersionResource

    async with running_cluster([NodeSpec(name="proc", kind="process")], tmp_path) as env:
        await env.client.create(
            GroupVersionResource("", "v1", "configmaps"),
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "default"},
                "data": {"MODE": "fast", "LEVEL": "3"},
            },
        )
        await env.client.create(
            GroupVersionResource("", "v1", "secrets"),
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "creds", "namespace": "default"},
                "data": {"token": base64.b64encode(b"s3cret").decode()},
            },
        )
        good = make_pod("envy", command='echo "$CFG_MODE $CFG_LEVEL $TOKEN $GREETING"')
        good["spec"]["containers"][0]["envFrom"] = [{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}]
        good["spec"]["containers"][0]["env"] = [
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "WHO", "value": "world"},
            {"name": "GREETING", "value": "hello $(WHO)"},
            {"name": "MAYBE", "valueFrom": {"configMapKeyRef": {"name": "absent", "key": "x", "optional": True}}},
        ]
        bad = make_pod("missing-ref", command="true")
        bad["spec"]["containers"][0]["env"] = [
            {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "NOPE"}}}
        ]
        await env.client.create(PODS, good)
        await env.client.create(PODS, bad)

        async def both_done() -> tuple[JSONDict, JSONDict] | None:
            a = await env.client.get(PODS, "envy", "default")
            b = await env.client.get(PODS, "missing-ref", "default")
            done = all(p.get("status", {}).get("phase") in ("Succeeded", "Failed") for p in (a, b))
            return (a, b) if done else None

        a, b = await eventually(both_done)
        assert a["status"]["phase"] == "Succeeded"
        assert env.cluster.pod_log("default", "envy") == "fast 3 s3cret hello world\n"
        assert b["status"]["phase"] == "Failed"
        terminated = b["status"]["containerStatuses"][0]["state"]["terminated"]
        assert terminated["reason"] == "CreateContainerConfigError"
        assert terminated["message"] == "couldn't find key NOPE in ConfigMap settings"


async def test_restart_policy_always_restarts_containers_that_exit(tmp_path: Path) -> None:
    async with running_cluster([small("sim", cpu="4")], tmp_path) as env:
        pod = make_pod("daemon", annotations={"pykueue.io/simulated-duration": "0.05"})
        pod["spec"]["restartPolicy"] = "Always"
        await env.client.create(PODS, pod)

        async def restarted() -> JSONDict | None:
            p = await env.client.get(PODS, "daemon", "default")
            statuses = p.get("status", {}).get("containerStatuses") or []
            return p if statuses and statuses[0].get("restartCount", 0) >= 1 else None

        p = await eventually(restarted)
        assert p["status"]["phase"] == "Running"
        assert p["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 0


async def test_a_simulated_pods_log_is_served_with_the_options_and_followed_until_it_ends(tmp_path: Path) -> None:
    node = NodeSpec(
        name="sim", kind="simulated", capacity={"cpu": "4", "memory": "8Gi", "pods": "10"}, default_duration=1.5
    )
    async with running_cluster([node], tmp_path) as env:
        await env.client.create(PODS, make_pod("dreamer", cpu="100m"))

        async def running() -> bool:
            pod = env.cluster.pods.get("dreamer", "default")
            return pod is not None and (pod.get("status") or {}).get("phase") == "Running"

        await eventually(running)
        line = b"pykueue simulated node sim: container main runs for 1.5s\n"
        chunks = await env.cluster.open_pod_log("default", "dreamer", PodLogOptions(timestamps=True))
        stamped = b"".join([chunk async for chunk in chunks])
        assert stamped.endswith(b"Z " + line)
        chunks = await env.cluster.open_pod_log("default", "dreamer", PodLogOptions(tail_lines=0))
        assert b"".join([chunk async for chunk in chunks]) == b""
        with pytest.raises(BadRequest, match='previous terminated container "main" in pod "dreamer" not found'):
            await env.cluster.open_pod_log("default", "dreamer", PodLogOptions(previous=True))
        # -f: the line, then nothing until the pod has run its 1.5 s; then the stream ends
        chunks = await env.cluster.open_pod_log("default", "dreamer", PodLogOptions(follow=True))
        followed = await asyncio.wait_for(_collect(chunks), 30)
        assert followed == line
        phase = (env.cluster.pods.get("dreamer", "default") or {}).get("status", {}).get("phase")
        assert phase == "Succeeded"


async def _collect(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([chunk async for chunk in chunks])
