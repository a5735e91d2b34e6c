"""Pods of ``process`` nodes through a real ``pykueue up``: contained, and never run twice across a kill -9."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Pykueue
from tests.e2e.k8s import cpu_queue, get, items, job_manifest
from tests.waiting import eventually_blocking

ROOT = os.geteuid() == 0


def _job_pods(server: Pykueue, job: str) -> list[dict[str, Any]]:
    return items(server, "pods", "-l", f"batch.kubernetes.io/job-name={job}")


def _succeeded(server: Pykueue, job: str) -> bool:
    status = get(server, "job", job).get("status", {})
    return bool(status.get("succeeded"))


@pytest.mark.skipif(not ROOT, reason="switching users needs root; as another user pods run as that user")
def test_a_pod_is_not_root_and_cannot_read_the_data_dir(pykueue: Pykueue) -> None:
    pykueue.kubectl("apply", "-f", "-", input=cpu_queue(4))
    data = pykueue.data_dir
    pykueue.kubectl(
        "create",
        "-f",
        "-",
        input=job_manifest(
            "peek",
            "lq",
            command=(
                f"id -u; cat {data}/token 2>/dev/null && echo token-read || echo token-denied; "
                f"cat {data}/state.db >/dev/null 2>&1 && echo db-read || echo db-denied"
            ),
        ),
    )
    eventually_blocking(lambda: _succeeded(pykueue, "peek"), within=90)
    uid, token, db = pykueue.kubectl("logs", "job/peek").stdout.split()
    assert uid != "0"
    assert (token, db) == ("token-denied", "db-denied")


def test_root_pods_are_refused_unless_allowed(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("nodes:\n  - name: box\n    kind: process\n    user: root\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pykueue",
            "up",
            "--port",
            "0",
            "--nodes",
            str(nodes),
            "--kubeconfig",
            str(tmp_path / "kc"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if ROOT:
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [
            "error: node box: pods would run as root, with the power to read pykueue's secrets and change the "
            "machine: pass --allow-root-pods if that is really meant"
        ]
    else:
        assert result.returncode == 2
        assert "cannot switch users" in result.stderr
    assert not (tmp_path / "kc").exists()


def test_a_kill_9_of_the_server_never_runs_a_jobs_command_twice(tmp_path: Path) -> None:
    server = Pykueue(tmp_path / "data", tmp_path / "kubeconfig").start()
    try:
        server.kubectl("apply", "-f", "-", input=cpu_queue(4))
        server.kubectl(
            "create", "-f", "-", input=job_manifest("once", "lq", command="echo started; sleep 6; echo finished")
        )

        def running() -> bool:
            pods = _job_pods(server, "once")
            return len(pods) == 1 and pods[0].get("status", {}).get("phase") == "Running"

        eventually_blocking(running, within=90)
        eventually_blocking(lambda: "started" in server.kubectl("logs", "job/once", check=False).stdout, within=30)
        server.kill9()  # the container runs on under its shim
        server.start()
        eventually_blocking(lambda: _succeeded(server, "once"), within=90)
        pods = _job_pods(server, "once")
        assert len(pods) == 1, "the Job started no replacement: its command ran once"
        assert get(server, "job", "once")["status"].get("failed") is None
        assert server.kubectl("logs", "job/once").stdout == "started\nfinished\n"
    finally:
        server.stop()
