"""The real kubectl against ``pykueue up --no-kueue``: the API server as a user sees it (issue [1])."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import yaml

from tests.e2e.harness import QUICKSTART, Pykueue, kubectl_binary
from tests.waiting import eventually_blocking

CQ_FILE = str(QUICKSTART / "cluster-queue.yaml")


def _header(output: str) -> list[str]:
    """Column titles of kubectl's table output (titles may contain single spaces)."""
    return [title.strip() for title in output.splitlines()[0].split("  ") if title.strip()]


def test_apply_quickstart_and_get_columns(kueue_api: Pykueue) -> None:
    out = kueue_api.kubectl("apply", "-f", CQ_FILE).stdout
    assert "resourceflavor.kueue.x-k8s.io/default-flavor created" in out
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue created" in out
    assert "localqueue.kueue.x-k8s.io/user-queue created" in out

    wide = kueue_api.kubectl("get", "cq", "-o", "wide").stdout
    assert _header(wide) == ["NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS", "ADMITTED WORKLOADS"]
    row = wide.splitlines()[1].split()
    assert row[0] == "cluster-queue"
    assert "BestEffortFIFO" in row

    narrow = kueue_api.kubectl("get", "clusterqueues").stdout
    assert _header(narrow) == ["NAME", "COHORT", "PENDING WORKLOADS"]

    lqs = kueue_api.kubectl("get", "lq", "-A").stdout
    assert _header(lqs) == ["NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS"]
    assert lqs.splitlines()[1].split()[:3] == ["default", "user-queue", "cluster-queue"]

    rfs = kueue_api.kubectl("get", "rf").stdout
    assert _header(rfs) == ["NAME", "AGE"]
    assert rfs.splitlines()[1].split()[0] == "default-flavor"

    # Applying the same file again changes nothing.
    again = kueue_api.kubectl("apply", "-f", CQ_FILE).stdout
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue unchanged" in again
    assert "localqueue.kueue.x-k8s.io/user-queue unchanged" in again


def test_get_yaml_shows_defaults_and_metadata(kueue_api: Pykueue) -> None:
    kueue_api.kubectl("apply", "-f", CQ_FILE)
    obj = yaml.safe_load(kueue_api.kubectl("get", "cq", "cluster-queue", "-o", "yaml").stdout)
    assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert obj["spec"]["flavorFungibility"] == {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"}
    assert obj["spec"]["preemption"]["withinClusterQueue"] == "Never"
    assert obj["spec"]["stopPolicy"] == "None"
    meta = obj["metadata"]
    assert meta["uid"]
    assert int(meta["resourceVersion"]) > 0
    assert meta["generation"] == 1
    assert meta["creationTimestamp"].endswith("Z")


def test_patch_label_and_generation(kueue_api: Pykueue) -> None:
    kueue_api.kubectl("apply", "-f", CQ_FILE)
    kueue_api.kubectl("patch", "cq", "cluster-queue", "--type", "merge", "-p", '{"spec":{"cohortName":"team-a"}}')
    kueue_api.kubectl("label", "cq", "cluster-queue", "team=a")
    obj = json.loads(kueue_api.kubectl("get", "cq", "cluster-queue", "-o", "json").stdout)
    assert obj["spec"]["cohortName"] == "team-a"
    assert obj["metadata"]["labels"]["team"] == "a"
    assert obj["metadata"]["generation"] == 2  # the label did not bump it, the spec change did
    assert (
        kueue_api.kubectl("get", "cq", "-l", "team=a", "-o", "name").stdout.strip()
        == "clusterqueue.kueue.x-k8s.io/cluster-queue"
    )
    assert kueue_api.kubectl("get", "cq", "-l", "team=b", "-o", "name").stdout.strip() == ""


def test_server_side_apply(kueue_api: Pykueue) -> None:
    out = kueue_api.kubectl("apply", "--server-side", "-f", CQ_FILE).stdout
    assert "clusterqueue.kueue.x-k8s.io/cluster-queue serverside-applied" in out
    obj = json.loads(kueue_api.kubectl("get", "cq", "cluster-queue", "-o", "json", "--show-managed-fields").stdout)
    managers = {entry["manager"] for entry in obj["metadata"]["managedFields"]}
    assert "kubectl" in managers


def test_watch_receives_live_event(kueue_api: Pykueue) -> None:
    kueue_api.kubectl("apply", "-f", CQ_FILE)
    env = {**os.environ, "KUBECONFIG": str(kueue_api.kubeconfig)}
    watcher = subprocess.Popen(
        [kubectl_binary(), "get", "cq", "-w", "--output-watch-events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        eventually_blocking(lambda: any(line.startswith("ADDED") for line in lines), within=30)
        kueue_api.kubectl("label", "cq", "cluster-queue", "watched=yes")
        eventually_blocking(
            lambda: any(line.startswith("MODIFIED") and "cluster-queue" in line for line in lines), within=30
        )
    finally:
        watcher.kill()
        watcher.wait()
        reader.join(5)
        for stream in (watcher.stdout, watcher.stderr):
            if stream is not None:
                stream.close()


def test_delete(kueue_api: Pykueue) -> None:
    kueue_api.kubectl("apply", "-f", CQ_FILE)
    out = kueue_api.kubectl("delete", "-f", CQ_FILE).stdout
    assert 'localqueue.kueue.x-k8s.io "user-queue" deleted' in out
    res = kueue_api.kubectl("get", "cq", "cluster-queue", check=False)
    assert res.returncode != 0
    assert 'clusterqueues.kueue.x-k8s.io "cluster-queue" not found' in res.stderr


def test_explain_prints_field_docs(kueue_api: Pykueue) -> None:
    out = kueue_api.kubectl("explain", "clusterqueue.spec").stdout
    assert "resourceGroups" in out
    assert "queueingStrategy" in out
    assert "DESCRIPTION" in out or "FIELDS" in out


def test_v1beta1_objects_are_converted(kueue_api: Pykueue, tmp_path: Path) -> None:
    v1beta1 = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: old-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: old-cq}
spec:
  cohort: legacy
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: old-flavor
      resources:
      - {name: cpu, nominalQuota: 2}
"""
    res = kueue_api.kubectl("apply", "-f", "-", input=v1beta1)
    assert "clusterqueue.kueue.x-k8s.io/old-cq created" in res.stdout
    assert "deprecated" in res.stderr.lower()
    obj = json.loads(kueue_api.kubectl("get", "clusterqueues.v1beta2.kueue.x-k8s.io", "old-cq", "-o", "json").stdout)
    assert obj["spec"]["cohortName"] == "legacy"
    assert "cohort" not in obj["spec"]
    old = json.loads(kueue_api.kubectl("get", "clusterqueues.v1beta1.kueue.x-k8s.io", "old-cq", "-o", "json").stdout)
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert old["spec"]["cohort"] == "legacy"


INVALID_CASES = {
    # the CRD's own rule refuses it, so Kueue's webhook (which names the field) never runs
    "borrowing-without-cohort": (
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: f
      resources:
      - {name: cpu, nominalQuota: 2, borrowingLimit: 1}
""",
        'spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty',
    ),
    "lending-above-nominal": (
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  cohortName: c
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: f
      resources:
      - {name: cpu, nominalQuota: 2, lendingLimit: 3}
""",
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit",
    ),
    "resources-out-of-order": (
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: f
      resources:
      - {name: memory, nominalQuota: 2Gi}
      - {name: cpu, nominalQuota: 2}
""",
        "spec.resourceGroups[0].flavors[0].resources[0].name",
    ),
    "bad-quantity": (
        """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: f
      resources:
      - {name: cpu, nominalQuota: 2xyz}
""",
        "nominalQuota",
    ),
}


def test_invalid_objects_are_refused_with_field_paths(kueue_api: Pykueue) -> None:
    """422 where the schema refuses, 403 where Kueue's webhook does: either way the path is named."""
    for name, (manifest, field_path) in INVALID_CASES.items():
        res = kueue_api.kubectl("apply", "-f", "-", input=manifest, check=False)
        assert res.returncode != 0, name
        assert field_path in res.stderr, (name, res.stderr)
        assert "Traceback" not in res.stderr
        # nothing was written
        assert kueue_api.kubectl("get", "cq", "bad", check=False).returncode != 0, name


def test_unknown_field_rejected_under_strict_validation(kueue_api: Pykueue) -> None:
    manifest = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: typo}
spec:
  nodeLabelz: {a: b}
"""
    res = kueue_api.kubectl("apply", "-f", "-", input=manifest, check=False)
    assert res.returncode != 0
    assert 'unknown field "spec.nodeLabelz"' in res.stderr
    assert kueue_api.kubectl("get", "rf", "typo", check=False).returncode != 0


def test_malformed_yaml_is_a_clear_error(kueue_api: Pykueue) -> None:
    res = kueue_api.kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: [unclosed\n", check=False)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
