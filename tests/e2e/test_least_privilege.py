"""Least privilege over HTTPS: pykueue's controllers run as the ServiceAccount identity ``pykueue
install`` creates (a token of ``pykueue up --token-auth-file``) against ``pykueue up --no-kueue`` with
the install applied, the quickstart runs through them, and the server's audit log (``--audit-log``)
shows every request they made allowed by the rendered RBAC, and every grant used except the
commented allow-list and the grants of ``pykueue controller``'s own duties (Lease, certificate Secret,
CA injection), which the controllers alone do not exercise. The webhook configurations are left out:
no webhook server runs here, and the controllers hold unlabelled-suspended jobs back themselves."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from pykueue.client import HttpClient
from pykueue.controllers.config import IntegrationsConfig, KueueConfig
from pykueue.controllers.manager import ControllerManager
from pykueue.install import install_options
from pykueue.install.rbac import EXPECTED_UNUSED, rbac_objects
from pykueue.install.rbac_check import check_audit, read_audit_log
from tests.e2e.harness import QUICKSTART, Pykueue

SA = "system:serviceaccount:pykueue-system:pykueue-controller-manager"
TOKEN = "controller-token-0123456789abcdef"
CONTROLLER_COMMAND_DUTIES = [
    ("get", "coordination.k8s.io", "leases"),
    ("update", "coordination.k8s.io", "leases"),
    ("get", "", "secrets"),
    ("get", "admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ("update", "admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ("get", "admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("update", "admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("list", "apiextensions.k8s.io", "customresourcedefinitions"),
    ("get", "apiextensions.k8s.io", "customresourcedefinitions"),
    ("update", "apiextensions.k8s.io", "customresourcedefinitions"),
]
"""What ``pykueue controller`` does beyond the controllers (leader election, internal certificates)."""


def _jobs_complete(server: Pykueue) -> bool:
    jobs = json.loads(server.kubectl("get", "jobs", "-n", "default", "-o", "json").stdout)["items"]
    return len(jobs) == 2 and all(
        any(c["type"] == "Complete" and c["status"] == "True" for c in (j.get("status") or {}).get("conditions") or [])
        for j in jobs
    )


async def _run_quickstart(server: Pykueue, kubeconfig: Path) -> None:
    client = HttpClient.from_kubeconfig(kubeconfig, field_manager="pykueue")
    config = KueueConfig(namespace="pykueue-system", integrations=IntegrationsConfig(frameworks=("batch/job",)))
    manager = ControllerManager(client, config)
    await manager.start()
    try:
        kubectl: Any = server.kubectl
        await asyncio.to_thread(kubectl, "apply", "-f", str(QUICKSTART / "cluster-queue.yaml"))
        for _ in range(2):
            await asyncio.to_thread(kubectl, "create", "-f", str(QUICKSTART / "sample-job.yaml"))
        deadline = asyncio.get_running_loop().time() + 120
        while not await asyncio.to_thread(_jobs_complete, server):
            assert asyncio.get_running_loop().time() < deadline, "the quickstart's jobs never completed"
            await asyncio.sleep(0.5)
        await asyncio.to_thread(kubectl, "delete", "jobs", "-n", "default", "--all")
        await asyncio.to_thread(kubectl, "delete", "-f", str(QUICKSTART / "cluster-queue.yaml"), "--timeout=90s")
    finally:
        await manager.stop()
        await client.close()


def test_the_controllers_requests_are_allowed_and_every_grant_used(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{TOKEN},{SA},uid-1,"system:serviceaccounts,system:serviceaccounts:pykueue-system"\n')
    audit = tmp_path / "audit.log"
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        yaml.safe_dump(
            {
                "nodes": [
                    {
                        "name": "sim",
                        "kind": "simulated",
                        "defaultDuration": 3,
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
    try:
        rendered = subprocess.run(
            [sys.executable, "-m", "pykueue", "install", "--integrations", "batch/job"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        objects = [d for d in yaml.safe_load_all(rendered) if d and not d["kind"].endswith("WebhookConfiguration")]
        server.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump_all(objects))
        kubeconfig = yaml.safe_load(server.kubeconfig.read_text())
        for user in kubeconfig["users"]:
            user["user"] = {"token": TOKEN}
        as_controller = tmp_path / "controller.kubeconfig"
        as_controller.write_text(yaml.safe_dump(kubeconfig))
        asyncio.run(_run_quickstart(server, as_controller))
    finally:
        server.stop()
    events = read_audit_log(audit.read_bytes().splitlines())
    rbac = rbac_objects(install_options(integrations=["batch/job"]))
    report = check_audit(rbac, events, SA, [*EXPECTED_UNUSED, *CONTROLLER_COMMAND_DUTIES])
    assert report.requests > 30
    assert [str(r) for r in report.denied] == []
    assert [str(g) for g in report.unused] == []
