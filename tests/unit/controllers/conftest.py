"""An in-process control plane for controller tests: store + registry + LocalClient + ControllerManager.

Nothing is mocked: writes go through the real registry (defaulting, validation, the manager's
admission hooks) and the controllers see them through real informers. Time is a ``ManualClock``
shared by the registry and the controllers, so timeouts are driven by the test, never by sleeping.
Jobs are driven by hand (``finish_job``) unless a test starts the embedded cluster itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from pykueue.api.catalogue import build_catalogue
from pykueue.api.meta.clock import ManualClock
from pykueue.api.meta.errors import NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import GroupVersionResource, LocalClient
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.manager import ControllerManager
from pykueue.controllers.resource_names import (
    CLUSTER_QUEUES,
    JOBS,
    LOCAL_QUEUES,
    NAMESPACES,
    RESOURCE_FLAVORS,
    WORKLOADS,
)
from pykueue.registry import Registry
from pykueue.store import Store
from pykueue.testing.builders import make_namespace

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


class Env:
    def __init__(
        self,
        config: KueueConfig,
        *,
        without: tuple[str, ...] = (),
        hooks: bool = True,
        metrics: CollectorRegistry | None = None,
    ) -> None:
        """``without``: resource keys ("jobsets.jobset.x-k8s.io") the API server does not serve;
        ``hooks=False``: no admission hooks, as against a cluster where Kueue's webhooks are absent;
        ``metrics``: the registry the controllers report Kueue's metrics on."""
        self.clock = ManualClock()
        self.store = Store(None)
        kinds = [k for k in list(build_catalogue()) if k.resource_key not in without] if without else None
        self.registry = Registry(self.store, clock=self.clock, kinds=kinds)
        self.client = LocalClient(self.registry)
        self.manager = ControllerManager(self.client, config, self.clock, metrics_registry=metrics)
        for hook in self.manager.admission_hooks() if hooks else []:
            self.registry.add_admission_hook(hook)

    async def start(self) -> None:
        await self.manager.start()

    async def stop(self) -> None:
        await self.manager.stop()
        await self.client.close()
        self.store.close()

    # -- objects -----------------------------------------------------------------------------------

    async def create(self, res: GroupVersionResource, obj: JSONDict) -> JSONDict:
        return await self.client.create(res, obj, (obj.get("metadata") or {}).get("namespace", ""))

    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> JSONDict | None:
        try:
            return await self.client.get(res, name, namespace)
        except NotFound:
            return None

    async def namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        if await self.get(NAMESPACES, name) is None:
            await self.create(NAMESPACES, make_namespace(name, labels))

    async def setup_queues(self, *objs: JSONDict) -> None:
        for obj in objs:
            res = {"ResourceFlavor": RESOURCE_FLAVORS, "ClusterQueue": CLUSTER_QUEUES, "LocalQueue": LOCAL_QUEUES}.get(
                obj["kind"]
            )
            if res is None:
                from pykueue.controllers.resource_names import COHORTS

                res = COHORTS
            if obj["kind"] == "LocalQueue":
                await self.namespace(obj["metadata"]["namespace"])
            await self.create(res, obj)

    async def workload_of_job(self, name: str, namespace: str) -> JSONDict | None:
        items, _ = await self.client.list(WORKLOADS, namespace)
        for wl in items:
            for ref in wl["metadata"].get("ownerReferences") or []:
                if ref.get("kind") == "Job" and ref.get("name") == name:
                    return wl
        return None

    async def finish_job(self, name: str, namespace: str, *, failed: bool = False, message: str = "") -> None:
        """What the Job controller does when a Job completes (Complete/Failed condition)."""
        job = await self.client.get(JOBS, name, namespace)
        ctype = "Failed" if failed else "Complete"
        now = job["metadata"]["creationTimestamp"]
        conds = [
            {
                "type": ctype,
                "status": "True",
                "reason": "Done",
                "message": message,
                "lastProbeTime": now,
                "lastTransitionTime": now,
            }
        ]
        if not failed:
            conds.insert(
                0,
                {
                    "type": "SuccessCriteriaMet",
                    "status": "True",
                    "reason": "CompletionsReached",
                    "message": "",
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                },
            )
        else:
            conds.insert(
                0,
                {
                    "type": "FailureTarget",
                    "status": "True",
                    "reason": "Done",
                    "message": message,
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                },
            )
        status: JSONDict = {"conditions": conds, "completionTime": now, "startTime": now}
        if failed:
            status["failed"] = 1
        else:
            status["succeeded"] = int(job["spec"].get("completions") or 1)
        await self.client.patch(JOBS, name, {"status": status}, namespace=namespace, subresource="status")


def make_job(
    name: str,
    namespace: str,
    *,
    queue: str | None = "user-queue",
    cpu: str = "1",
    parallelism: int = 1,
    completions: int | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    priority_class: str | None = None,
) -> JSONDict:
    all_labels = dict(labels or {})
    if queue is not None:
        all_labels[QUEUE_LABEL] = queue
    pod_spec: JSONDict = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "command": ["sleep", "1"], "resources": {"requests": {"cpu": cpu}}}
        ],
    }
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    job: JSONDict = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": all_labels},
        "spec": {"parallelism": parallelism, "template": {"spec": pod_spec}},
    }
    if annotations:
        job["metadata"]["annotations"] = annotations
    if completions is not None:
        job["spec"]["completions"] = completions
    return job


def cond(obj: JSONDict | None, ctype: str) -> JSONDict:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return {}


@pytest.fixture
def config() -> KueueConfig:
    return KueueConfig()


@pytest.fixture
async def env(config: KueueConfig) -> AsyncIterator[Env]:
    e = Env(config)
    await e.start()
    try:
        yield e
    finally:
        await e.stop()
