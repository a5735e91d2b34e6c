"""Helpers for the embedded-cluster tests: a real registry, a LocalClient, the cluster, builders."""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.unit.client.conftest import open_client

from pykueue.api.meta.clock import Clock, SystemClock
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client
from pykueue.client.group_version_resource import JOBS, PODS
from pykueue.cluster import EmbeddedCluster, NodeSpec
from pykueue.registry.resource_registry import Registry
from pykueue.store import Store


@dataclass
class Env:
    registry: Registry
    client: Client
    cluster: EmbeddedCluster

    async def job(self, name: str) -> JSONDict:
        return await self.client.get(JOBS, name, "default")

    async def pods_of(self, job: str) -> list[JSONDict]:
        pods, _ = await self.client.list(PODS, "default", label_selector=f"batch.kubernetes.io/job-name={job}")
        return pods


@pytest.fixture
def pod_scratch() -> Iterator[Path]:
    """A folder pods may write to: they run as an unprivileged user when the tests run as root, and
    pytest's own ``tmp_path`` is owner-only."""
    scratch = Path(tempfile.mkdtemp(prefix="pykueue-pod-scratch-"))
    scratch.chmod(0o777)
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.asynccontextmanager
async def running_cluster(
    nodes: list[NodeSpec],
    tmp_path: Path,
    *,
    via: str = "local",
    clock: Clock | None = None,
    registry: Registry | None = None,
) -> AsyncIterator[Env]:
    """The cluster over ``via``: "local" (LocalClient) or "http" (HttpClient to the real API server).
    Pass ``registry`` to start a second cluster on the state of a first (a restart)."""
    clock = clock or SystemClock()
    registry = registry or Registry(Store(None), clock=clock)
    async with open_client(via, registry) as client:
        cluster = EmbeddedCluster(client, nodes, clock, log_root=tmp_path / "nodes")
        await cluster.start()
        try:
            yield Env(registry, client, cluster)
        finally:
            await cluster.stop()


def has_condition(obj: JSONDict, kind: str, status: str = "True") -> bool:
    return any(
        c.get("type") == kind and c.get("status") == status for c in (obj.get("status") or {}).get("conditions") or []
    )


def make_job(
    name: str,
    command: str,
    *,
    parallelism: int = 1,
    completions: int | None = 1,
    backoff_limit: int = 6,
    indexed: bool = False,
    suspend: bool = False,
    requests: dict[str, str] | None = None,
) -> JSONDict:
    spec: JSONDict = {
        "parallelism": parallelism,
        "backoffLimit": backoff_limit,
        "suspend": suspend,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "command": ["sh", "-c", command],
                        "resources": {"requests": requests or {"cpu": "100m"}},
                    }
                ],
            }
        },
    }
    if completions is not None:
        spec["completions"] = completions
    if indexed:
        spec["completionMode"] = "Indexed"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def make_pod(
    name: str,
    *,
    cpu: str = "1",
    node_selector: dict[str, str] | None = None,
    tolerations: list[JSONDict] | None = None,
    annotations: dict[str, str] | None = None,
    command: str = "sleep 30",
    gates: list[str] | None = None,
) -> JSONDict:
    spec: JSONDict = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "command": ["sh", "-c", command],
                "resources": {"requests": {"cpu": cpu}},
            }
        ],
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    meta: JSONDict = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"
