"""The part of a kubelet every embedded node agent shares: Node registration, heartbeats, pod status.

Owned by ``cluster/``; subclassed by :mod:`.process` (runs containers as local processes) and
:mod:`.simulated` (pretends to, for a declared duration). The agent watches pods bound to its node
(through the cluster's shared pod informer), runs each one once, and reports phases
Pending → Running → Succeeded/Failed with container statuses and conditions as a kubelet does.
A pod deleted while running is stopped (the subclass decides how).

Invariant: exactly one runner task per pod key; status is written only through the Client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from pykueue.api.meta.clock import Clock, format_time
from pykueue.api.meta.errors import AlreadyExists, ApiError, BadRequest, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer, key_of, split_key
from pykueue.client.group_version_resource import LEASES, NODES, PODS
from pykueue.cluster.nodes import NodeSpec
from pykueue.cluster.pod_logs import LogReader, LogReadOptions
from pykueue.cluster.podutil import Record, no_record, set_condition

__all__ = ["ContainerResult", "NodeAgent", "Running"]

log = logging.getLogger(__name__)


LEASE_SECONDS = 40
HEARTBEAT_SECONDS = 10.0
"""How often the node's Lease is renewed (kubelet's default)."""
RESTART_BACKOFF = 1.0
"""First delay before restarting a container (kubelet: 10 s); doubles up to ``MAX_RESTART_BACKOFF``."""
MAX_RESTART_BACKOFF = 60.0
NODE_STATUS_SECONDS = 300.0
"""How often the Node's status (Ready, lastHeartbeatTime) is rewritten: kubelet's 5-minute report."""


Running = Callable[[], Awaitable[None]]
"""Called by :meth:`NodeAgent.execute` once the pod's containers have started."""


@dataclass(frozen=True, slots=True)
class ContainerResult:
    name: str
    exit_code: int
    reason: str = ""
    message: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0
    restart_count: int = 0


class NodeAgent:
    """Base class; subclasses implement :meth:`execute` (and may override :meth:`resume`)."""

    kind = "base"

    def __init__(
        self, client: Client, spec: NodeSpec, pods: Informer, clock: Clock, *, record: Record = no_record
    ) -> None:
        self.client = client
        self.record = record
        self.spec = spec
        self.pods = pods
        self.clock = clock
        self._runs: dict[str, asyncio.Task[None]] = {}
        self._statuses: dict[str, dict[str, JSONDict]] = {}
        """pod key -> container name -> its containerStatus, while the pod runs (restarts update it)."""
        self._done: set[str] = set()
        """uids of pods this agent ran to the end (late events about them must not start them again)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = False

    @property
    def name(self) -> str:
        return self.spec.name

    def now(self) -> str:
        return format_time(self.clock.now())

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.register()
        await self._renew_lease()
        self._spawn(self._heartbeat(), f"node-{self.name}-heartbeat")
        self.pods.add_handler(self._on_pod)

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        self._stopping = True
        tasks = [*self._tasks, *self._runs.values()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self._runs.clear()

    async def register(self) -> None:
        """Create (or take over) this node's Node object and report it Ready."""
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "labels": self.spec.node_labels(),
                "annotations": {"pykueue.io/node-kind": self.spec.kind},
            },
            "spec": {"taints": list(self.spec.taints)} if self.spec.taints else {},
        }
        try:
            await self.client.create(NODES, node)
        except AlreadyExists:
            current = await self.client.get(NODES, self.name)
            current["metadata"]["labels"] = {**(current["metadata"].get("labels") or {}), **self.spec.node_labels()}
            current["spec"] = {**(current.get("spec") or {}), "taints": list(self.spec.taints)}
            if not self.spec.taints:
                current["spec"].pop("taints")
            await self.client.update(NODES, current)
        await self._write_node_status()

    async def _write_node_status(self) -> None:
        now = self.now()
        status = {
            "capacity": dict(self.spec.capacity),
            "allocatable": dict(self.spec.capacity),
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": f"pykueue {self.spec.kind} node agent is posting ready status",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                },
            ],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}, {"type": "Hostname", "address": self.name}],
            "nodeInfo": {
                "kubeletVersion": "v1.32.0-pykueue",
                "operatingSystem": "linux",
                "architecture": self.spec.node_labels()["kubernetes.io/arch"],
                "containerRuntimeVersion": f"pykueue-{self.spec.kind}://0.1",
                "osImage": socket.gethostname(),
                "kernelVersion": "",
                "kubeProxyVersion": "",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
            },
        }
        await self.client.patch(NODES, self.name, {"status": status}, subresource="status")

    heartbeat_seconds = HEARTBEAT_SECONDS

    async def _heartbeat(self) -> None:
        since_status = 0.0
        # A random phase spreads the renewals of many nodes (a simulated fleet) over the interval.
        await asyncio.sleep(random.uniform(0, self.heartbeat_seconds))
        while True:
            try:
                await self._renew_lease()
                since_status += self.heartbeat_seconds
                if since_status >= NODE_STATUS_SECONDS:
                    since_status = 0.0
                    await self._write_node_status()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("node %s: heartbeat failed: %r", self.name, exc)
            await asyncio.sleep(self.heartbeat_seconds)

    async def _renew_lease(self) -> None:
        renew = format_time(self.clock.now()).replace("Z", ".000000Z")
        try:
            await self.client.patch(LEASES, self.name, {"spec": {"renewTime": renew}}, namespace="kube-node-lease")
        except NotFound:
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": "kube-node-lease"},
                "spec": {"holderIdentity": self.name, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": renew},
            }
            with contextlib.suppress(AlreadyExists):
                await self.client.create(LEASES, lease, "kube-node-lease")

    # -- pods -------------------------------------------------------------------------------------

    def _on_pod(self, kind: str, pod: JSONDict, old: JSONDict | None) -> None:
        if (pod.get("spec") or {}).get("nodeName") != self.name or self._stopping:
            return
        key = key_of(pod)
        uid = str(pod["metadata"].get("uid"))
        if kind == "DELETED":
            task = self._runs.pop(key, None)
            if task is not None:
                task.cancel()
                # Still stopping its containers: stop() must wait for it like any other task.
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            self._done.discard(uid)
            self.forget(key)
            return
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            # Graceful deletion held by finalizers: stop the containers and report a terminal phase,
            # as a kubelet does, so whoever holds the finalizer sees the pod finish.
            if uid not in self._done and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                self._done.add(uid)
                task = self._runs.pop(key, None)
                self._spawn(self._terminate(pod, task), f"node-{self.name}-terminate-{key}")
            return
        phase = (pod.get("status") or {}).get("phase", "Pending")
        if phase in ("Succeeded", "Failed") or key in self._runs or pod["metadata"].get("uid") in self._done:
            return
        resume = phase == "Running"
        task = asyncio.create_task(self._run(pod, resume=resume), name=f"node-{self.name}-pod-{key}")
        self._runs[key] = task
        task.add_done_callback(lambda done: self._run_finished(key, done))

    async def _terminate(self, pod: JSONDict, task: asyncio.Task[None] | None) -> None:
        for container in (pod.get("spec") or {}).get("containers") or []:
            self.record(pod, "Normal", "Killing", f"Stopping container {container.get('name')}")
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        now = self.clock.now()
        results = [
            ContainerResult(str(c.get("name", "")), 143, "Error", "the pod was deleted", now, now)
            for c in (pod.get("spec") or {}).get("containers") or []
        ]
        with contextlib.suppress(NotFound):
            await self._report_finished(pod, results)

    def _run_finished(self, key: str, task: asyncio.Task[None]) -> None:
        if self._runs.get(key) is task:
            del self._runs[key]
            self._statuses.pop(key, None)

    async def _run(self, pod: JSONDict, *, resume: bool) -> None:
        key = key_of(pod)
        try:
            if resume:
                results = await self.resume(pod)
            else:
                started = self.clock.now()
                results = await self.execute(pod, lambda: self._report_running(pod, started))
            self._done.add(str(pod["metadata"].get("uid")))
            await self._report_finished(pod, results)
        except asyncio.CancelledError:
            raise
        except NotFound:
            pass  # the pod went away while we reported on it
        except Exception:
            log.exception("node %s: running pod %s failed", self.name, key)

    async def execute(self, pod: JSONDict, running: Running) -> list[ContainerResult]:
        """Run the pod's containers; await ``running()`` once they are up. Cancellation = pod deleted."""
        raise NotImplementedError

    async def supervise(
        self, pod: JSONDict, name: str, run_once: Callable[[], Awaitable[ContainerResult]]
    ) -> ContainerResult:
        """Run one container under the pod's ``restartPolicy``: Always restarts it whatever its exit
        code, OnFailure on a non-zero one, Never not at all; restarts back off like CrashLoopBackOff."""
        policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        restarts, delay = 0, RESTART_BACKOFF
        while True:
            result = await run_once()
            if not (policy == "Always" or (policy == "OnFailure" and result.exit_code != 0)):
                return ContainerResult(
                    result.name,
                    result.exit_code,
                    result.reason,
                    result.message,
                    result.started_at,
                    result.finished_at,
                    restarts,
                )
            restarts += 1
            await self._report_restart(pod, name, result, restarts)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RESTART_BACKOFF)
            await self._report_container_running(pod, name)

    async def resume(self, pod: JSONDict) -> list[ContainerResult]:
        """A pod found Running after a restart of the agent. Default: it was lost."""
        now = self.clock.now()
        return [
            ContainerResult(c["name"], 137, "Error", "the container was lost when its node agent restarted", now, now)
            for c in (pod.get("spec") or {}).get("containers") or []
        ]

    def forget(self, key: str) -> None:
        """The pod is gone for good: drop what the agent kept for it (logs)."""

    def log_reader(
        self, pod: JSONDict, container: str, options: LogReadOptions, *, previous: bool = False
    ) -> tuple[LogReader, Callable[[], bool]]:
        """A reader of the container's log (opened: placed at ``tailLines``) and a check whether the
        container still runs (a follower stops once it does not); ``BadRequest`` when there is none."""
        raise BadRequest(f'container "{container}" has no log on node {self.name}')

    # -- status writing ---------------------------------------------------------------------------

    async def _patch_status(self, pod: JSONDict, status: JSONDict) -> None:
        namespace, name = split_key(key_of(pod))
        try:
            await self.client.patch(PODS, name, {"status": status}, namespace=namespace, subresource="status")
        except NotFound:
            raise
        except ApiError as exc:
            log.warning("node %s: status update of pod %s/%s failed: %s", self.name, namespace, name, exc)

    def _conditions(self, pod: JSONDict) -> list[JSONDict]:
        latest = self.pods.get_by_key(key_of(pod)) or pod
        return list((latest.get("status") or {}).get("conditions") or [])

    async def _report_running(self, pod: JSONDict, started: float) -> None:
        now, started_at = self.now(), format_time(started)
        conditions = self._conditions(pod)
        for kind in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
            conditions = set_condition(conditions, kind, "True", "", "", now)
        conditions = [{k: v for k, v in c.items() if v != ""} for c in conditions]
        statuses = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "containerID": f"pykueue://{self.name}/{c['name']}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started_at}},
            }
            for c in (pod.get("spec") or {}).get("containers") or []
        ]
        self._statuses[key_of(pod)] = {str(st["name"]): st for st in statuses}
        for container in (pod.get("spec") or {}).get("containers") or []:
            self.record(pod, "Normal", "Started", f"Started container {container.get('name')}")
        await self._patch_status(
            pod,
            {
                "phase": "Running",
                "conditions": conditions,
                "hostIP": "127.0.0.1",
                "hostIPs": [{"ip": "127.0.0.1"}],
                "podIP": "127.0.0.1",
                "podIPs": [{"ip": "127.0.0.1"}],
                "startTime": started_at,
                "containerStatuses": statuses,
            },
        )

    async def _report_restart(self, pod: JSONDict, name: str, result: ContainerResult, restarts: int) -> None:
        """The container exited and will restart: CrashLoopBackOff while it waits, lastState kept."""
        statuses = self._statuses.setdefault(key_of(pod), {})
        status = dict(statuses.get(name) or {"name": name, "image": "", "imageID": ""})
        status.update(
            ready=False,
            started=False,
            restartCount=restarts,
            lastState={
                "terminated": {
                    "exitCode": result.exit_code,
                    "reason": result.reason or ("Error" if result.exit_code else "Completed"),
                    "startedAt": format_time(result.started_at),
                    "finishedAt": format_time(result.finished_at),
                }
            },
            state={
                "waiting": {"reason": "CrashLoopBackOff", "message": f"back-off restarting failed container {name}"}
            },
        )
        statuses[name] = status
        self.record(pod, "Warning", "BackOff", f"Back-off restarting failed container {name}")
        await self._write_container_statuses(pod, ready=False)

    async def _report_container_running(self, pod: JSONDict, name: str) -> None:
        statuses = self._statuses.setdefault(key_of(pod), {})
        status = dict(statuses.get(name) or {"name": name})
        status.update(ready=True, started=True, state={"running": {"startedAt": self.now()}})
        statuses[name] = status
        self.record(pod, "Normal", "Started", f"Started container {name}")
        await self._write_container_statuses(pod, ready=all(s.get("ready") for s in statuses.values()))

    async def _write_container_statuses(self, pod: JSONDict, *, ready: bool) -> None:
        now = self.now()
        conditions = self._conditions(pod)
        for kind in ("Ready", "ContainersReady"):
            conditions = set_condition(
                conditions,
                kind,
                "True" if ready else "False",
                "" if ready else "ContainersNotReady",
                "" if ready else "containers with unready status",
                now,
            )
        conditions = [{k: v for k, v in c.items() if v != ""} for c in conditions]
        order = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
        statuses = self._statuses.get(key_of(pod), {})
        await self._patch_status(
            pod, {"conditions": conditions, "containerStatuses": [statuses[n] for n in order if n in statuses]}
        )

    async def _report_finished(self, pod: JSONDict, results: list[ContainerResult]) -> None:
        failed = any(r.exit_code != 0 for r in results)
        now = self.now()
        conditions = self._conditions(pod)
        for kind in ("Ready", "ContainersReady"):
            conditions = set_condition(conditions, kind, "False", "PodCompleted", "", now)
        conditions = set_condition(conditions, "PodReadyToStartContainers", "False", "", "", now)
        conditions = [{k: v for k, v in c.items() if v != ""} for c in conditions]
        images = {c["name"]: c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or []}
        statuses = []
        for r in results:
            terminated: JSONDict = {
                "exitCode": r.exit_code,
                "reason": r.reason or ("Error" if r.exit_code else "Completed"),
                "startedAt": format_time(r.started_at or self.clock.now()),
                "finishedAt": format_time(r.finished_at or self.clock.now()),
                "containerID": f"pykueue://{self.name}/{r.name}",
            }
            if r.message:
                terminated["message"] = r.message
            entry: JSONDict = {
                "name": r.name,
                "image": images.get(r.name, ""),
                "imageID": "",
                "containerID": f"pykueue://{self.name}/{r.name}",
                "ready": False,
                "started": False,
                "restartCount": r.restart_count,
                "state": {"terminated": terminated},
            }
            last = ((self._statuses.get(key_of(pod)) or {}).get(r.name) or {}).get("lastState")
            if last:
                entry["lastState"] = last
            statuses.append(entry)
        status: JSONDict = {
            "phase": "Failed" if failed else "Succeeded",
            "conditions": conditions,
            "containerStatuses": statuses,
        }
        latest = self.pods.get_by_key(key_of(pod)) or pod
        if not (latest.get("status") or {}).get("startTime"):
            status["startTime"] = now
        await self._patch_status(pod, status)
