"""Least privilege, checked end to end: ``pykueue controller`` runs as the ServiceAccount identity
``pykueue install`` creates (a token from ``--token-auth-file``), the quickstart runs through it, and
every request the controller made (``--audit-log``) is allowed by the rendered RBAC, which grants
nothing the run left unused beyond the commented allow-list."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from pykueue.install import install_options
from pykueue.install.rbac import EXPECTED_UNUSED, rbac_objects
from pykueue.install.rbac_check import check_audit, read_audit_log
from tests.e2e.controller_proc import Controller
from tests.e2e.harness import QUICKSTART, Pykueue
from tests.waiting import eventually_blocking

SA = "system:serviceaccount:pykueue-system:pykueue-controller-manager"
INTEGRATIONS = "batch/job,pod"
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "queued-pod", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "command": ["true"], "resources": {"requests": {"cpu": "1"}}}
        ],
    },
}


def test_every_request_of_the_controller_is_allowed_and_every_grant_used(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(
        f'controller-token-0123456789abcdef,{SA},uid-1,"system:serviceaccounts,system:serviceaccounts:pykueue-system"\n'
    )
    audit = tmp_path / "audit.log"
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        yaml.safe_dump(
            {
                "nodes": [
                    {
                        "name": "sim",
                        "kind": "simulated",
                        "defaultDuration": 2,
                        "capacity": {"cpu": "8", "memory": "32Gi"},
                    }
                ]
            }
        )
    )
    server = Pykueue(
        tmp_path / "data",
        tmp_path / "kubeconfig",
        ["--no-kueue", "--nodes", str(nodes), "--audit-log", str(audit), "--token-auth-file", str(tokens)],
    ).start()
    controller = None
    try:
        install = subprocess.run(
            [sys.executable, "-m", "pykueue", "install", "--integrations", INTEGRATIONS],
            capture_output=True,
            text=True,
            check=True,
        )
        server.kubectl("apply", "--server-side", "-f", "-", input=install.stdout)
        kubeconfig = yaml.safe_load(server.kubeconfig.read_text())
        for user in kubeconfig["users"]:
            user["user"] = {"token": "controller-token-0123456789abcdef"}
        as_sa = tmp_path / "controller.kubeconfig"
        as_sa.write_text(yaml.safe_dump(kubeconfig))
        controller = Controller(as_sa, ["--config", str(_config(tmp_path))])
        controller.start()
        assert controller.wait_leading(60)
        server.kubectl("apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
        for _ in range(3):
            server.kubectl("create", "-f", str(QUICKSTART / "sample-job.yaml"))

        def finished() -> bool:
            jobs = json.loads(server.kubectl("get", "jobs", "-n", "default", "-o", "json").stdout)["items"]
            return len(jobs) == 3 and all(
                any(
                    c["type"] == "Complete" and c["status"] == "True"
                    for c in (j.get("status") or {}).get("conditions") or []
                )
                for j in jobs
            )

        eventually_blocking(finished, within=120, what="the three quickstart Jobs complete")
        # a plain pod with a queue label: gated by the pod webhook, ungated by the controller once admitted
        server.kubectl("create", "-f", "-", input=json.dumps(POD))

        def pod_done() -> bool:
            pod = json.loads(server.kubectl("get", "pod", "-n", "default", "queued-pod", "-o", "json").stdout)
            return (pod.get("status") or {}).get("phase") == "Succeeded"

        eventually_blocking(pod_done, within=120, what="the queued pod succeeds")
        name = json.loads(server.kubectl("get", "jobs", "-n", "default", "-o", "json").stdout)["items"][0]
        server.kubectl("delete", "job", "-n", "default", name["metadata"]["name"])
        # the queues go: the controller lifts their resource-in-use finalizers
        server.kubectl("delete", "pod", "-n", "default", "queued-pod")
        server.kubectl("delete", "jobs", "-n", "default", "--all")
        server.kubectl("delete", "-f", str(QUICKSTART / "cluster-queue.yaml"), "--timeout=90s")
    finally:
        if controller is not None:
            controller.stop()
        server.stop()
    events = read_audit_log(audit.read_bytes().splitlines())
    rbac = rbac_objects(install_options(integrations=INTEGRATIONS.split(",")))
    report = check_audit(rbac, events, SA, EXPECTED_UNUSED)
    print(
        f"{report.requests} requests; denied {[str(r) for r in report.denied]}; "
        f"unused {[str(g) for g in report.unused]}"
    )
    assert report.requests > 50
    assert [str(r) for r in report.denied] == []
    assert [str(g) for g in report.unused] == []


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(f"integrations:\n  frameworks: [{INTEGRATIONS}]\n")
    return path
