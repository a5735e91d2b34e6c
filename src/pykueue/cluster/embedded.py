"""``EmbeddedCluster``: the parts of Kubernetes that ``pykueue up`` supplies itself.

Owned by ``cluster/``; built and started by the CLI's embedded assembly after the API server.
Runs, over one set of shared informers (pods, nodes, Jobs, JobSets), the Job controller, the JobSet
controller (when the kind is served), the pod binder and one node agent per :class:`NodeSpec`,
and serves container logs for ``kubectl logs`` (:meth:`EmbeddedCluster.open_pod_log`).

Everything goes through the :class:`~pykueue.client.Client`; nothing here touches the store.
Events (SuccessfulCreate, Scheduled, FailedScheduling, Started, Completed, ...) are written with the
controllers' :class:`~pykueue.controllers.events.EventRecorder`, one per component name, as
``kubectl describe`` shows them on a real cluster.
Invariant: ``stop()`` leaves no task and no child process behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

from pykueue.api.meta.clock import Clock, format_time
from pykueue.api.meta.errors import BadRequest, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.apiserver.pod_log_endpoint import PodLogOptions
from pykueue.client import Client, Informer, WorkQueue, run_workers
from pykueue.client.group_version_resource import JOBS, JOBSETS, NODES, PODS
from pykueue.cluster import cri_log
from pykueue.cluster.agent import NodeAgent
from pykueue.cluster.binder import PodBinder
from pykueue.cluster.jobs import JobController
from pykueue.cluster.jobsets import JobSetController
from pykueue.cluster.nodes import NodeSpec
from pykueue.cluster.pod_logs import LogReadOptions, stream_log
from pykueue.cluster.pod_user import resolve_run_as
from pykueue.cluster.podutil import set_condition
from pykueue.cluster.process import ProcessNodeAgent
from pykueue.cluster.simulated import SimulatedNodeAgent
from pykueue.controllers.events import EventRecorder

__all__ = ["EmbeddedCluster"]

log = logging.getLogger(__name__)


class EmbeddedCluster:
    def __init__(
        self,
        client: Client,
        nodes: list[NodeSpec],
        clock: Clock,
        *,
        log_root: Path | None = None,
        workers: int = 4,
        allow_root_pods: bool = False,
    ) -> None:
        self.client = client
        self.allow_root_pods = allow_root_pods
        """Process nodes may run pods as root (``pykueue up --allow-root-pods``); never by default."""
        self.node_specs = list(nodes)
        self.clock = clock
        self.log_root = log_root
        self.workers = workers
        self.pods = Informer(client, PODS)
        self.nodes = Informer(client, NODES)
        self.jobs = Informer(client, JOBS)
        self.jobsets: Informer | None = None
        self._recorders = {
            name: EventRecorder(client, clock, component=name)
            for name in ("job-controller", "jobset-controller", "default-scheduler", "kubelet")
        }
        self.job_controller = JobController(
            client, self.jobs, self.pods, clock, record=self._recorders["job-controller"].record
        )
        self.binder = PodBinder(
            client, self.pods, self.nodes, clock, record=self._recorders["default-scheduler"].record
        )
        self.jobset_controller: JobSetController | None = None
        self.agents: dict[str, NodeAgent] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._queues: list[WorkQueue[str]] = []

    async def start(self) -> None:
        for recorder in self._recorders.values():
            recorder.start()
        try:
            await self.client.list(JOBSETS)
        except NotFound:
            log.info("JobSet is not served: the embedded JobSet controller stays off")
        else:
            self.jobsets = Informer(self.client, JOBSETS)
            self.jobset_controller = JobSetController(
                self.client, self.jobsets, self.jobs, self.clock, record=self._recorders["jobset-controller"].record
            )
        for informer in self._informers():
            await informer.start()
        await self._retire_stale_nodes()
        for spec in self.node_specs:
            agent = self._agent(spec)
            await agent.start()
            self.agents[spec.name] = agent
        self._run(self.binder.queue, self.binder.reconcile, 1)
        self._run(self.job_controller.queue, self.job_controller.reconcile, self.workers)
        if self.jobset_controller is not None:
            self._run(self.jobset_controller.queue, self.jobset_controller.reconcile, self.workers)

    async def _retire_stale_nodes(self) -> None:
        """Nodes an earlier run registered but this one does not declare (the ``--nodes`` file changed):
        delete them, and fail their unfinished pods, as the node lifecycle controller and pod GC would,
        so nothing is bound to, or waits forever on, a node no agent runs."""
        wanted = {spec.name for spec in self.node_specs}
        stale = {
            str(n["metadata"]["name"])
            for n in self.nodes.list()
            if n["metadata"]["name"] not in wanted
            and "pykueue.io/node-kind" in (n["metadata"].get("annotations") or {})
        }
        for name in stale:
            with contextlib.suppress(NotFound):
                await self.client.delete(NODES, name)
            log.info("removed node %s: it is no longer declared", name)
        now = format_time(self.clock.now())
        for pod in self.pods.list():
            node = (pod.get("spec") or {}).get("nodeName")
            if node in stale and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                conditions = set_condition(
                    list((pod.get("status") or {}).get("conditions") or []),
                    "DisruptionTarget",
                    "True",
                    "DeletionByPodGC",
                    f"PodGC: node {node} no longer exists",
                    now,
                )
                with contextlib.suppress(NotFound):
                    await self.client.patch(
                        PODS,
                        pod["metadata"]["name"],
                        {
                            "status": {
                                "phase": "Failed",
                                "reason": "NodeLost",
                                "message": f"node {node} no longer exists",
                                "conditions": conditions,
                            }
                        },
                        namespace=pod["metadata"]["namespace"],
                        subresource="status",
                    )

    def _agent(self, spec: NodeSpec) -> NodeAgent:
        record = self._recorders["kubelet"].record
        if spec.kind == "simulated":
            return SimulatedNodeAgent(self.client, spec, self.pods, self.clock, record=record)
        root = self.log_root / spec.name if self.log_root is not None else None
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
        return ProcessNodeAgent(
            self.client,
            spec,
            self.pods,
            self.clock,
            root=root,
            record=record,
            run_as=resolve_run_as(spec.user, allow_root=self.allow_root_pods),
        )

    def _informers(self) -> list[Informer]:
        informers = [self.nodes, self.pods, self.jobs]
        if self.jobsets is not None:
            informers.append(self.jobsets)
        return informers

    def _run(self, queue: WorkQueue[str], reconcile: Callable[[str], Awaitable[float | None]], workers: int) -> None:
        self._queues.append(queue)
        self._tasks.append(
            asyncio.create_task(run_workers(queue, reconcile, workers=workers), name=f"{queue.name}-workers")
        )

    async def stop(self) -> None:
        for queue in self._queues:
            queue.shutdown()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self._queues.clear()
        for agent in self.agents.values():
            await agent.stop()
        self.agents.clear()
        for informer in self._informers():
            await informer.stop()
        for recorder in self._recorders.values():
            await recorder.stop()

    def _agent_for(self, namespace: str, name: str, container: str) -> tuple[JSONDict, str, NodeAgent]:
        """The pod, the container (the only one when none is named) and the agent of its node; errors
        read like the kubelet's."""
        pod = self.pods.get(name, namespace)
        if pod is None:
            raise NotFound.object("pods", name)
        containers = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
        init = [str(c.get("name")) for c in (pod.get("spec") or {}).get("initContainers") or []]
        if not container:
            if len(containers) != 1:
                raise BadRequest(
                    f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
                )
            container = containers[0]
        elif container not in containers and container not in init:
            raise BadRequest(f"container {container} is not valid for pod {name}")
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            raise BadRequest(f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating')
        agent = self.agents.get(str(node))
        if agent is None:
            raise BadRequest(f"pod {name} is bound to node {node}, which has no agent in this cluster")
        return pod, container, agent

    async def open_pod_log(self, namespace: str, name: str, options: PodLogOptions) -> AsyncIterator[bytes]:
        """``GET pods/<name>/log``: the container's log as chunks (:mod:`.pod_logs`); errors are raised
        here, before the first chunk. The file is opened in a worker thread."""
        pod, container, agent = self._agent_for(namespace, name, options.container)
        since = None if options.since is None else cri_log.timestamp(int(options.since * 1_000_000_000))
        read = LogReadOptions(timestamps=options.timestamps, tail_lines=options.tail_lines, since=since)
        reader, running = await asyncio.to_thread(agent.log_reader, pod, container, read, previous=options.previous)
        return stream_log(reader, follow=options.follow and not options.previous, running=running)

    def pod_log(self, namespace: str, name: str, container: str = "") -> str:
        """The container's current log as text, read on the calling thread: for tests and tools (the
        API serves :meth:`open_pod_log`)."""
        pod, container, agent = self._agent_for(namespace, name, container)
        reader, _ = agent.log_reader(pod, container, LogReadOptions())
        try:
            parts = []
            while chunk := reader.read():
                parts.append(chunk)
        finally:
            reader.close()
        return b"".join(parts).decode(errors="replace")
