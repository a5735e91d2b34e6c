"""``pykueue controller`` as a separate process against ``pykueue up --no-kueue`` + Kueue's CRDs.

What a cluster deployment relies on: two replicas, one leads (the Lease says which); ``kill -9`` of
the leader mid-run and the other takes over within the lease duration plus a retry period, with no
Workload admitted twice and the quota never exceeded across 200 Jobs (checked on the watch history,
every intermediate state, not on the final state); a restart of the API server under a running
controller: its watches resume and work continues; and the command's errors are one line.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config, watch

from tests.e2e.controller_proc import Controller, free_port
from tests.e2e.harness import Pykueue
from tests.waiting import eventually_blocking

NAMESPACE = "pykueue-system"
LEASE_DURATION, RETRY_PERIOD = 15.0, 2.0
SLACK = 5.0
"""Seconds of allowance for a loaded machine (two cores shared by several test runs) on takeover bounds."""


def nodes_file(tmp_path: Path) -> Path:
    path = tmp_path / "nodes.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "nodes": [
                    {
                        "name": "sim",
                        "kind": "simulated",
                        "defaultDuration": 1,
                        "capacity": {"cpu": "256", "memory": "1Ti", "pods": "500"},
                    }
                ]
            }
        )
    )
    return path


def start_cluster(tmp_path: Path, crds: Path, extra: list[str] | None = None) -> Pykueue:
    server = Pykueue(
        tmp_path / "data", tmp_path / "kubeconfig", ["--no-kueue", "--nodes", str(nodes_file(tmp_path)), *(extra or [])]
    ).start()
    server.kubectl("apply", "--server-side", "-f", str(crds))
    server.kubectl("create", "namespace", NAMESPACE)
    return server


def queues(cpu: str) -> str:
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default-flavor}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cluster-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{{name: cpu, nominalQuota: "{cpu}"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: user-queue, namespace: default}}
spec: {{clusterQueue: cluster-queue}}
"""


def jobs(names: list[str]) -> str:
    """Queued Jobs as Kueue's job webhook leaves them: suspended, with the queue-name label."""
    docs = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
            "spec": {
                "suspend": True,
                "parallelism": 1,
                "completions": 1,
                "template": {
                    "metadata": {"annotations": {"pykueue.io/simulated-duration": "1"}},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "busybox",
                                "command": ["true"],
                                "resources": {"requests": {"cpu": "1"}},
                            }
                        ],
                    },
                },
            },
        }
        for name in names
    ]
    return yaml.safe_dump_all(docs)


def condition(obj: dict[str, Any], ctype: str) -> bool:
    return any(
        c.get("type") == ctype and c.get("status") == "True" for c in (obj.get("status") or {}).get("conditions") or []
    )


class WorkloadHistory:
    """Every Workload event since before the first Job, replayed into per-workload states."""

    def __init__(self, kubeconfig: Path) -> None:
        self.api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(kubeconfig)))
        self.watch = watch.Watch()
        self.lock = threading.Lock()
        self.reserved: dict[str, bool] = {}
        self.finished: dict[str, bool] = {}
        self.admissions: dict[str, int] = {}
        self.most_in_use = 0
        self.events = 0
        self.stopped = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        resource_version = ""
        while not self.stopped:
            try:
                for event in self.watch.stream(
                    self.api.list_cluster_custom_object,
                    "kueue.x-k8s.io",
                    "v1beta2",
                    "workloads",
                    resource_version=resource_version,
                ):
                    resource_version = event["object"]["metadata"]["resourceVersion"]
                    self._record(event["object"])
            except Exception:  # a dropped stream resumes where it stopped: no event is missed
                if self.stopped:
                    return
                time.sleep(0.5)

    def _record(self, obj: dict[str, Any]) -> None:
        uid = obj["metadata"]["uid"]
        with self.lock:
            self.events += 1
            reserved = condition(obj, "QuotaReserved")
            if reserved and not self.reserved.get(uid, False):
                self.admissions[uid] = self.admissions.get(uid, 0) + 1
            self.reserved[uid] = reserved
            self.finished[uid] = condition(obj, "Finished")
            in_use = sum(1 for u, r in self.reserved.items() if r and not self.finished.get(u))
            self.most_in_use = max(self.most_in_use, in_use)

    def finished_count(self) -> int:
        with self.lock:
            return sum(1 for f in self.finished.values() if f)

    def stop(self) -> None:
        self.stopped = True
        self.watch.stop()


def lease(server: Pykueue) -> dict[str, Any]:
    out = server.kubectl("get", "lease", "-n", NAMESPACE, "pykueue-controller-leader", "-o", "json")
    return json.loads(out.stdout)["spec"]


def when(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@pytest.fixture
def cluster(tmp_path: Path, kueue_crds_file: Path) -> Iterator[Pykueue]:
    server = start_cluster(tmp_path, kueue_crds_file)
    try:
        yield server
    finally:
        server.stop()


def test_usage_and_kubeconfig_errors_are_one_line(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pykueue", "controller", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        )

    bad_port = run("--webhook-port", "99999")
    assert bad_port.returncode == 2
    assert bad_port.stderr.strip() == "error: --webhook-port 99999: must be between 0 and 65535 (0 = any free port)"
    missing = run("--kubeconfig", str(tmp_path / "nowhere"))
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"error: kubeconfig {tmp_path / 'nowhere'}: no such file"
    nothing = run()  # no flag, no KUBECONFIG, no ~/.kube/config, not in a pod
    assert nothing.returncode == 1
    assert nothing.stderr.count("\n") == 1
    assert "not running in a cluster" in nothing.stderr
    bad_url = run("--webhook-url", "http://127.0.0.1:1")
    assert bad_url.returncode == 2
    assert "must be https://HOST:PORT" in bad_url.stderr
    timings = tmp_path / "timings.yaml"
    timings.write_text("leaderElection: {leaseDuration: 10s, renewDeadline: 15s}\n")
    bad_timings = run("--config", str(timings))
    assert bad_timings.returncode == 2
    assert bad_timings.stderr.strip() == "error: leaderElection: leaseDuration must be greater than renewDeadline"
    config_file = tmp_path / "config.yaml"
    config_file.write_text("leaderElection: {leaseDuration: soon}\n")
    bad_config = run("--config", str(config_file))
    assert bad_config.returncode == 2
    assert (
        bad_config.stderr.strip() == "error: leaderElection.leaseDuration: 'soon' is not a duration (like 15s, 1m30s)"
    )


def test_leader_killed_mid_run_the_other_takes_over_without_double_admission(cluster: Pykueue) -> None:
    quota = 20
    cluster.kubectl("apply", "-f", "-", input=queues(str(quota)))
    history = WorkloadHistory(cluster.kubeconfig)
    first = Controller(cluster.kubeconfig).start()
    second = Controller(cluster.kubeconfig).start()
    try:
        assert first.wait_leading(60) or second.wait_leading(60)
        leader, standby = (first, second) if first.leading.is_set() else (second, first)
        assert not standby.leading.is_set()  # exactly one leads ...
        assert lease(cluster)["holderIdentity"] == leader.identity  # ... and the Lease says which
        with urllib.request.urlopen(standby.health_url + "/readyz", timeout=10) as resp:  # both serve webhooks
            assert resp.status == 200
        names = [f"job-{i:03d}" for i in range(200)]
        cluster.kubectl("apply", "-f", "-", input=jobs(names), timeout=300)
        eventually_blocking(lambda: history.finished_count() >= 30, within=300)
        leader.kill9()
        before = lease(cluster)  # the dead leader's last renewal (the standby waits out the lease from it)
        assert before["holderIdentity"] == leader.identity
        assert standby.wait_leading(LEASE_DURATION + RETRY_PERIOD * 1.2 + 60)
        after = lease(cluster)
        assert after["holderIdentity"] == standby.identity
        assert after["leaseTransitions"] == before["leaseTransitions"] + 1
        takeover = (when(after["acquireTime"]) - when(before["renewTime"])).total_seconds()
        print(f"takeover: {takeover:.1f}s from the dead leader's last renewal to the new acquireTime")
        assert takeover <= LEASE_DURATION + RETRY_PERIOD * 1.2 + SLACK, takeover
        eventually_blocking(lambda: history.finished_count() == 200, within=600, interval=1.0)
        with history.lock:
            assert len(history.admissions) == 200
            assert set(history.admissions.values()) == {1}, "a workload was admitted twice"
            assert 0 < history.most_in_use <= quota, history.most_in_use
            print(f"{history.events} workload events; at most {history.most_in_use} of {quota} cpu in use")
    finally:
        history.stop()
        first.stop()
        second.stop()


def test_api_server_restart_under_a_running_controller(tmp_path: Path, kueue_crds_file: Path) -> None:
    port = free_port()
    server = start_cluster(tmp_path, kueue_crds_file, ["--port", str(port)])
    controller = Controller(server.kubeconfig, ["--no-leader-elect"])
    try:
        controller.start()
        assert controller.wait_leading(60)
        server.kubectl("apply", "-f", "-", input=queues("4"))
        server.kubectl("apply", "-f", "-", input=jobs(["before"]))

        def admitted(name: str) -> dict[str, Any] | None:
            out = server.kubectl("get", "workloads", "-n", "default", "-o", "json").stdout
            for wl in json.loads(out)["items"]:
                owners = wl["metadata"].get("ownerReferences") or []
                if any(o["name"] == name for o in owners) and condition(wl, "QuotaReserved"):
                    return wl
            return None

        first = eventually_blocking(lambda: admitted("before"), within=120)
        assert isinstance(first, dict)
        assert server.stop(signal.SIGTERM) == 0
        server.start()  # the same data dir and port: the kubeconfig stays good
        assert controller.alive()
        server.kubectl("apply", "-f", "-", input=jobs(["after"]))
        eventually_blocking(lambda: admitted("after"), within=180)  # its watches resumed: work continues
        again = admitted("before")
        assert again is not None
        assert again["metadata"]["uid"] == first["metadata"]["uid"]
        assert again["status"]["admission"] == first["status"]["admission"]  # not admitted a second time
        reserved = [c for c in again["status"]["conditions"] if c["type"] == "QuotaReserved"]
        assert reserved == [c for c in first["status"]["conditions"] if c["type"] == "QuotaReserved"]
        assert any("watch failed" in line for line in controller.output)  # it did lose its watches
    finally:
        controller.stop()
        server.stop()


def test_a_cluster_without_pykueue_is_a_one_line_error(api_only: Pykueue) -> None:
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pykueue",
                "controller",
                "--kubeconfig",
                str(api_only.kubeconfig),
                "--webhook-url",
                f"https://127.0.0.1:{free_port()}",
                "--health-port",
                "0",
                "--metrics-port",
                "0",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )

    no_namespace = run()
    assert no_namespace.returncode == 1
    assert no_namespace.stderr.strip().splitlines()[-1] == (
        'error: namespaces "pykueue-system" not found (is pykueue installed there? see pykueue install)'
    )
    api_only.kubectl("create", "namespace", NAMESPACE)
    no_crds = run()  # Kueue's kinds are not served
    assert no_crds.returncode == 1
    assert no_crds.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "Traceback" not in no_crds.stderr
