"""``pykueue up --audit-log`` and ``--token-auth-file``: who did what, one audit event per request.

A kubectl session as the admin and a second identity from a kube-apiserver token file (a controller's
service account) leave ``audit.k8s.io/v1`` events with their user, kube verb, objectRef and response code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Pykueue
from tests.waiting import eventually_blocking

SERVICE_ACCOUNT = "system:serviceaccount:pykueue-system:pykueue-controller-manager"


@pytest.fixture
def audited(tmp_path: Path) -> Iterator[tuple[Pykueue, Path]]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(
        f'controller-token,{SERVICE_ACCOUNT},uid-42,"system:serviceaccounts,system:serviceaccounts:pykueue-system"\n'
    )
    log = tmp_path / "audit.jsonl"
    server = Pykueue(
        tmp_path / "data",
        tmp_path / "kubeconfig",
        ["--no-kueue", "--audit-log", str(log), "--token-auth-file", str(tokens)],
    ).start()
    try:
        yield server, log
    finally:
        server.stop()


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_audit_log_records_a_kubectl_session_and_a_second_identity(audited: tuple[Pykueue, Path]) -> None:
    cluster, log = audited
    cluster.kubectl("create", "configmap", "audited", "--from-literal=a=b")
    cluster.kubectl("label", "configmap", "audited", "x=y")
    cluster.kubectl("get", "configmap", "audited", "-o", "json")
    cluster.kubectl("get", "configmaps", "-n", "kube-system")
    cluster.kubectl("delete", "configmap", "audited")
    cluster.kubectl("get", "leases", "-n", "default", "--token", "controller-token")
    refused = cluster.kubectl("get", "pods", "--token", "not-a-token", check=False)
    assert refused.returncode != 0

    events = eventually_blocking(
        lambda: [e for e in _events(log) if (e.get("objectRef") or {}).get("resource") == "pods"]
    )
    assert events
    everything = _events(log)
    for event in everything:
        assert event["apiVersion"] == "audit.k8s.io/v1"
        assert event["kind"] == "Event"
        assert event["level"] == "Metadata"
        assert event["stage"] in ("ResponseComplete", "ResponseStarted")
        assert event["requestURI"].startswith("/")
    configmaps = [
        (e["verb"], e["objectRef"].get("name", ""), e["objectRef"]["namespace"], e["responseStatus"]["code"])
        for e in everything
        if (e.get("objectRef") or {}).get("resource") == "configmaps"
    ]
    assert ("create", "", "default", 201) in configmaps
    assert ("patch", "audited", "default", 200) in configmaps
    assert ("get", "audited", "default", 200) in configmaps
    assert ("list", "", "kube-system", 200) in configmaps
    assert ("delete", "audited", "default", 200) in configmaps
    created = next(e for e in everything if e["verb"] == "create" and e["objectRef"]["resource"] == "configmaps")
    assert created["user"]["username"] == "kubernetes-admin"
    assert created["objectRef"] == {
        "resource": "configmaps",
        "namespace": "default",
        "apiVersion": "v1",
    }
    assert created["requestURI"].startswith("/api/v1/namespaces/default/configmaps")

    leases = [e for e in everything if (e.get("objectRef") or {}).get("resource") == "leases"]
    assert [e["verb"] for e in leases] == ["list"]
    assert leases[0]["user"] == {
        "username": SERVICE_ACCOUNT,
        "uid": "uid-42",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:pykueue-system", "system:authenticated"],
    }
    assert leases[0]["objectRef"]["apiGroup"] == "coordination.k8s.io"
    assert leases[0]["responseStatus"]["code"] == 200
    pods = [e for e in everything if (e.get("objectRef") or {}).get("resource") == "pods"]
    assert {e["responseStatus"]["code"] for e in pods} == {401}
    assert {e["user"]["username"] for e in pods} == {"system:anonymous"}


def test_a_watch_is_logged_when_it_starts_and_when_it_ends(audited: tuple[Pykueue, Path]) -> None:
    cluster, log = audited
    cluster.kubectl("get", "configmaps", "--watch", "--request-timeout=2s", check=False)
    watches = eventually_blocking(
        lambda: [e for e in _events(log) if e["verb"] == "watch" and e["stage"] == "ResponseComplete"]
    )
    assert isinstance(watches, list)
    started = [e for e in _events(log) if e["verb"] == "watch" and e["stage"] == "ResponseStarted"]
    assert {e["auditID"] for e in watches} <= {e["auditID"] for e in started}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("tok\n", "tokens.csv:1: expected token,user,uid"),
        ("a,alice,1\na,bob,2\n", "tokens.csv:2: duplicate token"),
    ],
)
def test_a_bad_token_file_is_a_one_line_error(tmp_path: Path, content: str, message: str) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(content)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pykueue",
            "up",
            "--no-kueue",
            "--port",
            "0",
            "--token-auth-file",
            str(tokens),
            "--kubeconfig",
            str(tmp_path / "kc"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
