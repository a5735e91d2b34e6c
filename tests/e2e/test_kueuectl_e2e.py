"""``kubectl kueue ...``: every kueuectl verb through the real kubectl, which finds the
``kubectl-kueue`` entry point on PATH (the venv's bin), against a real ``pykueue up``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.harness import Pykueue, kubectl_binary
from tests.e2e.test_visibility_e2e import workload_yaml
from tests.waiting import eventually_blocking

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pykueue]:
    base = tmp_path_factory.mktemp("kueuectl")
    running = Pykueue(base / "data", base / "kubeconfig").start()
    try:
        yield running
    finally:
        running.stop()


def kueue(
    server: Pykueue, *args: str, input: str | None = None, check: bool = True, kubeconfig: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``kubectl kueue <args>``: kubectl looks the plugin up on PATH."""
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig or server.kubeconfig),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    result = subprocess.run(
        [kubectl_binary(), "kueue", *args], input=input, capture_output=True, text=True, env=env, timeout=60
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"kubectl kueue {' '.join(args)} failed ({result.returncode}):\n"
            f"stdout: {result.stdout}\nstderr: {result.stderr}"
        )
    return result


def get_json(server: Pykueue, *args: str) -> dict[str, Any]:
    return dict(json.loads(server.kubectl("get", *args, "-o", "json").stdout))


def table(text: str) -> list[dict[str, str]]:
    """Parse a kubectl-style table (columns three or more spaces apart, cells may be empty)."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [0] + [i for i in range(2, len(header)) if header[i] != " " and header[i - 2 : i] == "  "]
    ends = [*starts[1:], None]
    names = [header[s:e].strip() for s, e in zip(starts, ends, strict=True)]
    return [{n: line[s:e].strip() for n, s, e in zip(names, starts, ends, strict=True)} for line in lines[1:]]


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_create_verbs_and_their_errors(server: Pykueue) -> None:
    assert (
        kueue(
            server,
            "create",
            "resourceflavor",
            "rf-a",
            "--node-labels",
            "zone=a",
            "--node-taints",
            "dedicated=ml:NoSchedule",
        ).stdout
        == "resourceflavor.kueue.x-k8s.io/rf-a created\n"
    )
    assert get_json(server, "resourceflavor", "rf-a")["spec"] == {
        "nodeLabels": {"zone": "a"},
        "nodeTaints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}],
    }
    out = kueue(
        server,
        "create",
        "clusterqueue",
        "cq-a",
        "--cohort",
        "team",
        "--queuing-strategy",
        "StrictFIFO",
        "--nominal-quota",
        "rf-a:cpu=4;memory=8Gi",
        "--borrowing-limit",
        "rf-a:cpu=2",
        "--preemption-within-cluster-queue",
        "LowerPriority",
        "-o",
        "yaml",
    ).stdout
    assert yaml.safe_load(out)["metadata"]["name"] == "cq-a"
    spec = get_json(server, "clusterqueue", "cq-a")["spec"]
    assert spec["cohortName"] == "team"
    assert spec["queueingStrategy"] == "StrictFIFO"
    assert spec["preemption"]["withinClusterQueue"] == "LowerPriority"
    resources = [{"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2"}, {"name": "memory", "nominalQuota": "8Gi"}]
    assert spec["resourceGroups"] == [
        {"coveredResources": ["cpu", "memory"], "flavors": [{"name": "rf-a", "resources": resources}]}
    ]
    assert (
        kueue(server, "create", "localqueue", "lq-a", "-c", "cq-a", "-n", "default").stdout
        == "localqueue.kueue.x-k8s.io/lq-a created\n"
    )

    # errors: one line, exit code 1, nothing created
    assert (
        one_line_error(kueue(server, "create", "localqueue", "lq-x", "-c", "nope", check=False))
        == 'Error from server (NotFound): clusterqueues.kueue.x-k8s.io "nope" not found'
    )
    assert (
        one_line_error(
            kueue(server, "create", "clusterqueue", "cq-bad", "--nominal-quota", "rf-a:cpu=lots", check=False)
        )
        == 'error: invalid --nominal-quota "rf-a:cpu=lots": "lots" is not a valid quantity for cpu'
    )
    assert one_line_error(
        kueue(server, "create", "clusterqueue", "cq-bad", "--nominal-quota", "cpu=4", check=False)
    ).startswith('error: invalid --nominal-quota "cpu=4"')
    invalid = kueue(
        server,
        "create",
        "clusterqueue",
        "cq-bad",
        "--nominal-quota",
        "rf-a:cpu=1",
        "--queuing-strategy",
        "Sometimes",
        check=False,
    )
    assert one_line_error(invalid).startswith("Error from server (Invalid)")
    gone = server.kubectl("get", "clusterqueue", "cq-bad", check=False)
    assert gone.returncode == 1
    assert kueue(server, "create", "localqueue", "lq-x", "-c", "nope", "--ignore-unknown-cq").returncode == 0
    dry = kueue(server, "create", "resourceflavor", "rf-dry", "--dry-run", "server").stdout
    assert dry == "resourceflavor.kueue.x-k8s.io/rf-dry created (server dry run)\n"
    assert server.kubectl("get", "resourceflavor", "rf-dry", check=False).returncode == 1


def _queue(server: Pykueue, name: str, cpu: int, strategy: str = "BestEffortFIFO") -> None:
    kueue(server, "create", "resourceflavor", f"{name}-rf")
    kueue(
        server,
        "create",
        "clusterqueue",
        name,
        "--nominal-quota",
        f"{name}-rf:cpu={cpu}",
        "--queuing-strategy",
        strategy,
    )
    kueue(server, "create", "localqueue", f"{name}-lq", "-c", name)


def _admitted(server: Pykueue, name: str, namespace: str = "default") -> bool:
    wl = get_json(server, "workload", name, "-n", namespace)
    return any(c["type"] == "Admitted" and c["status"] == "True" for c in wl.get("status", {}).get("conditions", []))


def test_list_verbs_show_kueues_columns_and_positions(server: Pykueue) -> None:
    _queue(server, "cq-list", 1)
    server.kubectl("apply", "-f", "-", input=workload_yaml("list-holder", "cq-list-lq", 100))
    eventually_blocking(lambda: _admitted(server, "list-holder"))
    for name, priority in (("list-low", 1), ("list-high", 50)):
        server.kubectl("create", "-f", "-", input=workload_yaml(name, "cq-list-lq", priority))

    def cq_row() -> dict[str, str] | None:
        row = {r["NAME"]: r for r in table(kueue(server, "list", "clusterqueue").stdout)}["cq-list"]
        return row if (row["PENDING WORKLOADS"], row["ACTIVE"]) == ("2", "true") else None

    row = eventually_blocking(cq_row)  # the status says both wait: the engine has queued them
    assert isinstance(row, dict)
    assert list(row) == ["NAME", "COHORT", "PENDING WORKLOADS", "ADMITTED WORKLOADS", "ACTIVE", "AGE"]
    assert row["ADMITTED WORKLOADS"] == "1"
    assert list(table(kueue(server, "list", "cq").stdout)[0]) == list(row)
    lqs = table(kueue(server, "list", "localqueue", "-A").stdout)
    assert list(lqs[0]) == ["NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING WORKLOADS", "ADMITTED WORKLOADS", "AGE"]
    assert any(r["NAME"] == "cq-list-lq" and r["CLUSTERQUEUE"] == "cq-list" for r in lqs)
    rfs = table(kueue(server, "list", "resourceflavor").stdout)
    assert list(rfs[0]) == ["NAME", "NODE LABELS", "AGE"]

    rows = {r["NAME"]: r for r in table(kueue(server, "list", "workload", "--localqueue", "cq-list-lq").stdout)}
    assert list(next(iter(rows.values()))) == [
        "NAME",
        "JOB TYPE",
        "JOB NAME",
        "LOCALQUEUE",
        "CLUSTERQUEUE",
        "STATUS",
        "POSITION IN QUEUE",
        "EXEC TIME",
        "AGE",
    ]
    assert (rows["list-high"]["STATUS"], rows["list-high"]["POSITION IN QUEUE"]) == ("PENDING", "0")
    assert (rows["list-low"]["STATUS"], rows["list-low"]["POSITION IN QUEUE"]) == ("PENDING", "1")
    assert (rows["list-holder"]["STATUS"], rows["list-holder"]["POSITION IN QUEUE"]) == ("ADMITTED", "")
    assert rows["list-holder"]["CLUSTERQUEUE"] == "cq-list"
    wide = {r["NAME"]: r for r in table(kueue(server, "list", "wl", "-q", "cq-list-lq", "-o", "wide").stdout)}
    assert wide["list-high"]["PRIORITY"] == "50"
    pending = json.loads(
        kueue(server, "list", "workload", "--status", "pending", "-q", "cq-list-lq", "-o", "json").stdout
    )
    assert pending["kind"] == "List"
    assert sorted(i["metadata"]["name"] for i in pending["items"]) == ["list-high", "list-low"]
    everywhere = table(kueue(server, "list", "workload", "-A", "-q", "cq-list-lq").stdout)
    assert {r["NAMESPACE"] for r in everywhere} == {"default"}
    bad = kueue(server, "list", "workload", "--status", "sleeping", check=False)
    assert one_line_error(bad).startswith("error: invalid status value (sleeping)")
    assert one_line_error(kueue(server, "list", "cq", "-o", "toml", check=False)).startswith(
        'error: unable to match a printer suitable for the output format "toml"'
    )


def test_stop_and_resume(server: Pykueue) -> None:
    _queue(server, "cq-stop", 4)
    server.kubectl("apply", "-f", "-", input=workload_yaml("stop-me", "cq-stop-lq", 1))
    eventually_blocking(lambda: _admitted(server, "stop-me"))
    assert kueue(server, "stop", "workload", "stop-me").stdout == "workload.kueue.x-k8s.io/stop-me stopped\n"
    assert get_json(server, "workload", "stop-me")["spec"]["active"] is False
    eventually_blocking(lambda: not _admitted(server, "stop-me"))
    kueue(server, "resume", "workload", "stop-me")
    assert get_json(server, "workload", "stop-me")["spec"]["active"] is True
    eventually_blocking(lambda: _admitted(server, "stop-me"))

    kueue(server, "stop", "localqueue", "cq-stop-lq", "--keep-already-running")
    assert get_json(server, "localqueue", "cq-stop-lq")["spec"]["stopPolicy"] == "Hold"
    kueue(server, "resume", "lq", "cq-stop-lq")
    assert get_json(server, "localqueue", "cq-stop-lq")["spec"]["stopPolicy"] == "None"

    assert kueue(server, "stop", "clusterqueue", "cq-stop").stdout == "clusterqueue.kueue.x-k8s.io/cq-stop stopped\n"
    assert get_json(server, "clusterqueue", "cq-stop")["spec"]["stopPolicy"] == "HoldAndDrain"
    eventually_blocking(
        lambda: {r["NAME"]: r for r in table(kueue(server, "list", "cq").stdout)}["cq-stop"]["ACTIVE"] == "false"
    )
    eventually_blocking(lambda: not _admitted(server, "stop-me"))  # drained
    kueue(server, "resume", "clusterqueue", "cq-stop")
    eventually_blocking(lambda: _admitted(server, "stop-me"))
    assert (
        one_line_error(kueue(server, "stop", "clusterqueue", "nope", check=False))
        == 'Error from server (NotFound): clusterqueues.kueue.x-k8s.io "nope" not found'
    )


JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: %(name)s, namespace: default, labels: {kueue.x-k8s.io/queue-name: %(queue)s}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "sleep 60"]
        resources: {requests: {cpu: "1"}}
"""


def test_delete_workload_list_pods_and_passthrough(server: Pykueue) -> None:
    _queue(server, "cq-del", 4)
    server.kubectl("apply", "-f", "-", input=JOB % {"name": "del-job", "queue": "cq-del-lq"})

    def workload_of_job() -> str | None:
        items = get_json(server, "workloads")["items"]
        return next(
            (
                w["metadata"]["name"]
                for w in items
                if any(o["name"] == "del-job" for o in w["metadata"].get("ownerReferences", []))
            ),
            None,
        )

    wl_name = eventually_blocking(workload_of_job)
    assert isinstance(wl_name, str)
    eventually_blocking(lambda: _admitted(server, wl_name))
    pods = eventually_blocking(lambda: table(kueue(server, "list", "pods", "--for", "job/del-job").stdout or "x\n"))
    assert isinstance(pods, list)
    assert list(pods[0]) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert pods[0]["NAME"].startswith("del-job-")
    assert one_line_error(kueue(server, "list", "pods", check=False)) == 'error: required flag(s) "for" not set'

    # pass-through: exactly kubectl's answer
    assert (
        kueue(server, "get", "cq", "cq-del").stdout.splitlines()[0]
        == server.kubectl("get", "cq", "cq-del").stdout.splitlines()[0]
    )
    assert "cq-del" in kueue(server, "describe", "clusterqueue", "cq-del").stdout

    cancelled = kueue(server, "delete", "workload", wl_name, input="n\n")
    assert "jobs.batch/del-job associated with the default/" in cancelled.stdout
    assert "Deletion is canceled" in cancelled.stdout
    assert server.kubectl("get", "job", "del-job").returncode == 0
    assert kueue(server, "delete", "workload", wl_name, "--yes").stdout == "jobs.batch/del-job deleted\n"
    eventually_blocking(lambda: server.kubectl("get", "workload", wl_name, check=False).returncode == 1)
    server.kubectl("apply", "-f", "-", input=workload_yaml("lonely", "cq-del-lq", 1))
    assert kueue(server, "delete", "wl", "lonely").stdout == "workload.kueue.x-k8s.io/lonely deleted\n"
    assert server.kubectl("get", "workload", "lonely", check=False).returncode == 1
    missing = kueue(server, "delete", "workload", "never-was", check=False)
    assert one_line_error(missing) == 'Error from server (NotFound): workloads.kueue.x-k8s.io "never-was" not found'


def test_version_kubeconfig_and_context(server: Pykueue, tmp_path: Path) -> None:
    assert kueue(server, "version").stdout == "Client Version: 0.1.0\n"
    server.kubectl("create", "namespace", "team-ctx")
    config = yaml.safe_load(server.kubeconfig.read_text())
    base = config["contexts"][0]
    config["contexts"].append({"name": "team", "context": {**base["context"], "namespace": "team-ctx"}})
    config["contexts"].append({"name": "broken", "context": {**base["context"], "cluster": "nowhere"}})
    other = tmp_path / "other-kubeconfig"
    other.write_text(yaml.safe_dump(config))
    elsewhere = tmp_path / "unused"
    elsewhere.write_text("not: a kubeconfig\n")
    kueue(server, "create", "clusterqueue", "cq-ctx", "--kubeconfig", str(other))
    # the context's namespace is the default; --kubeconfig wins over $KUBECONFIG
    created = kueue(
        server,
        "create",
        "lq",
        "lq-ctx",
        "-c",
        "cq-ctx",
        "--kubeconfig",
        str(other),
        "--context",
        "team",
        kubeconfig=elsewhere,
    )
    assert created.stdout == "localqueue.kueue.x-k8s.io/lq-ctx created\n"
    assert get_json(server, "localqueue", "lq-ctx", "-n", "team-ctx")["spec"]["clusterQueue"] == "cq-ctx"
    rows = table(kueue(server, "list", "lq", "--kubeconfig", str(other), "--context", "team").stdout)
    assert [r["NAME"] for r in rows] == ["lq-ctx"]
    before_the_verb = table(kueue(server, "-n", "team-ctx", "list", "localqueue").stdout)  # kubectl-style
    assert [r["NAME"] for r in before_the_verb] == ["lq-ctx"]
    assert one_line_error(
        kueue(server, "list", "lq", "--kubeconfig", str(other), "--context", "broken", check=False)
    ).startswith("error: cannot load the kubeconfig")
    assert one_line_error(
        kueue(server, "list", "lq", "--kubeconfig", str(tmp_path / "absent"), check=False)
    ).startswith("error: cannot load the kubeconfig")


def test_explain_through_kubectl(server: Pykueue) -> None:
    _queue(server, "cq-why", 2)
    server.kubectl("apply", "-f", "-", input=workload_yaml("why-holder", "cq-why-lq", 10, cpu="2"))
    eventually_blocking(lambda: _admitted(server, "why-holder"))
    server.kubectl("apply", "-f", "-", input=workload_yaml("why-waiting", "cq-why-lq", 1, cpu="1"))
    text = kueue(server, "explain", "workload", "why-waiting").stdout
    assert text.splitlines()[0] == "Workload default/why-waiting: pending"
    assert "Flavor cq-why-rf, cpu: requests 1; ClusterQueue cq-why uses 2 of nominal 2; 0 available — 1 short." in text
    assert "held by default/why-holder (2 in ClusterQueue cq-why, priority 10)" in text
    assert "Smallest change: admitted when 1 cpu are freed in ClusterQueue cq-why (flavor cq-why-rf)." in text
    # the engine ran with what pykueue up runs with, which it stored where a pykueue install keeps it
    assert text.splitlines()[-1] == (
        "Scheduler configuration: ConfigMap kueue-system/pykueue-manager-config (fair sharing off)"
    )
    answer = json.loads(kueue(server, "explain", "workload", "why-holder", "-o", "json").stdout)
    assert answer["state"] == "admitted"
    assert answer["admission"]["clusterQueue"] == "cq-why"
    assert (
        one_line_error(kueue(server, "explain", "workload", "nope", check=False))
        == 'Error from server (NotFound): workloads.kueue.x-k8s.io "nope" not found'
    )
    # and as pykueue's own command
    own = subprocess.run(
        [str(BIN / "pykueue"), "explain", "workload", "why-waiting", "--kubeconfig", str(server.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    # the same answer, but for how far off the estimated start is from each command's "now"
    def same(out: str) -> str:
        return re.sub(r"\(in [0-9.]+[smhd]\)", "(in …)", out)

    assert "  Estimated start: " in text
    assert same(own.stdout) == same(text)
