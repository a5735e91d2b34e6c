"""``pykueue controller``'s metrics port end to end: HTTPS, bearer tokens reviewed by the API server.

Real processes: ``pykueue up --no-kueue`` (with a ``--token-auth-file`` identity standing for a
Prometheus service account, and an audit log) and ``pykueue controller`` against it. Scrapes go over
TLS as a ServiceMonitor with a bearer token sends them; the audit log shows the controller asking the
API server (TokenReview, SubjectAccessReview) once per token, not once per scrape. A mounted certificate
(``--metrics-cert-dir``) is served, and a renewed one from the next handshake.
"""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pykueue.webhooks.certs import CertBundle, new_bundle
from tests.e2e.controller_proc import Controller, free_port
from tests.e2e.harness import Pykueue
from tests.waiting import eventually_blocking

NAMESPACE = "pykueue-system"
METRICS_LINE = "pykueue controller metrics at "
PROMETHEUS = "system:serviceaccount:monitoring:prometheus"
PROMETHEUS_TOKEN = "prometheus-token-0123456789abcdef0123456789"
_INSECURE = ssl.create_default_context()
_INSECURE.check_hostname = False
_INSECURE.verify_mode = ssl.CERT_NONE  # the controller's self-signed certificate, as Kueue's ServiceMonitor skips it


def scrape(url: str, token: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30, context=_INSECURE) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def metrics_url(controller: Controller) -> str:
    def found() -> str | None:
        for line in controller.output:
            if line.startswith(METRICS_LINE):
                return line[len(METRICS_LINE) :].strip()
        return None

    url = eventually_blocking(found, within=30)
    assert isinstance(url, str)
    return url


def audit_events(log: Path, resource: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [
        e
        for e in events
        if (e.get("objectRef") or {}).get("resource") == resource and e.get("stage") == "ResponseComplete"
    ]


@pytest.fixture
def cluster(tmp_path: Path, kueue_crds_file: Path) -> Iterator[tuple[Pykueue, Path]]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{PROMETHEUS_TOKEN},{PROMETHEUS},uid-9,"system:serviceaccounts"\n')
    audit = tmp_path / "audit.jsonl"
    server = Pykueue(
        tmp_path / "data",
        tmp_path / "kubeconfig",
        ["--no-kueue", "--audit-log", str(audit), "--token-auth-file", str(tokens)],
    ).start()
    try:
        server.kubectl("apply", "--server-side", "-f", str(kueue_crds_file))
        server.kubectl("create", "namespace", NAMESPACE)
        yield server, audit
    finally:
        server.stop()


def test_scrapes_are_https_and_reviewed_by_the_api_server(cluster: tuple[Pykueue, Path]) -> None:
    server, audit = cluster
    controller = Controller(server.kubeconfig, ["--no-leader-elect"]).start()
    try:
        url = metrics_url(controller)
        assert url.startswith("https://")
        status, text = scrape(url, PROMETHEUS_TOKEN)
        assert status == 200, text
        assert "# TYPE kueue_admission_attempts_total counter" in text
        assert scrape(url, None) == (401, "Unauthorized\n")
        assert scrape(url, "not-a-token") == (401, "Unauthorized\n")
        assert scrape(url, server.token)[0] == 200  # the admin: every authenticated user may (no RBAC there)
        for _ in range(3):
            assert scrape(url, PROMETHEUS_TOKEN)[0] == 200
            assert scrape(url, "not-a-token")[0] == 401
        # plain HTTP is not served: the TLS port drops the connection
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError, urllib.error.URLError)):
            urllib.request.urlopen(url.replace("https://", "http://"), timeout=10)

        # one TokenReview per token (three), one SubjectAccessReview per user (two): the rest from the caches
        token_reviews = eventually_blocking(lambda: len(audit_events(audit, "tokenreviews")) == 3 or None, within=10)
        assert token_reviews
        assert len(audit_events(audit, "tokenreviews")) == 3
        access_reviews = audit_events(audit, "subjectaccessreviews")
        assert len(access_reviews) == 2
        for event in [*audit_events(audit, "tokenreviews"), *access_reviews]:
            assert event["verb"] == "create"
            assert event["responseStatus"]["code"] == 201
            assert event["user"]["username"] == "kubernetes-admin"  # the controller's kubeconfig identity
    finally:
        controller.stop()


def test_unauthenticated_metrics_only_on_an_explicit_loopback_address(
    cluster: tuple[Pykueue, Path], tmp_path: Path
) -> None:
    server, audit = cluster
    config = tmp_path / "config.yaml"
    config.write_text(f"metrics:\n  bindAddress: 127.0.0.1:{free_port()}\n")
    controller = Controller(
        server.kubeconfig, ["--no-leader-elect", "--config", str(config), "--metrics-authentication=false"]
    ).start()
    try:
        url = metrics_url(controller)
        assert url.startswith("https://127.0.0.1:")
        status, text = scrape(url, None)
        assert status == 200
        assert "kueue_admission_attempts" in text
        assert audit_events(audit, "tokenreviews") == []
    finally:
        controller.stop()

    config.write_text("metrics:\n  bindAddress: :8443\n")
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "pykueue",
            "controller",
            "--kubeconfig",
            str(server.kubeconfig),
            "--config",
            str(config),
            "--metrics-authentication=false",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "error: --metrics-authentication=false requires metrics.bindAddress to be an explicit loopback IP and "
        "port (for example 127.0.0.1:8443 or [::1]:8443), got host (every address)"
    )


@pytest.mark.parametrize("port", ["metrics", "webhook"])
def test_a_mounted_certificate_is_served_and_reloaded(cluster: tuple[Pykueue, Path], tmp_path: Path, port: str) -> None:
    """cert-manager's files: ``--metrics-cert-dir``, and ``--cert-dir`` with internal certificate management off."""
    server, _ = cluster
    certs = tmp_path / "certs"
    certs.mkdir()

    def mount(bundle: CertBundle) -> None:
        (certs / "tls.crt").write_bytes(bundle.tls_crt)
        (certs / "tls.key").write_bytes(bundle.tls_key)

    def presented(url: str) -> bytes:
        host, port = url.removeprefix("https://").split("/")[0].rsplit(":", 1)
        return ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate((host, int(port))))

    first, renewed = new_bundle(("127.0.0.1",)), new_bundle(("127.0.0.1",))
    mount(first)
    if port == "metrics":
        args = ["--metrics-cert-dir", str(certs)]
    else:
        config = tmp_path / "config.yaml"
        config.write_text("internalCertManagement:\n  enable: false\n")
        args = ["--config", str(config), "--cert-dir", str(certs)]
    controller = Controller(server.kubeconfig, ["--no-leader-elect", *args]).start()
    try:
        url = metrics_url(controller) if port == "metrics" else controller.webhook_url
        assert presented(url) == ssl.PEM_cert_to_DER_cert(first.tls_crt.decode())
        mount(renewed)  # cert-manager renewed it: served from the next handshake, without a restart
        wanted = ssl.PEM_cert_to_DER_cert(renewed.tls_crt.decode())
        assert eventually_blocking(lambda: presented(url) == wanted or None, within=40)
        if port == "metrics":
            assert scrape(url, PROMETHEUS_TOKEN)[0] == 200
    finally:
        controller.stop()
