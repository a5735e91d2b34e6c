"""kill -9 ``pykueue up`` while 200 Jobs are queued and running on simulated nodes (issue [3]).

After a restart with the same data dir every Job must finish, every Workload must have been admitted
exactly once, and at no observed moment may the admitted usage exceed the ClusterQueue's quota.
A watcher thread records every Workload state it sees (re-listing across the restart).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config, watch

from pykueue.api.meta.quantity import to_amount
from tests.e2e.harness import Pykueue
from tests.e2e.k8s import cpu_queue, is_true, items
from tests.waiting import eventually_blocking

JOBS = 200
QUOTA_CPU = 10
NODES = """
nodes:
  - name: sim
    kind: simulated
    count: 4
    capacity: {cpu: "8", memory: 64Gi, pods: "110"}
    defaultDuration: 1
"""
SETUP = cpu_queue(QUOTA_CPU)


def _jobs_list() -> str:
    jobs = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"job-{i:03d}", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            "spec": {
                "backoffLimit": 0,
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
        for i in range(JOBS)
    ]
    return yaml.safe_dump_all(jobs)


class _Recorder:
    """Every Workload state observed, in order; reconnects (re-list + watch) when the server goes away."""

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.states: list[dict[str, dict[str, Any]]] = []
        self.current: dict[str, dict[str, Any]] = {}
        self.admissions: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _count_admission(self, before: dict[str, Any] | None, after: dict[str, Any]) -> None:
        if is_true(after, "Admitted") and not (before is not None and is_true(before, "Admitted")):
            name = after["metadata"]["name"]
            self.admissions[name] = self.admissions.get(name, 0) + 1

    def _observe(self, obj: dict[str, Any], deleted: bool = False) -> None:
        """One watch event: a state that really existed, one object newer than the previous one."""
        name = obj["metadata"]["name"]
        before = self.current.get(name)
        if deleted:
            self.current.pop(name, None)
        else:
            self._count_admission(before, obj)
            self.current[name] = obj
        self.states.append(dict(self.current))

    def _relist(self, listed: list[dict[str, Any]]) -> None:
        """A list is one consistent snapshot: replace the whole state at once (mixing it object by object
        with what we knew before the gap would invent states that never existed)."""
        fresh = {obj["metadata"]["name"]: obj for obj in listed}
        for name, obj in fresh.items():
            self._count_admission(self.current.get(name), obj)
        self.current = fresh
        self.states.append(dict(fresh))

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                api: Any = client.CustomObjectsApi(config.new_client_from_config(config_file=str(self.kubeconfig)))
                listing = api.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta2", "default", "workloads")
                self._relist(listing["items"])
                stream = watch.Watch().stream(
                    api.list_namespaced_custom_object,
                    "kueue.x-k8s.io",
                    "v1beta2",
                    "default",
                    "workloads",
                    resource_version=listing["metadata"]["resourceVersion"],
                    timeout_seconds=5,
                )
                for event in stream:
                    self._observe(event["object"], deleted=event["type"] == "DELETED")
                    if self.stop.is_set():
                        break
            except Exception:  # the server is being killed/restarted: re-list when it is back
                time.sleep(0.3)


def _admitted_cpu(state: dict[str, dict[str, Any]]) -> int:
    total = 0
    for wl in state.values():
        if is_true(wl, "QuotaReserved") and not is_true(wl, "Finished"):
            for podset in wl["status"]["admission"]["podSetAssignments"]:
                total += to_amount("cpu", podset["resourceUsage"]["cpu"])
    return total


def test_kill9_while_200_jobs_are_queued(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--nodes", str(nodes)]).start()
    recorder = _Recorder(server.kubeconfig)
    try:
        server.kubectl("apply", "-f", "-", input=SETUP)
        recorder.thread.start()
        server.kubectl("create", "-f", "-", input=_jobs_list(), timeout=120)
        eventually_blocking(
            lambda: sum(1 for w in recorder.current.values() if is_true(w, "Finished")) >= 20, within=120
        )
        server.kill9()
        server.start()

        def all_finished() -> bool:
            workloads = items(server, "workloads", "-n", "default")
            return len(workloads) == JOBS and all(is_true(w, "Finished") for w in workloads)

        eventually_blocking(all_finished, within=300, interval=2.0)
        jobs = items(server, "jobs", "-n", "default")
        assert len(jobs) == JOBS
        for job in jobs:
            assert job["status"].get("succeeded") == 1, job["metadata"]["name"]
    finally:
        recorder.stop.set()
        server.stop()
        recorder.thread.join(10)

    assert recorder.states, "the watcher saw nothing"
    peak_millicpu = max(_admitted_cpu(state) for state in recorder.states)
    assert 0 < peak_millicpu <= QUOTA_CPU * 1000, peak_millicpu
    assert all(count == 1 for count in recorder.admissions.values()), {
        name: count for name, count in recorder.admissions.items() if count != 1
    }
    # Nearly all admissions are observed; one that began and ended inside the restart gap may not be.
    assert len(recorder.admissions) >= JOBS * 9 // 10
