"""Kueue's visibility API through the real kubectl, with the controllers in the server's process and
in a process of their own (where the server forwards to the controller process's engine)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Pykueue
from tests.waiting import eventually_blocking

VIS = "/apis/visibility.kueue.x-k8s.io"

SETUP = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-cq}
spec:
  namespaceSelector: {}
  queueingStrategy: %(strategy)s
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq-a}
spec: {clusterQueue: team-cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq-b}
spec: {clusterQueue: team-cq}
"""


def workload_yaml(name: str, queue: str, priority: int, cpu: str = "1", namespace: str = "default") -> str:
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  queueName: {queue}
  priority: {priority}
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          resources: {{requests: {{cpu: "{cpu}"}}}}
"""


@pytest.fixture(params=["in-process", "process"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pykueue]:
    running = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--controllers", request.param]).start()
    try:
        yield running
    finally:
        running.stop()


def _raw(server: Pykueue, path: str) -> dict[str, Any]:
    return dict(json.loads(server.kubectl("get", "--raw", path).stdout))


def _names(summary: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    return [
        (i["metadata"]["name"], i["localQueueName"], i["positionInClusterQueue"], i["positionInLocalQueue"])
        for i in summary["items"]
    ]


def fill(server: Pykueue, strategy: str = "BestEffortFIFO") -> None:
    """``holder`` holds the only cpu; four wait with mixed priorities in two LocalQueues."""
    server.kubectl("apply", "-f", "-", input=SETUP % {"strategy": strategy})
    server.kubectl("apply", "-f", "-", input=workload_yaml("holder", "lq-a", 100))
    admitted = "jsonpath={.status.conditions[?(@.type=='Admitted')].status}"
    eventually_blocking(lambda: server.kubectl("get", "workload", "holder", "-o", admitted).stdout == "True")
    docs = [
        workload_yaml("low-a", "lq-a", 1),
        workload_yaml("high-b", "lq-b", 50),
        workload_yaml("mid-a", "lq-a", 10),
        workload_yaml("low-b", "lq-b", 5),
    ]
    for doc in docs:  # distinct priorities: creation times have one-second resolution
        server.kubectl("create", "-f", "-", input=doc)


EXPECTED = [("high-b", "lq-b", 0, 0), ("mid-a", "lq-a", 1, 0), ("low-b", "lq-b", 2, 1), ("low-a", "lq-a", 3, 1)]


def test_pending_workloads_through_kubectl_get_raw(server: Pykueue) -> None:
    fill(server)
    path = f"{VIS}/v1beta2/clusterqueues/team-cq/pendingworkloads"
    got = eventually_blocking(lambda: (s := _raw(server, path)) and len(s["items"]) == 4 and s)
    assert isinstance(got, dict)
    assert got["kind"] == "PendingWorkloadsSummary"
    assert got["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta2"
    assert _names(got) == EXPECTED
    assert [i["priority"] for i in got["items"]] == [50, 10, 5, 1]
    assert _names(_raw(server, path + "?limit=2&offset=1")) == EXPECTED[1:3]
    lq = _raw(server, f"{VIS}/v1beta1/namespaces/default/localqueues/lq-a/pendingworkloads")
    assert lq["apiVersion"] == "visibility.kueue.x-k8s.io/v1beta1"
    assert _names(lq) == [e for e in EXPECTED if e[1] == "lq-a"]

    missing = server.kubectl("get", "--raw", f"{VIS}/v1beta2/clusterqueues/nope/pendingworkloads", check=False)
    assert missing.returncode == 1
    assert 'clusterqueues.visibility.kueue.x-k8s.io "nope" not found' in missing.stderr
    bad = server.kubectl("get", "--raw", path + "?limit=-1", check=False)
    assert bad.returncode == 1
    assert "invalid limit -1" in bad.stderr

    # discovery lists the group, and the Kueue kinds keep their short names
    resources = server.kubectl("api-resources", "--api-group=visibility.kueue.x-k8s.io").stdout
    assert "clusterqueues" in resources
    assert "localqueues" in resources
    assert "team-cq" in server.kubectl("get", "cq").stdout
    assert "lq-a" in server.kubectl("get", "localqueues").stdout


def test_a_restarted_controller_process_serves_the_positions_again(tmp_path: Path) -> None:
    import os
    import signal

    from tests.e2e.test_controller_process import _controller_pids

    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--controllers", "process"]).start()
    try:
        fill(server, "StrictFIFO")
        path = f"{VIS}/v1beta2/clusterqueues/team-cq/pendingworkloads"
        eventually_blocking(lambda: len(_raw(server, path)["items"]) == 4)
        [child] = _controller_pids(server.kubeconfig)
        os.kill(child, signal.SIGKILL)
        eventually_blocking(lambda: [p for p in _controller_pids(server.kubeconfig) if p != child], within=30)

        def served() -> dict[str, Any] | None:
            result = server.kubectl("get", "--raw", path, check=False)
            return json.loads(result.stdout) if result.returncode == 0 else None

        summary = eventually_blocking(lambda: (s := served()) is not None and len(s["items"]) == 4 and s, within=60)
        assert isinstance(summary, dict)
        assert _names(summary) == EXPECTED
    finally:
        server.stop()
