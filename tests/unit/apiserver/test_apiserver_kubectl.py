"""The real kubectl (on PATH) against the server over TLS with a bearer token, as a user runs it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from tests.e2e.harness import find_kubectl

from pykueue.api.meta.clock import SystemClock
from pykueue.apiserver import Server, serve
from pykueue.apiserver.certs import ensure_certificates
from pykueue.registry import Registry
from pykueue.store import Store

KUBECTL = find_kubectl()
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl in .cache/kubectl or on PATH: run `make kubectl`")

CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: default
  name: user-queue
spec:
  clusterQueue: cluster-queue
"""


@dataclass
class Kubectl:
    server: Server
    kubeconfig: Path
    cache: Path

    async def run(self, *args: str, stdin: str | None = None, check: bool = True) -> tuple[int, str, str]:
        assert KUBECTL is not None
        process = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            str(self.kubeconfig),
            "--cache-dir",
            str(self.cache),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(stdin.encode() if stdin else None), 60)
        code = process.returncode if process.returncode is not None else -1
        if check and code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({code}):\n{err.decode()}")
        return code, out.decode(), err.decode()


@pytest.fixture
async def kubectl(tmp_path: Path) -> AsyncIterator[Kubectl]:
    (tmp_path / "certs").mkdir()
    tls = ensure_certificates(tmp_path / "certs", "127.0.0.1")
    store = Store(str(tmp_path / "state.db"), auto_flush=False)
    registry = Registry(store, clock=SystemClock())
    server = await serve(
        registry,
        "127.0.0.1",
        0,
        token="secret-token",
        tls_cert=str(tls.cert),
        tls_key=str(tls.key),
        bookmark_interval=1.0,
    )
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "pykueue",
                "clusters": [
                    {"name": "pykueue", "cluster": {"server": server.url, "certificate-authority": str(tls.ca_cert)}}
                ],
                "users": [{"name": "pykueue", "user": {"token": "secret-token"}}],
                "contexts": [{"name": "pykueue", "context": {"cluster": "pykueue", "user": "pykueue"}}],
            }
        )
    )
    try:
        yield Kubectl(server, kubeconfig, tmp_path / "cache")
    finally:
        await server.close()
        store.close()


def _titles(header: str) -> list[str]:
    return [t.strip() for t in header.split("  ") if t.strip()]


async def test_apply_get_wide_label_delete(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("apply", "-f", "-", stdin=CQ)
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue created" in out
    _, out, _ = await kubectl.run("apply", "-f", "-", stdin=CQ)
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue unchanged" in out
    _, out, _ = await kubectl.run("get", "cq")
    assert _titles(out.splitlines()[0]) == ["NAME", "COHORT", "PENDING WORKLOADS"]
    assert out.splitlines()[1].startswith("cluster-queue")
    _, out, _ = await kubectl.run("get", "cq", "-o", "wide")
    assert _titles(out.splitlines()[0]) == ["NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"]
    assert "BestEffortFIFO" in out
    _, out, _ = await kubectl.run("get", "lq", "-A")
    assert out.splitlines()[1].split()[:3] == ["default", "user-queue", "cluster-queue"]
    await kubectl.run("label", "cq", "cluster-queue", "team=a")
    await kubectl.run("annotate", "cq", "cluster-queue", "note=hello")
    await kubectl.run("patch", "cq", "cluster-queue", "--type", "merge", "-p", '{"spec":{"cohortName":"t"}}')
    _, out, _ = await kubectl.run("get", "cq", "-l", "team=a", "-o", "json")
    items = json.loads(out)["items"]
    assert items[0]["metadata"]["annotations"]["note"] == "hello"
    assert items[0]["metadata"]["generation"] == 2
    _, out, _ = await kubectl.run("get", "cq", "cluster-queue", "-o", "yaml")
    assert yaml.safe_load(out)["spec"]["cohortName"] == "t"
    _, out, _ = await kubectl.run("delete", "-f", "-", stdin=CQ)
    assert 'clusterqueue.kueue.x-k8s.io "cluster-queue" deleted' in out
    code, _, err = await kubectl.run("get", "cq", "cluster-queue", check=False)
    assert code != 0
    assert 'clusterqueues.kueue.x-k8s.io "cluster-queue" not found' in err


async def test_server_side_apply_and_unknown_fields(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("apply", "--server-side", "-f", "-", stdin=CQ)
    assert "serverside-applied" in out
    _, out, _ = await kubectl.run("get", "cq", "cluster-queue", "-o", "json", "--show-managed-fields")
    managers = {m["manager"] for m in json.loads(out)["metadata"]["managedFields"]}
    assert managers == {"kubectl"}
    typo = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: typo\nspec:\n  nodeLabelz: {}\n"
    )
    code, _, err = await kubectl.run("apply", "-f", "-", stdin=typo, check=False)
    assert code != 0
    assert 'unknown field "spec.nodeLabelz"' in err


async def test_watch_prints_live_changes(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", stdin=CQ)
    assert KUBECTL is not None
    watcher = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        str(kubectl.kubeconfig),
        "--cache-dir",
        str(kubectl.cache),
        "get",
        "cq",
        "-w",
        "--output-watch-events",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert watcher.stdout is not None
        header = await asyncio.wait_for(watcher.stdout.readline(), 30)
        assert _titles(header.decode())[:2] == ["EVENT", "NAME"]
        first = await asyncio.wait_for(watcher.stdout.readline(), 30)
        assert first.decode().split()[:2] == ["ADDED", "cluster-queue"]
        await kubectl.run("label", "cq", "cluster-queue", "watched=yes")
        second = await asyncio.wait_for(watcher.stdout.readline(), 30)
        assert second.decode().split()[:2] == ["MODIFIED", "cluster-queue"]
    finally:
        watcher.terminate()
        await watcher.wait()


async def test_explain_uses_openapi_v3(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("explain", "clusterqueue.spec.resourceGroups")
    assert "KIND:       ClusterQueue" in out
    assert "VERSION:    v1beta2" in out
    assert "coveredResources" in out
    _, out, _ = await kubectl.run("explain", "jobs.spec.suspend")
    assert "<boolean>" in out


async def test_jobs_pods_and_dry_run(kubectl: Kubectl) -> None:
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: sample-job-\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: busybox\n"
    )
    _, out, _ = await kubectl.run("create", "-f", "-", stdin=job)
    assert out.startswith("job.batch/sample-job-")
    _, out, _ = await kubectl.run("get", "jobs")
    assert _titles(out.splitlines()[0]) == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    _, out, _ = await kubectl.run("create", "-f", "-", "--dry-run=server", "-o", "name", stdin=CQ)
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue" in out
    code, _, _ = await kubectl.run("get", "cq", "cluster-queue", check=False)
    assert code != 0


async def test_wrong_token_is_rejected(kubectl: Kubectl) -> None:
    code, _, err = await kubectl.run("--token", "wrong", "get", "cq", check=False)
    assert code != 0
    assert "Unauthorized" in err or "logged in" in err


async def test_typed_create_commands_and_namespace_deletion(kubectl: Kubectl) -> None:
    _, out, _ = await kubectl.run("create", "namespace", "team")
    assert out.strip() == "namespace/team created"
    await kubectl.run("create", "configmap", "settings", "--from-literal=a=b", "-n", "team")
    _, out, _ = await kubectl.run("get", "configmap", "settings", "-n", "team", "-o", "jsonpath={.data.a}")
    assert out == "b"
    _, out, _ = await kubectl.run("get", "ns", "team")
    assert out.splitlines()[1].split()[:2] == ["team", "Active"]
    _, out, _ = await kubectl.run("delete", "namespace", "team")
    assert out.strip() == 'namespace "team" deleted'
    code, _, err = await kubectl.run("get", "configmap", "settings", "-n", "team", check=False)
    assert code != 0
    assert "not found" in err
    code, _, _ = await kubectl.run("get", "ns", "team", check=False)
    assert code != 0
