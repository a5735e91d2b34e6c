"""Every request pykueue's controllers make while running jobs is allowed by the RBAC ``pykueue install``
renders: the controllers run in process over a client that records each call as the RBAC
authorizer sees it (verb, group, resource, subresource, namespace, name)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any

from tests.unit.controllers.conftest import cond, make_job
from tests.waiting import eventually

from pykueue.api.meta.clock import ManualClock
from pykueue.client import GroupVersionResource, LocalClient
from pykueue.controllers.config import embedded_default
from pykueue.controllers.manager import ControllerManager
from pykueue.controllers.resource_names import (
    CLUSTER_QUEUES,
    JOBS,
    LOCAL_QUEUES,
    NAMESPACES,
    RESOURCE_FLAVORS,
    WORKLOADS,
)
from pykueue.install import install_options
from pykueue.install.rbac import rbac_objects
from pykueue.install.rbac_check import Authorizer, Request
from pykueue.registry import Registry
from pykueue.store import Store
from pykueue.testing.builders import make_cluster_queue, make_flavor, make_local_queue, make_namespace

SA = "system:serviceaccount:pykueue-system:pykueue-controller-manager"
NS = "team-a"
JSONDict = dict[str, Any]


async def _contains(names: Awaitable[list[str]], name: str) -> bool:
    return name in await names


class RecordingClient:
    """A Client that records every call before handing it to ``inner``."""

    def __init__(self, inner: LocalClient) -> None:
        self.inner = inner
        self.requests: list[Request] = []

    def _record(
        self, verb: str, res: GroupVersionResource, namespace: str = "", name: str = "", subresource: str = ""
    ) -> None:
        self.requests.append(
            Request(
                user=SA,
                verb=verb,
                api_group=res.group,
                resource=res.plural,
                subresource=subresource,
                namespace=namespace,
                name=name,
            )
        )

    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> JSONDict:
        self._record("get", res, namespace, name)
        return await self.inner.get(res, name, namespace)

    async def list(self, res: GroupVersionResource, namespace: str = "", **kw: Any) -> tuple[list[JSONDict], str]:
        self._record("list", res, namespace)
        return await self.inner.list(res, namespace, **kw)

    async def create(self, res: GroupVersionResource, obj: JSONDict, namespace: str = "") -> JSONDict:
        self._record("create", res, namespace)
        return await self.inner.create(res, obj, namespace)

    async def update(self, res: GroupVersionResource, obj: JSONDict, *, subresource: str = "") -> JSONDict:
        meta = obj.get("metadata") or {}
        self._record("update", res, meta.get("namespace", ""), meta.get("name", ""), subresource)
        return await self.inner.update(res, obj, subresource=subresource)

    async def patch(
        self, res: GroupVersionResource, name: str, patch: Any, *, namespace: str = "", subresource: str = "", **kw: Any
    ) -> JSONDict:
        self._record("patch", res, namespace, name, subresource)
        return await self.inner.patch(res, name, patch, namespace=namespace, subresource=subresource, **kw)

    async def delete(self, res: GroupVersionResource, name: str, namespace: str = "", **kw: Any) -> None:
        self._record("delete", res, namespace, name)
        await self.inner.delete(res, name, namespace, **kw)

    def watch(self, res: GroupVersionResource, namespace: str = "", **kw: Any) -> AsyncIterator[tuple[str, JSONDict]]:
        self._record("watch", res, namespace)
        return self.inner.watch(res, namespace, **kw)

    async def close(self) -> None:
        await self.inner.close()


async def test_the_controllers_requests_are_allowed_by_the_installed_rbac() -> None:
    clock = ManualClock()
    store = Store(None)
    registry = Registry(store, clock=clock)
    user = LocalClient(registry)  # what kubectl would do
    recorder = RecordingClient(LocalClient(registry))  # what the controller does
    config = embedded_default()
    manager = ControllerManager(recorder, config, clock)
    for hook in manager.admission_hooks():
        registry.add_admission_hook(hook)
    await manager.start()
    try:
        await user.create(NAMESPACES, make_namespace(NS))
        await user.create(RESOURCE_FLAVORS, make_flavor("f").obj())
        await user.create(CLUSTER_QUEUES, make_cluster_queue("cq").quota("f", "cpu", 2).obj())
        await user.create(LOCAL_QUEUES, make_local_queue("user-queue", NS, "cq").obj(), NS)
        await user.create(JOBS, make_job("first", NS, cpu="2"), NS)
        await user.create(JOBS, make_job("second", NS, cpu="2"), NS)

        async def admitted() -> list[str]:
            """The jobs whose Workload is admitted."""
            return [
                (wl["metadata"].get("ownerReferences") or [{}])[0].get("name", "")
                for wl in (await user.list(WORKLOADS, NS))[0]
                if cond(wl, "Admitted").get("status") == "True"
            ]

        (first,) = await eventually(admitted, what="one job admitted (the quota holds one)")
        (second,) = {"first", "second"} - {first}

        async def running() -> JSONDict | None:
            job = await user.get(JOBS, first, NS)
            return job if job["spec"]["suspend"] is False else None

        job = await eventually(running, what="the admitted job unsuspended")
        # the admitted job completes; the other is admitted in its place
        now = job["metadata"]["creationTimestamp"]
        done = [
            {
                "type": t,
                "status": "True",
                "reason": "Done",
                "message": "",
                "lastProbeTime": now,
                "lastTransitionTime": now,
            }
            for t in ("SuccessCriteriaMet", "Complete")
        ]
        await user.patch(
            JOBS,
            first,
            {"status": {"conditions": done, "completionTime": now, "startTime": now, "succeeded": 1}},
            namespace=NS,
            subresource="status",
        )
        await eventually(lambda: _contains(admitted(), second), what="the other job admitted after the first finished")
        # a deleted job's workload goes too
        await user.delete(JOBS, second, NS)

        async def gone() -> bool:
            return not [
                w
                for w in (await user.list(WORKLOADS, NS))[0]
                if (w["metadata"].get("ownerReferences") or [{}])[0].get("name") == second
                and not w["metadata"].get("deletionTimestamp")
            ]

        await eventually(gone, what="the deleted job's workload released")
    finally:
        await manager.stop()
        await user.close()
        store.close()

    authorizer = Authorizer(rbac_objects(install_options()))
    denied = sorted({str(r) for r in recorder.requests if not authorizer.allows(r)})
    assert denied == []
    seen = {(r.verb, r.resource, r.subresource) for r in recorder.requests}
    # the run did exercise the controllers' writes, not only their informers
    assert {
        ("create", "workloads", ""),
        ("patch", "workloads", "status"),
        ("update", "jobs", ""),
        ("create", "events", ""),
        ("patch", "clusterqueues", "status"),
    } <= seen
