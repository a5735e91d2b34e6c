"""Cluster mode end to end: ``pykueue up --no-kueue`` stands in for a cluster, ``pykueue install`` is applied
to it with kubectl, and ``pykueue controller`` runs as a separate process serving Kueue's webhooks over
HTTPS at ``--webhook-url``. Every write of a Job, ClusterQueue, ... goes through the external webhooks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e import test_admission_e2e as embedded
from tests.e2e import test_integrations_e2e as integrations
from tests.e2e.controller_proc import Controller, free_port
from tests.e2e.harness import QUICKSTART, Pykueue
from tests.waiting import eventually_blocking

NAMESPACE = "pykueue-system"


def start_cluster_mode(tmp_path: Path, pod_seconds: float, *, jobset: bool = False) -> tuple[Pykueue, Controller]:
    """A bare cluster (one simulated node whose pods run ``pod_seconds``), pykueue installed, the controller up.

    ``jobset``: JobSet's CRD is applied first and the server restarted, as its embedded JobSet controller
    (the cluster's, not pykueue's) starts only with the kind served."""
    nodes = tmp_path / "nodes.yaml"
    node = {
        "name": "sim",
        "kind": "simulated",
        "defaultDuration": pod_seconds,
        "capacity": {"cpu": "8", "memory": "32Gi"},
    }
    nodes.write_text(yaml.safe_dump({"nodes": [node]}))
    extra = ["--no-kueue", "--nodes", str(nodes), "--port", str(free_port())]
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", extra).start()
    controller = Controller(server.kubeconfig)
    try:
        if jobset:
            crds = subprocess.run([sys.executable, "-m", "pykueue", "crds"], capture_output=True, text=True, check=True)
            docs = [d for d in yaml.safe_load_all(crds.stdout) if d and d["spec"]["group"] == "jobset.x-k8s.io"]
            server.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(docs))
            server.stop()
            server.start()
        install = subprocess.run(
            [sys.executable, "-m", "pykueue", "install"], capture_output=True, text=True, check=True, timeout=120
        )
        server.kubectl("apply", "--server-side", "-f", "-", input=install.stdout, timeout=180)
        controller.start()
        assert controller.wait_leading(60)
    except BaseException:
        controller.stop()
        server.stop()
        raise
    return server, controller


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[Pykueue, Controller]]:
    server, controller = start_cluster_mode(tmp_path, 2)
    try:
        yield server, controller
    finally:
        controller.stop()
        server.stop()


@pytest.mark.parametrize(
    "scenario",
    [
        embedded.test_priority_preemption_between_two_local_queues,
        embedded.test_borrowing_across_a_cohort_and_reclaim,
        embedded.test_stop_and_resume_a_cluster_queue,
    ],
    ids=["preemption", "borrowing-and-reclaim", "stop-and-resume"],
)
def test_embedded_scenarios_in_cluster_mode(tmp_path: Path, scenario: Callable[[Pykueue], None]) -> None:
    """The embedded mode's end-to-end scenarios, unchanged, against the controller in its own process."""
    server, controller = start_cluster_mode(tmp_path, 600)  # pods run until preempted or deleted
    try:
        scenario(server)
    finally:
        controller.stop()
        server.stop()


def workloads(server: Pykueue) -> list[dict[str, Any]]:
    return list(json.loads(server.kubectl("get", "workloads", "-n", "default", "-o", "json").stdout)["items"])


def is_true(obj: dict[str, Any], ctype: str) -> bool:
    return any(c["type"] == ctype and c["status"] == "True" for c in (obj.get("status") or {}).get("conditions") or [])


def test_the_webhook_configurations_point_at_the_controller(cluster: tuple[Pykueue, Controller]) -> None:
    server, controller = cluster
    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        name = f"pykueue-{kind.removesuffix('webhookconfiguration')}-webhook-configuration"
        config = json.loads(server.kubectl("get", kind, name, "-o", "json").stdout)
        for webhook in config["webhooks"]:
            client_config = webhook["clientConfig"]
            assert client_config["url"].startswith(controller.webhook_url + "/"), webhook["name"]
            assert "service" not in client_config
            assert client_config["caBundle"]
    crd = json.loads(server.kubectl("get", "crd", "workloads.kueue.x-k8s.io", "-o", "json").stdout)
    conversion = crd["spec"]["conversion"]["webhook"]["clientConfig"]
    assert conversion["url"] == controller.webhook_url + "/convert"
    assert conversion["caBundle"]
    # a v1beta1 read of a v1beta2 object goes through the conversion webhook
    server.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    old = json.loads(
        server.kubectl("get", "clusterqueues.v1beta1.kueue.x-k8s.io", "cluster-queue", "-o", "json").stdout
    )
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert old["spec"]["resourceGroups"][0]["coveredResources"] == ["cpu", "memory"]
    controller.stop()  # without the webhook server, the same read cannot be converted
    failed = server.kubectl("get", "clusterqueues.v1beta1.kueue.x-k8s.io", "cluster-queue", "-o", "json", check=False)
    assert failed.returncode != 0
    assert "conversion webhook" in failed.stderr, failed.stderr


def test_quickstart_in_cluster_mode(cluster: tuple[Pykueue, Controller]) -> None:
    server, _ = cluster
    server.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    cq = json.loads(server.kubectl("get", "clusterqueue", "cluster-queue", "-o", "json").stdout)
    assert cq["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]  # mclusterqueue.kb.io
    # a server-side dry run stores nothing and runs no controller: the suspension is the mutating webhook's
    dry = server.kubectl("create", "--dry-run=server", "-o", "json", "-f", str(QUICKSTART / "sample-job.yaml"))
    assert json.loads(dry.stdout)["spec"]["suspend"] is True
    first = server.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml")).stdout.split()[0]
    second = server.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml")).stdout.split()[0]
    assert first != second

    def one_admitted_one_waiting() -> bool:
        wls = workloads(server)
        return len(wls) == 2 and sum(is_true(w, "Admitted") for w in wls) == 1

    eventually_blocking(one_admitted_one_waiting, within=120)

    def both_finished() -> bool:
        wls = workloads(server)
        return len(wls) == 2 and all(is_true(w, "Finished") for w in wls)

    eventually_blocking(both_finished, within=180)
    for job in (first, second):
        status = json.loads(server.kubectl("get", job, "-o", "json").stdout)["status"]
        assert status.get("succeeded") == 1, status


def test_invalid_objects_are_refused_with_the_webhooks_message(cluster: tuple[Pykueue, Controller]) -> None:
    server, _ = cluster
    bad_cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "bad"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "default-flavor",
                            "resources": [
                                {"name": "memory", "nominalQuota": "1Gi"},
                                {"name": "cpu", "nominalQuota": "1"},
                            ],
                        }
                    ],
                }
            ]
        },
    }
    refused = server.kubectl("create", "-f", "-", input=json.dumps(bad_cq), check=False)
    assert refused.returncode != 0
    assert 'admission webhook "vclusterqueue.kb.io" denied the request: ' in refused.stderr
    assert 'must match the name in coveredResources[0] ("cpu")' in refused.stderr

    def job(name: str, labels: dict[str, str]) -> str:
        return json.dumps(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name, "namespace": "default", "labels": labels},
                "spec": {
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
                },
            }
        )

    refused = server.kubectl(
        "create", "-f", "-", input=job("bad", {"kueue.x-k8s.io/queue-name": "Not_A_Queue"}), check=False
    )
    assert refused.returncode != 0
    assert (
        'admission webhook "vjob.kb.io" denied the request: metadata.labels[kueue.x-k8s.io/queue-name]'
        in refused.stderr
    )
    # a Job without the queue label is left alone (manageJobsWithoutQueueName is off), as Kueue leaves it
    server.kubectl("create", "-f", "-", input=job("free", {}))
    free = json.loads(server.kubectl("get", "job", "free", "-o", "json").stdout)
    assert free["spec"]["suspend"] is False
    assert workloads(server) == []


def test_jobset_in_cluster_mode(tmp_path: Path) -> None:
    """The embedded mode's JobSet scenario (admitted as one unit, all or nothing) against the controller."""
    server, controller = start_cluster_mode(tmp_path, 2, jobset=True)
    try:
        # the JobSet is created suspended by mjobset.kb.io, over HTTPS (a dry run runs no controller)
        dry = server.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", input=integrations.JOBSET)
        assert json.loads(dry.stdout)["spec"]["suspend"] is True
        integrations.test_jobset_is_admitted_as_one_unit(server)
    finally:
        controller.stop()
        server.stop()
