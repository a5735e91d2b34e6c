"""Kueue's finer behaviours, each through the real HTTP API of a default ``pykueue up``: labelled JobSets
queued by default, orphan deletes, queue labels on pods, env de-duplication, webhook denials (403 vs
the schema's 422), role hashes of gated group pods, prebuilt workloads, and the Warning for labelled
objects nothing queues."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.e2e.harness import QUICKSTART, Pykueue
from tests.e2e.k8s import condition, cpu_queue, get, is_true, items, job_manifest, workload_of
from tests.waiting import eventually_blocking

QUEUE = "kueue.x-k8s.io/queue-name"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pykueue]:
    """One default ``pykueue up`` (no --config) shared by the tests; each works in its own namespace."""
    tmp = tmp_path_factory.mktemp("finer")
    running = Pykueue(tmp / "data", tmp / "kubeconfig").start()
    try:
        yield running
    finally:
        running.stop()


def _namespace(server: Pykueue, name: str, cpu: int) -> None:
    server.kubectl("create", "namespace", name)
    server.kubectl("apply", "-f", "-", input=cpu_queue(cpu, cluster_queue=f"cq-{name}", namespace=name))


def _events(server: Pykueue, namespace: str, reason: str) -> list[dict[str, Any]]:
    return items(server, "events", "-n", namespace, "--field-selector", f"reason={reason}")


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: user-queue}}
spec:
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {{name: c, image: busybox, command: ["sh", "-c", "sleep 600"], resources: {{requests: {{cpu: "1"}}}}}}
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        template:
          spec:
            restartPolicy: Never
            containers:
            - {{name: c, image: busybox, command: ["sh", "-c", "sleep 600"], resources: {{requests: {{cpu: "1"}}}}}}
"""


def test_labelled_jobset_is_queued_by_a_default_up(server: Pykueue) -> None:
    """Quota is never bypassed: the quickstart's queue, a JobSet labelled for it asks 5 cpu of 4."""
    server.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
    server.kubectl("create", "-f", "-", input=JOBSET.format(name="seed", namespace="default"))

    def pending() -> dict[str, Any] | None:
        wl = workload_of(server, "seed")
        return wl if wl is not None and condition(wl, "QuotaReserved").get("status") == "False" else None

    wl = eventually_blocking(pending)
    assert isinstance(wl, dict)
    assert [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [("leader", 1), ("workers", 4)]
    assert get(server, "jobset", "seed")["spec"]["suspend"] is True
    assert items(server, "pods", "-n", "default", "-l", "jobset.sigs.k8s.io/jobset-name=seed") == []
    server.kubectl("delete", "jobset", "seed")


def test_labelled_object_no_integration_queues_gets_a_warning(server: Pykueue) -> None:
    server.kubectl("create", "namespace", "warn")
    server.kubectl("create", "configmap", "labelled", "-n", "warn")
    server.kubectl("label", "configmap", "labelled", "-n", "warn", f"{QUEUE}=user-queue")
    events = eventually_blocking(lambda: _events(server, "warn", "NotQueued"))
    assert isinstance(events, list)
    event = events[0]
    assert event["type"] == "Warning"
    assert event["involvedObject"]["name"] == "labelled"
    assert event["involvedObject"]["uid"] == get(server, "configmap", "labelled", "-n", "warn")["metadata"]["uid"]
    assert "not queued" in event["message"]
    assert "batch/v1 Job" in event["message"]
    assert any("ConfigMap warn/labelled" in line and "not queued" in line for line in server.output)


def test_orphan_delete_finishes_the_workload_and_frees_quota(server: Pykueue) -> None:
    _namespace(server, "orphan", 1)
    server.kubectl("create", "-f", "-", input=job_manifest("held", "lq", namespace="orphan"))
    eventually_blocking(lambda: (wl := workload_of(server, "held", "orphan")) is not None and is_true(wl, "Admitted"))
    name = workload_of(server, "held", "orphan")["metadata"]["name"]
    server.kubectl("delete", "job", "held", "-n", "orphan", "--cascade=orphan")

    def finished() -> dict[str, Any] | None:
        wl = get(server, "workload", name, "-n", "orphan")
        return wl if is_true(wl, "Finished") else None

    wl = eventually_blocking(finished)
    assert isinstance(wl, dict)
    assert condition(wl, "Finished")["reason"] == "OwnerNotFound"
    eventually_blocking(
        lambda: get(server, "clusterqueue", "cq-orphan").get("status", {}).get("reservingWorkloads") == 0
    )
    # the freed quota admits the next job
    server.kubectl("create", "-f", "-", input=job_manifest("next", "lq", namespace="orphan"))
    eventually_blocking(lambda: (wl := workload_of(server, "next", "orphan")) is not None and is_true(wl, "Admitted"))


def test_pods_of_admitted_jobs_carry_both_queue_labels(server: Pykueue) -> None:
    _namespace(server, "labels", 2)
    server.kubectl("create", "-f", "-", input=job_manifest("labelled", "lq", namespace="labels"))
    pods = eventually_blocking(lambda: items(server, "pods", "-n", "labels", "-l", "job-name=labelled"))
    assert isinstance(pods, list)
    labels = pods[0]["metadata"]["labels"]
    assert labels["kueue.x-k8s.io/local-queue-name"] == "lq"
    assert labels["kueue.x-k8s.io/cluster-queue-name"] == "cq-labels"


def test_duplicate_env_vars_collapse_in_the_workload(server: Pykueue) -> None:
    _namespace(server, "env", 0)
    job = json.loads(job_manifest("env", "lq", namespace="env"))
    job["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
        {"name": "A", "value": "3"},
    ]
    server.kubectl("create", "-f", "-", input=json.dumps(job))
    wl = eventually_blocking(lambda: workload_of(server, "env", "env"))
    assert isinstance(wl, dict)
    env = wl["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "A", "value": "3"}, {"name": "B", "value": "2"}]


def test_removing_the_priority_label_is_denied_by_kueues_job_webhook(server: Pykueue) -> None:
    _namespace(server, "prio", 0)
    server.kubectl(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": "high"},
                "value": 1000,
            }
        ),
    )
    server.kubectl(
        "create",
        "-f",
        "-",
        input=job_manifest("queued", "lq", namespace="prio", labels={"kueue.x-k8s.io/priority-class": "high"}),
    )
    result = server.kubectl("label", "job", "queued", "-n", "prio", "kueue.x-k8s.io/priority-class-", check=False)
    assert result.returncode != 0
    assert 'Error from server (Forbidden): admission webhook "vjob.kb.io" denied the request' in result.stderr
    with pytest.raises(ApiException) as info:
        client.BatchV1Api(config.new_client_from_config(config_file=str(server.kubeconfig))).patch_namespaced_job(
            "queued", "prio", {"metadata": {"labels": {"kueue.x-k8s.io/priority-class": None}}}
        )
    assert info.value.status == 403
    status = json.loads(info.value.body)
    assert status["reason"] == "Forbidden"
    assert status["code"] == 403
    assert status["message"] == (
        'admission webhook "vjob.kb.io" denied the request: metadata.labels[kueue.x-k8s.io/priority-class]: '
        'Invalid value: "": WorkloadPriorityClass cannot be removed from a workload'
    )
    assert get(server, "job", "queued", "-n", "prio")["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"


def _create(server: Pykueue, body: dict[str, Any]) -> ApiException:
    api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(server.kubeconfig)))
    group, version = body["apiVersion"].split("/")
    plural = body["kind"].lower() + "s"
    namespace = body["metadata"].get("namespace")
    with pytest.raises(ApiException) as info:
        api.create_namespaced_custom_object(group, version, namespace, plural, body) if namespace else (
            api.create_cluster_custom_object(group, version, plural, body)
        )
    return info.value


def _cq(name: str, quota: str, strategy: str = "BestEffortFIFO") -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "queueingStrategy": strategy,
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": quota}]}],
                }
            ],
        },
    }


def test_kueue_webhook_denials_are_403_and_schema_errors_422(server: Pykueue) -> None:
    denied = _create(server, _cq("negative", "-1"))
    assert denied.status == 403
    status = json.loads(denied.body)
    assert status["reason"] == "Forbidden"
    assert status["message"].startswith(
        'admission webhook "vclusterqueue.kb.io" denied the request: '
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    )
    invalid = _create(server, _cq("bad-strategy", "1", strategy="Sometimes"))
    assert invalid.status == 422
    assert json.loads(invalid.body)["details"]["causes"][0]["field"] == "spec.queueingStrategy"
    lq = _create(
        server,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "bad", "namespace": "default"},
            "spec": {"clusterQueue": "Not_A_Name"},
        },
    )
    assert lq.status == 422


GROUP_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  labels: {{kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: grp}}
  annotations: {{kueue.x-k8s.io/pod-group-total-count: "3"}}
spec:
  restartPolicy: Never
  containers:
  - {{name: c, image: busybox, command: ["sh", "-c", "sleep 600"], resources: {{requests: {{cpu: "{cpu}"}}}}}}
"""


def test_gated_pods_of_a_group_carry_their_role_hash(server: Pykueue) -> None:
    _namespace(server, "group", 0)
    for name, cpu in (("p1", "1"), ("p2", "1"), ("p3", "2")):
        server.kubectl("create", "-f", "-", input=GROUP_POD.format(name=name, namespace="group", cpu=cpu))
    pods = {p["metadata"]["name"]: p for p in items(server, "pods", "-n", "group")}
    hashes = {name: p["metadata"]["annotations"].get("kueue.x-k8s.io/role-hash") for name, p in pods.items()}
    assert all(hashes.values()), hashes
    assert hashes["p1"] == hashes["p2"] != hashes["p3"]
    assert all(
        any(g["name"] == "kueue.x-k8s.io/admission" for g in p["spec"]["schedulingGates"]) for p in pods.values()
    )
    wl = eventually_blocking(lambda: items(server, "workloads", "-n", "group"))
    assert isinstance(wl, list)
    assert sorted((p["name"], p["count"]) for p in wl[0]["spec"]["podSets"]) == sorted(
        [(hashes["p1"], 2), (hashes["p3"], 1)]
    )


def test_a_prebuilt_workload_is_adopted_not_duplicated(server: Pykueue) -> None:
    _namespace(server, "prebuilt", 2)
    server.kubectl(
        "create",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Workload",
                "metadata": {"name": "made-before", "namespace": "prebuilt"},
                "spec": {
                    "queueName": "lq",
                    "podSets": [
                        {
                            "name": "main",
                            "count": 1,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {
                                            "name": "main",
                                            "image": "busybox",
                                            "command": ["sh", "-c", "sleep 600"],
                                            "resources": {"requests": {"cpu": "1"}},
                                        }
                                    ],
                                }
                            },
                        }
                    ],
                },
            }
        ),
    )
    server.kubectl(
        "create",
        "-f",
        "-",
        input=job_manifest(
            "adopter", "lq", namespace="prebuilt", labels={"kueue.x-k8s.io/prebuilt-workload-name": "made-before"}
        ),
    )

    def adopted() -> dict[str, Any] | None:
        wl = get(server, "workload", "made-before", "-n", "prebuilt")
        refs = wl["metadata"].get("ownerReferences") or []
        return wl if any(r["kind"] == "Job" and r["name"] == "adopter" for r in refs) else None

    eventually_blocking(adopted)
    eventually_blocking(lambda: get(server, "job", "adopter", "-n", "prebuilt")["spec"].get("suspend") is False)
    assert [w["metadata"]["name"] for w in items(server, "workloads", "-n", "prebuilt")] == ["made-before"]


def test_a_prebuilt_workload_unlike_its_job_is_finished_out_of_sync(server: Pykueue) -> None:
    _namespace(server, "outofsync", 4)
    # the job comes first and waits for the Workload it names; that Workload asks for 1 pod, the job for 2
    server.kubectl(
        "create",
        "-f",
        "-",
        input=job_manifest(
            "two-pods",
            "lq",
            namespace="outofsync",
            parallelism=2,
            labels={"kueue.x-k8s.io/prebuilt-workload-name": "one-pod"},
        ),
    )
    server.kubectl(
        "create",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Workload",
                "metadata": {"name": "one-pod", "namespace": "outofsync"},
                "spec": {
                    "queueName": "lq",
                    "podSets": [
                        {
                            "name": "main",
                            "count": 1,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}
                                    ],
                                }
                            },
                        }
                    ],
                },
            }
        ),
    )

    def finished() -> dict[str, Any] | None:
        wl = get(server, "workload", "one-pod", "-n", "outofsync")
        return wl if is_true(wl, "Finished") else None

    wl = eventually_blocking(finished)
    assert isinstance(wl, dict)
    assert condition(wl, "Finished")["reason"] == "OutOfSync"
    assert get(server, "job", "two-pods", "-n", "outofsync")["spec"]["suspend"] is True
    assert [w["metadata"]["name"] for w in items(server, "workloads", "-n", "outofsync")] == ["one-pod"]


JOB_ONLY_FAIR = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing: {}
integrations:
  frameworks: ["batch/job"]
"""

COHORT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: borrower}
spec:
  cohortName: pool
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 0}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: lender}
spec:
  cohortName: pool
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 9}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: borrower}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: default}
spec: {clusterQueue: lender}
"""


def test_weighted_share_rounds_up_and_a_disabled_integration_warns(tmp_path: Path) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(JOB_ONLY_FAIR)
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--config", str(config_file)]).start()
    try:
        server.kubectl("apply", "-f", "-", input=COHORT)
        # 1 cpu borrowed of the 9 the cohort lends: 111.1 per mille, which Kueue reports as 112
        server.kubectl("create", "-f", "-", input=job_manifest("borrows", "lq"))
        eventually_blocking(
            lambda: (
                get(server, "clusterqueue", "borrower").get("status", {}).get("fairSharing", {}).get("weightedShare")
                == 112
            )
        )
        # the jobset integration is off: the labelled JobSet runs unqueued, and says so
        server.kubectl("create", "-f", "-", input=JOBSET.format(name="unqueued", namespace="default"))
        events = eventually_blocking(lambda: _events(server, "default", "NotQueued"))
        assert isinstance(events, list)
        assert events[0]["involvedObject"]["kind"] == "JobSet"
        assert events[0]["type"] == "Warning"
        assert '"jobset.x-k8s.io/jobset" integration is not enabled' in events[0]["message"]
        assert "integrations.frameworks" in events[0]["message"]
        assert not get(server, "jobset", "unqueued")["spec"].get("suspend")
        assert any("JobSet default/unqueued" in line for line in server.output)
    finally:
        server.stop()


KUEUE_CONFIGURATION = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health: {healthProbeBindAddress: ":8081"}
metrics: {bindAddress: ":8443"}
webhook: {port: 9443}
leaderElection: {leaderElect: true, resourceName: c1f6bfd2.kueue.x-k8s.io}
controller: {groupKindConcurrency: {Job.batch: 5, Pod: 5, Workload.kueue.x-k8s.io: 5}}
clientConnection: {qps: 50, burst: 100}
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "ray.io/rayjob"
  - "ray.io/rayservice"
  - "ray.io/raycluster"
  - "jobset.x-k8s.io/jobset"
  - "workload.codeflare.dev/appwrapper"
  - "trainer.kubeflow.org/trainjob"
  - "pod"
  - "deployment"
  - "statefulset"
  - "leaderworkerset.x-k8s.io/leaderworkerset"
  - "kubeflow.org/paddlejob"
  - "kubeflow.org/pytorchjob"
  - "kubeflow.org/tfjob"
  - "kubeflow.org/xgboostjob"
  - "kubeflow.org/jaxjob"
  - "sparkoperator.k8s.io/sparkapplication"
tls:
  minVersion: VersionTLS13
  cipherSuites: [TLS_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]
"""


def test_the_warning_comes_from_the_server_when_controllers_run_apart(tmp_path: Path) -> None:
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--controllers", "process"]).start()
    try:
        server.kubectl(
            "create",
            "-f",
            "-",
            input=json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "labelled", "labels": {QUEUE: "user-queue"}},
                }
            ),
        )
        events = eventually_blocking(lambda: _events(server, "default", "NotQueued"))
        assert isinstance(events, list)
        assert events[0]["involvedObject"]["name"] == "labelled"
    finally:
        server.stop()


def test_kueues_full_configuration_loads_and_its_tls_section_applies(tmp_path: Path) -> None:
    config_file = tmp_path / "config.yaml"
    config_file.write_text(KUEUE_CONFIGURATION)
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--config", str(config_file)]).start()
    try:
        listed = [line for line in server.output if "not implemented by pykueue" in line]
        assert len(listed) == 1
        assert listed[0].strip() == (
            "warning: not implemented by pykueue, objects of these kinds are not queued: kubeflow.org/mpijob, "
            "ray.io/rayjob, ray.io/rayservice, ray.io/raycluster, workload.codeflare.dev/appwrapper, "
            "trainer.kubeflow.org/trainjob, deployment, statefulset, leaderworkerset.x-k8s.io/leaderworkerset, "
            "kubeflow.org/paddlejob, kubeflow.org/pytorchjob, kubeflow.org/tfjob, kubeflow.org/xgboostjob, "
            "kubeflow.org/jaxjob, sparkoperator.k8s.io/sparkapplication"
        )
        server.kubectl("get", "clusterqueues")  # kubectl speaks TLS 1.3
        host, port = server.url.removeprefix("https://").rsplit(":", 1)
        tls12 = ssl.create_default_context()
        tls12.check_hostname = False
        tls12.verify_mode = ssl.CERT_NONE
        tls12.maximum_version = ssl.TLSVersion.TLSv1_2
        with socket.create_connection((host, int(port)), timeout=10) as sock, pytest.raises(ssl.SSLError):
            tls12.wrap_socket(sock, server_hostname=host)
    finally:
        server.stop()
