"""``explain workload``, ``simulate eta`` and ``simulate run --from-cluster`` answer with the scheduler
configuration the cluster runs with: Kueue's ``kueue-manager-config`` ConfigMap, pykueue's
``pykueue-manager-config`` (which ``pykueue up`` stores at start), ``--config FILE`` over both, the
defaults when there is none — and each says which one it used.

The cluster is a bare API server with Kueue's CRDs (no controllers), holding by hand the state a Kueue
cluster would hold, so nothing moves while the commands read it. Two ClusterQueues of 4 cpu share a
cohort; team-b runs 7 cpu (3 borrowed), team-a runs 1 cpu and wants 4 more, which needs 1 cpu
borrowed back. Classic preemption never reclaims for a workload that would borrow (and
borrowWithinCohort is Never), so it waits; with fair sharing, team-a's share after admission (1 cpu
borrowed) is below team-b's (3 borrowed), so LessThanInitialShare preempts team-b's b-big.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from pykueue.api.meta.clock import format_time
from tests.e2e.harness import Pykueue

API = "kueue.x-k8s.io/v1beta2"
KUEUE_FAIR_SHARING = """\
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
health:
  healthProbeBindAddress: :8081
metrics:
  bindAddress: :8443
webhook:
  port: 9443
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency:
    Job.batch: 5
    Workload.kueue.x-k8s.io: 5
clientConnection:
  qps: 50
  burst: 100
integrations:
  frameworks:
  - "batch/job"
  - "kubeflow.org/mpijob"
  - "jobset.x-k8s.io/jobset"
fairSharing:
  enable: true
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
"""
"""What Kueue's manifests put in ``kueue-system/kueue-manager-config``, with fair sharing turned on."""
CLASSIC = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady: {enable: false}\n"
RUNTIMES = {"b-big": "2000s", "b-small": "600s", "a-small": "1000s", "a-want": "300s"}
PRIORITIES = {"b-small": 5}
"""b-big goes first (lower priority first): evicting it alone makes room, where b-small's 3 cpu would not."""


def _queue(name: str) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohortName": "research",
            "namespaceSelector": {},
            "preemption": {
                "withinClusterQueue": "LowerPriority",
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "Never"},
            },
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
                }
            ],
        },
    }


def _workload(name: str, queue: str, cpu: int) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"pykueue.io/expected-runtime": RUNTIMES[name]},
        },
        "spec": {
            "queueName": queue,
            "priority": PRIORITIES.get(name, 0),
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": str(cpu)}}}
                            ],
                        }
                    },
                }
            ],
        },
    }


def _admitted(cluster_queue: str, cpu: int, at: str) -> dict[str, Any]:
    """The status Kueue writes on a workload it admitted."""
    conditions = [
        {
            "type": kind,
            "status": "True",
            "reason": kind,
            "message": f"{kind} by {cluster_queue}",
            "lastTransitionTime": at,
        }
        for kind in ("QuotaReserved", "Admitted")
    ]
    return {
        "status": {
            "admission": {
                "clusterQueue": cluster_queue,
                "podSetAssignments": [
                    {
                        "name": "main",
                        "flavors": {"cpu": "default-flavor"},
                        "resourceUsage": {"cpu": str(cpu)},
                        "count": 1,
                    }
                ],
            },
            "conditions": conditions,
        }
    }


def _fill(cluster: Pykueue) -> None:
    objects: list[dict[str, Any]] = [
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}, "spec": {}},
        _queue("team-a"),
        _queue("team-b"),
        *(
            {
                "apiVersion": API,
                "kind": "LocalQueue",
                "metadata": {"name": lq, "namespace": "default"},
                "spec": {"clusterQueue": cq},
            }
            for lq, cq in (("a", "team-a"), ("b", "team-b"))
        ),
        _workload("b-big", "b", 4),
        _workload("b-small", "b", 3),
        _workload("a-small", "a", 1),
        _workload("a-want", "a", 4),
    ]
    cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(objects))
    now = format_time(time.time())
    for name, cq, cpu in (("b-big", "team-b", 4), ("b-small", "team-b", 3), ("a-small", "team-a", 1)):
        cluster.kubectl(
            "patch", "workload", name, "--subresource=status", "--type=merge", "-p", json.dumps(_admitted(cq, cpu, now))
        )


def _config_map(cluster: Pykueue, namespace: str, name: str, text: str) -> None:
    cluster.kubectl("create", "namespace", namespace, check=False)
    doc = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"controller_manager_config.yaml": text},
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(doc))


def _pykueue(cluster: Pykueue, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pykueue", *map(str, args), "--kubeconfig", str(cluster.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _explain(cluster: Pykueue, *args: str | Path) -> dict[str, Any]:
    result = _pykueue(cluster, "explain", "workload", "a-want", "-o", "json", *args)
    assert result.returncode == 0, result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    assert answer["state"] == "pending"
    return answer


def _last_line(cluster: Pykueue, *args: str | Path) -> str:
    result = _pykueue(cluster, "explain", "workload", "a-want", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[-1]


def _eta_wait(cluster: Pykueue, *args: str | Path) -> tuple[float, str]:
    result = _pykueue(cluster, "simulate", "eta", "-o", "json", *args)
    assert result.returncode == 0, result.stderr
    (estimate,) = json.loads(result.stdout)
    assert estimate["name"] == "a-want"
    said = result.stderr.splitlines()[0]
    assert said == f"Scheduler configuration: {estimate['schedulerConfiguration']['description']}"
    return float(estimate["estimatedWaitSeconds"]), said


def _trace(tmp_path: Path) -> Path:
    """The same contention as a trace: team-b fills its quota and borrows, then team-a asks for 4."""
    rows = [
        ("b-big", 0, 2000, "b", 4),
        ("b-small", 0, 600, "b", 3),
        ("a-small", 0, 1000, "a", 1),
        ("a-want", 10, 300, "a", 4),
    ]
    path = tmp_path / "trace.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "name": name,
                    "submit": submit,
                    "runtime": runtime,
                    "namespace": "default",
                    "queue": queue,
                    "priority": PRIORITIES.get(name, 0),
                    "podSets": [{"count": 1, "requests": {"cpu": str(cpu)}}],
                }
            )
            + "\n"
            for name, submit, runtime, queue, cpu in rows
        )
    )
    return path


def _replay(cluster: Pykueue, trace: Path, *args: str | Path) -> dict[str, Any]:
    result = _pykueue(cluster, "simulate", "run", "--from-cluster", "--trace", trace, "-o", "json", *args)
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    assert doc["configuration"] == "cluster"
    assert f"Scheduler configuration of cluster: {doc['schedulerConfiguration']['description']}" in result.stderr
    return doc


def test_the_answers_follow_the_clusters_configuration(kueue_api: Pykueue, tmp_path: Path) -> None:
    cluster = kueue_api
    _fill(cluster)
    classic = tmp_path / "classic.yaml"
    classic.write_text(CLASSIC)
    trace = _trace(tmp_path)

    # no Configuration anywhere: Kueue's defaults, and the answer says so
    default = _explain(cluster)
    assert default["schedulerConfiguration"]["source"] == "defaults"
    assert default["schedulerConfiguration"]["reason"] == "no Configuration found"
    assert default["engine"]["preemptionPossible"] is False
    assert any(s.startswith("Preemption cannot help") for s in default["sentences"])
    assert _last_line(cluster) == "Scheduler configuration: Kueue's defaults (no Configuration found; fair sharing off)"
    default_wait, said = _eta_wait(cluster)
    assert said == "Scheduler configuration: Kueue's defaults (no Configuration found; fair sharing off)"
    assert default_wait > 900  # it waits for a-small's 1000 s: b-small's 3 cpu alone are not enough
    assert _replay(cluster, trace)["preemptions"] == 0

    # Kueue's own ConfigMap turns fair sharing on: team-a may now take back what team-b borrowed
    _config_map(cluster, "kueue-system", "kueue-manager-config", KUEUE_FAIR_SHARING)
    fair = _explain(cluster)
    assert fair["schedulerConfiguration"] == {
        "source": "configMap",
        "name": "kueue-system/kueue-manager-config",
        "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
        "admissionFairSharing": False,
        "description": "ConfigMap kueue-system/kueue-manager-config (fair sharing on)",
    }
    targets = fair["engine"]["preemptionTargets"]
    assert targets
    assert {t["reason"] for t in targets} == {"InCohortFairSharing"}
    assert [t["workload"] for t in targets] == ["default/b-big"]
    assert "Preemption can make room: evicting default/b-big (InCohortFairSharing)." in fair["sentences"]
    assert (
        _last_line(cluster) == "Scheduler configuration: ConfigMap kueue-system/kueue-manager-config (fair sharing on)"
    )
    fair_wait, said = _eta_wait(cluster)
    assert said == "Scheduler configuration: ConfigMap kueue-system/kueue-manager-config (fair sharing on)"
    assert fair_wait < 60  # it preempts at once instead of waiting
    replayed = _replay(cluster, trace)
    assert replayed["preemptions"] >= 1
    assert replayed["schedulerConfiguration"]["source"] == "configMap"

    # --config overrides what the cluster holds
    overridden = _explain(cluster, "--config", classic)
    assert overridden["schedulerConfiguration"]["source"] == "file"
    assert overridden["engine"]["preemptionPossible"] is False
    assert _without_estimate(overridden) == _without_estimate(default)
    assert _last_line(cluster, "--config", classic) == f"Scheduler configuration: file {classic} (fair sharing off)"
    overridden_wait, said = _eta_wait(cluster, "--config", classic)
    assert said == f"Scheduler configuration: file {classic} (fair sharing off)"
    assert overridden_wait > 900
    assert _replay(cluster, trace, "--config", classic)["preemptions"] == 0


def _without_estimate(answer: dict[str, Any]) -> list[str]:
    """The sentences but the start estimate's (its "(in 16.2m)" moves with the clock)."""
    return [s for s in answer["sentences"] if not s.startswith("Estimated start")]


def _one_line_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr.strip()


@pytest.mark.parametrize("command", ["explain", "eta", "run"])
def test_an_unusable_configuration_is_an_error_never_the_defaults(
    kueue_api: Pykueue, tmp_path: Path, command: str
) -> None:
    cluster = kueue_api
    _fill(cluster)
    trace = _trace(tmp_path)
    argv: dict[str, tuple[str | Path, ...]] = {
        "explain": ("explain", "workload", "a-want"),
        "eta": ("simulate", "eta"),
        "run": ("simulate", "run", "--from-cluster", "--trace", trace),
    }
    # exit codes: kueuectl's 1 for explain; simulate's 1 (the cluster) and 2 (bad input) for eta,
    # 2 for run (its objects and settings are its input)
    cluster_code = {"explain": 1, "eta": 1, "run": 2}[command]
    file_code = {"explain": 1, "eta": 2, "run": 2}[command]

    _config_map(cluster, "kueue-system", "kueue-manager-config", "fairSharing:\n  enable: maybe\n")
    assert _one_line_error(_pykueue(cluster, *argv[command]), cluster_code) == (
        "error: ConfigMap kueue-system/kueue-manager-config: invalid Configuration: "
        "fairSharing.enable: must be true or false"
    )

    _config_map(cluster, "kueue-system", "kueue-manager-config", KUEUE_FAIR_SHARING)
    _config_map(cluster, "pykueue-system", "pykueue-manager-config", CLASSIC)
    assert _one_line_error(_pykueue(cluster, *argv[command]), cluster_code) == (
        "error: several Kueue Configurations in the cluster (ConfigMaps kueue-system/kueue-manager-config, "
        "pykueue-system/pykueue-manager-config); give the one the controller runs with as --config FILE"
    )

    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: yes\n")
    assert _one_line_error(_pykueue(cluster, *argv[command], "--config", broken), file_code) == (
        f"error: --config {broken}: invalid Configuration: fairSharing: must be a mapping"
    )
    # a good --config wins over the ambiguous cluster
    good = tmp_path / "good.yaml"
    good.write_text(CLASSIC)
    assert _pykueue(cluster, *argv[command], "--config", good).returncode == 0


def test_pykueue_up_stores_the_configuration_it_runs_with(tmp_path: Path) -> None:
    fair = tmp_path / "fair.yaml"
    fair.write_text("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n")
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig", ["--config", str(fair)]).start()
    try:
        stored = json.loads(
            server.kubectl("get", "configmap", "pykueue-manager-config", "-n", "kueue-system", "-o", "json").stdout
        )
        assert stored["data"] == {"controller_manager_config.yaml": fair.read_text()}
        _fill_queues_only(server)
        result = _pykueue(server, "explain", "workload", "a-want")
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1] == (
            "Scheduler configuration: ConfigMap kueue-system/pykueue-manager-config (fair sharing on)"
        )
    finally:
        server.stop()
    # restarted without --config on the same data: the stored Configuration is the one it runs now
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig").start()
    try:
        stored = json.loads(
            server.kubectl("get", "configmap", "pykueue-manager-config", "-n", "kueue-system", "-o", "json").stdout
        )
        assert "fairSharing" not in yaml.safe_load(stored["data"]["controller_manager_config.yaml"])
        result = _pykueue(server, "explain", "workload", "a-want")
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1] == (
            "Scheduler configuration: ConfigMap kueue-system/pykueue-manager-config (fair sharing off)"
        )
    finally:
        server.stop()


def _fill_queues_only(server: Pykueue) -> None:
    """A queue and one workload the running controllers leave pending (it asks for more than exists)."""
    objects = [
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}, "spec": {}},
        _queue("team-a"),
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "a", "namespace": "default"},
            "spec": {"clusterQueue": "team-a"},
        },
        _workload("a-want", "a", 40),
    ]
    server.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))
