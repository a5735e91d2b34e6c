"""JobSets and pod groups end to end with the real kubectl (issue [3]); integrations enabled by --config."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Pykueue
from tests.e2e.k8s import condition, cpu_queue, get, is_true, items
from tests.waiting import eventually_blocking

CONFIG = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: ["batch/job", "jobset.x-k8s.io/jobset", "pod"]
"""


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: js
  labels: {kueue.x-k8s.io/queue-name: lq}
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        parallelism: 1
        completions: 1
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: c, image: busybox, command: ["sh", "-c", "echo leader"], resources: {requests: {cpu: "1"}}}
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: c, image: busybox, command: ["sh", "-c", "echo worker"], resources: {requests: {cpu: "1"}}}
"""


@pytest.fixture
def with_integrations(tmp_path: Path) -> Iterator[Pykueue]:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--config", str(config)]).start()
    try:
        yield server
    finally:
        server.stop()


def _only_workload(server: Pykueue) -> dict[str, Any] | None:
    workloads = items(server, "workloads", "-n", "default")
    return workloads[0] if len(workloads) == 1 else None


def test_jobset_is_admitted_as_one_unit(with_integrations: Pykueue) -> None:
    server = with_integrations
    server.kubectl("apply", "-f", "-", input=cpu_queue(4))
    server.kubectl("create", "-f", "-", input=JOBSET)

    def pending() -> dict[str, Any] | None:
        wl = _only_workload(server)
        return wl if wl is not None and condition(wl, "QuotaReserved").get("status") == "False" else None

    wl = eventually_blocking(pending)
    assert isinstance(wl, dict)
    assert [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [("leader", 1), ("workers", 4)]
    assert get(server, "jobset", "js")["spec"]["suspend"] is True
    # 5 cpu needed, 4 available: nothing of it runs (all or nothing).
    assert items(server, "pods", "-n", "default") == []

    server.kubectl(
        "patch",
        "cq",
        "cq",
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":5}]',
    )
    eventually_blocking(lambda: is_true(_only_workload(server) or {}, "Admitted"))

    def completed() -> bool:
        return is_true(get(server, "jobset", "js"), "Completed")

    eventually_blocking(completed, within=90)
    eventually_blocking(lambda: is_true(_only_workload(server) or {}, "Finished"))


def _group_pod(name: str) -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels:
    kueue.x-k8s.io/queue-name: lq
    kueue.x-k8s.io/pod-group-name: grp
  annotations:
    kueue.x-k8s.io/pod-group-total-count: "2"
spec:
  restartPolicy: Never
  containers:
  - {{name: c, image: busybox, command: ["sh", "-c", "echo {name}"], resources: {{requests: {{cpu: "1"}}}}}}
"""


def test_pod_group_is_one_workload(with_integrations: Pykueue) -> None:
    server = with_integrations
    server.kubectl("apply", "-f", "-", input=cpu_queue(4))
    server.kubectl("create", "-f", "-", input=_group_pod("p1"))
    # One pod of two: the group is incomplete, so the pod stays gated.
    pod = get(server, "pod", "p1")
    assert {"name": "kueue.x-k8s.io/admission"} in pod["spec"].get("schedulingGates", [])
    server.kubectl("create", "-f", "-", input=_group_pod("p2"))

    def admitted() -> dict[str, Any] | None:
        wl = _only_workload(server)
        return wl if wl is not None and is_true(wl, "Admitted") else None

    wl = eventually_blocking(admitted)
    assert isinstance(wl, dict)
    assert sum(p["count"] for p in wl["spec"]["podSets"]) == 2

    def both_succeeded() -> bool:
        phases = [get(server, "pod", name).get("status", {}).get("phase") for name in ("p1", "p2")]
        return phases == ["Succeeded", "Succeeded"]

    eventually_blocking(both_succeeded, within=60)
    assert server.kubectl("logs", "p2").stdout.strip() == "p2"
