"""External admission webhooks called by the embedded API server, as kube-apiserver calls them.

One ``pykueue up --no-kueue`` (a bare cluster: no in-process admission at all) and one webhook server
of the tests (aiohttp over TLS with its own CA, :mod:`tests.e2e.webhook_server`). Webhook
configurations are applied with the real kubectl and take effect at once; each test removes its own.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.harness import Pykueue, kubectl_binary
from tests.e2e.webhook_server import WebhookServer, json_patch, make_certificates
from tests.waiting import eventually_blocking

JSONDict = dict[str, Any]
CONFIGMAPS = [
    {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, webhooks: WebhookServer) -> Iterator[Pykueue]:
    """Stopped before the webhook server (its connections to it are closed first)."""
    base = tmp_path_factory.mktemp("webhooks")
    server = Pykueue(base / "data", base / "kubeconfig", ["--no-kueue"]).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def webhooks() -> Iterator[WebhookServer]:
    server = WebhookServer(dns_names=["whsvc.default.svc"]).start()
    try:
        yield server
    finally:
        server.stop()


def _hook(name: str, client_config: JSONDict, rules: list[JSONDict] | None = None, **extra: Any) -> JSONDict:
    return {
        "name": name,
        "clientConfig": client_config,
        "rules": rules or CONFIGMAPS,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def _apply(cluster: Pykueue, kind: str, name: str, hooks: list[JSONDict]) -> None:
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": hooks,
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(body))


def _url(webhooks: WebhookServer, path: str) -> JSONDict:
    return {"url": webhooks.url(path), "caBundle": webhooks.ca_bundle}


def _names(webhooks: WebhookServer, path: str) -> list[str]:
    return [r["request"]["name"] for r in webhooks.received.get(path, [])]


@pytest.fixture
def configurations(cluster: Pykueue) -> Iterator[list[tuple[str, str]]]:
    """(kind, name) of the configurations a test applied: deleted afterwards."""
    applied: list[tuple[str, str]] = []
    yield applied
    for kind, name in applied:
        cluster.kubectl("delete", kind.lower(), name, "--ignore-not-found")


def _create_configmap(
    cluster: Pykueue, name: str, *, check: bool = True, extra: tuple[str, ...] = (), **metadata: Any
) -> subprocess.CompletedProcess[str]:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **metadata}, "data": {"a": "b"}}
    return cluster.kubectl("create", "-f", "-", *extra, input=yaml.safe_dump(body), check=check)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_validating_webhook_denies_with_its_message_and_sees_the_request(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]]
) -> None:
    def names_start_with_ok(request: JSONDict) -> JSONDict:
        if request["name"].startswith("ok-"):
            return {"allowed": True}
        return {"allowed": False, "status": {"code": 403, "message": "a configmap's name must start with ok-"}}

    webhooks.routes["/validate-names"] = names_start_with_ok
    _apply(
        cluster,
        "ValidatingWebhookConfiguration",
        "names",
        [_hook("names.test.pykueue.io", _url(webhooks, "/validate-names"))],
    )
    configurations.append(("ValidatingWebhookConfiguration", "names"))

    refused = _create_configmap(cluster, "bad-name", check=False)
    assert refused.returncode != 0
    assert "Error from server (Forbidden)" in refused.stderr
    assert (
        'admission webhook "names.test.pykueue.io" denied the request: a configmap\'s name must start with ok-'
    ) in refused.stderr
    assert cluster.kubectl("get", "configmap", "bad-name", check=False).returncode != 0

    cluster.kubectl("create", "configmap", "ok-name", "--from-literal=a=b")
    review = webhooks.received["/validate-names"][-1]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    assert review["kind"] == "AdmissionReview"
    request = review["request"]
    assert request["operation"] == "CREATE"
    assert request["namespace"] == "default"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["requestKind"] == request["kind"]
    assert request["requestResource"] == request["resource"]
    assert request["userInfo"]["username"] == "kubernetes-admin"
    assert "system:masters" in request["userInfo"]["groups"]
    assert request["object"]["data"] == {"a": "b"}
    assert request["oldObject"] is None
    assert request["dryRun"] is False
    assert request["options"]["kind"] == "CreateOptions"

    cluster.kubectl("label", "configmap", "ok-name", "x=y")
    update = webhooks.received["/validate-names"][-1]["request"]
    assert update["operation"] == "UPDATE"
    assert update["oldObject"]["metadata"].get("labels") is None
    assert update["object"]["metadata"]["labels"] == {"x": "y"}


def test_mutating_webhook_patches_and_its_warnings_reach_kubectl(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]]
) -> None:
    def add_label(request: JSONDict) -> JSONDict:
        labels = request["object"]["metadata"].get("labels")
        operation = (
            {"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}
            if labels
            else {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}
        )
        return {**json_patch([operation]), "warnings": ["this configmap was labelled by a webhook"]}

    webhooks.routes["/mutate-label"] = add_label
    _apply(
        cluster,
        "MutatingWebhookConfiguration",
        "labeller",
        [_hook("labeller.test.pykueue.io", _url(webhooks, "/mutate-label"))],
    )
    configurations.append(("MutatingWebhookConfiguration", "labeller"))

    created = cluster.kubectl("create", "configmap", "mutated", "--from-literal=a=b")
    assert "Warning: this configmap was labelled by a webhook" in created.stderr
    stored = json.loads(cluster.kubectl("get", "configmap", "mutated", "-o", "json").stdout)
    assert stored["metadata"]["labels"] == {"mutated": "yes"}

    dry = cluster.kubectl("create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server", "-o", "json")
    assert json.loads(dry.stdout)["metadata"]["labels"] == {"mutated": "yes"}
    assert webhooks.received["/mutate-label"][-1]["request"]["dryRun"] is True
    assert webhooks.received["/mutate-label"][-1]["request"]["options"]["dryRun"] == ["All"]
    assert cluster.kubectl("get", "configmap", "dry", check=False).returncode != 0


def test_failure_policy_fail_refuses_and_ignore_skips_an_unreachable_webhook(
    cluster: Pykueue, configurations: list[tuple[str, str]]
) -> None:
    port = _free_port()
    down = {"url": f"https://127.0.0.1:{port}/validate"}
    _apply(
        cluster, "ValidatingWebhookConfiguration", "down", [_hook("down.test.pykueue.io", down, failurePolicy="Fail")]
    )
    configurations.append(("ValidatingWebhookConfiguration", "down"))
    refused = _create_configmap(cluster, "while-down", check=False)
    assert refused.returncode != 0
    assert "Error from server (InternalError)" in refused.stderr
    assert (
        "Internal error occurred: failed calling webhook "
        f'"down.test.pykueue.io": failed to call webhook: Post "https://127.0.0.1:{port}/validate?timeout=10s": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    ) in refused.stderr

    _apply(
        cluster, "ValidatingWebhookConfiguration", "down", [_hook("down.test.pykueue.io", down, failurePolicy="Ignore")]
    )
    cluster.kubectl("create", "configmap", "while-down", "--from-literal=a=b")


def test_a_webhook_is_trusted_only_through_its_ca_bundle(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]], tmp_path: Path
) -> None:
    webhooks.routes["/trusted"] = lambda request: {"allowed": True}
    other_ca = base64.b64encode(make_certificates(tmp_path, [])[0]).decode()  # it did not sign the webhook's
    _apply(
        cluster,
        "ValidatingWebhookConfiguration",
        "trust",
        [_hook("trust.test.pykueue.io", {"url": webhooks.url("/trusted"), "caBundle": other_ca})],
    )
    configurations.append(("ValidatingWebhookConfiguration", "trust"))
    refused = _create_configmap(cluster, "untrusted", check=False)
    assert (
        f'failed calling webhook "trust.test.pykueue.io": failed to call webhook: Post '
        f'"{webhooks.url("/trusted")}?timeout=10s": tls: failed to verify certificate: x509: certificate signed '
        "by unknown authority"
    ) in refused.stderr
    assert "/trusted" not in webhooks.received
    _apply(
        cluster, "ValidatingWebhookConfiguration", "trust", [_hook("trust.test.pykueue.io", _url(webhooks, "/trusted"))]
    )
    _create_configmap(cluster, "trusted")
    assert _names(webhooks, "/trusted") == ["trusted"]


def test_timeout_fails_the_call_and_a_waiting_webhook_does_not_stall_the_server(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]]
) -> None:
    webhooks.routes["/slow"] = lambda request: {"allowed": True}
    webhooks.delays["/slow"] = 4.0
    _apply(
        cluster,
        "ValidatingWebhookConfiguration",
        "slow",
        [_hook("slow.test.pykueue.io", _url(webhooks, "/slow"), timeoutSeconds=1)],
    )
    configurations.append(("ValidatingWebhookConfiguration", "slow"))
    refused = _create_configmap(cluster, "too-slow", check=False)
    assert refused.returncode != 0
    assert (
        f'failed calling webhook "slow.test.pykueue.io": failed to call webhook: Post '
        f'"{webhooks.url("/slow")}?timeout=1s": context deadline exceeded'
    ) in refused.stderr
    webhooks.delays.pop("/slow")

    # A webhook that has not answered yet: the write waits for it, every other request is served.
    gate = threading.Event()
    webhooks.gates["/gated"] = gate
    webhooks.routes["/gated"] = lambda request: {"allowed": True}
    _apply(
        cluster,
        "ValidatingWebhookConfiguration",
        "gated",
        [_hook("gated.test.pykueue.io", _url(webhooks, "/gated"), timeoutSeconds=30)],
    )
    configurations.append(("ValidatingWebhookConfiguration", "gated"))
    waiting = subprocess.Popen(
        [kubectl_binary(), "create", "configmap", "gated", "--from-literal=a=b"],
        env={**os.environ, "KUBECONFIG": str(cluster.kubeconfig)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        eventually_blocking(lambda: "gated" in _names(webhooks, "/gated"), within=30)
        assert waiting.poll() is None  # still waiting for the webhook's answer
        listed = cluster.kubectl("get", "namespaces", "-o", "name")
        assert "namespace/default" in listed.stdout
        assert waiting.poll() is None
        gate.set()
        assert waiting.wait(30) == 0, waiting.stderr.read() if waiting.stderr else ""
    finally:
        gate.set()
        if waiting.poll() is None:
            waiting.kill()
        waiting.communicate()
    cluster.kubectl("get", "configmap", "gated")


def test_namespace_and_object_selectors_choose_what_is_sent(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]]
) -> None:
    webhooks.routes["/selected"] = lambda request: {"allowed": True}
    _apply(
        cluster,
        "ValidatingWebhookConfiguration",
        "selected",
        [
            _hook(
                "selected.test.pykueue.io",
                _url(webhooks, "/selected"),
                namespaceSelector={"matchLabels": {"webhooks": "on"}},
                objectSelector={"matchExpressions": [{"key": "check", "operator": "In", "values": ["me"]}]},
            )
        ],
    )
    configurations.append(("ValidatingWebhookConfiguration", "selected"))
    cluster.kubectl("create", "namespace", "watched")
    cluster.kubectl("label", "namespace", "watched", "webhooks=on")
    cluster.kubectl("create", "namespace", "unwatched")
    for namespace in ("watched", "unwatched"):
        for name, labels in (("labelled", {"check": "me"}), ("plain", {})):
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}
            cluster.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(body))
    sent = [(r["request"]["namespace"], r["request"]["name"]) for r in webhooks.received.get("/selected", [])]
    assert sent == [("watched", "labelled")]
    # the old object's labels count too: removing the label is still seen by the webhook
    cluster.kubectl("label", "-n", "watched", "configmap", "labelled", "check-")
    assert webhooks.received["/selected"][-1]["request"]["operation"] == "UPDATE"
    assert len(webhooks.received["/selected"]) == 2


def test_a_status_subresource_rule_matches_status_writes_only(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]]
) -> None:
    webhooks.routes["/status"] = lambda request: {
        "allowed": False,
        "status": {"code": 422, "reason": "Invalid", "message": "status is read-only here"},
    }
    rules = [
        {
            "operations": ["UPDATE"],
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "resources": ["deployments/status"],
            "scope": "Namespaced",
        }
    ]
    _apply(
        cluster,
        "ValidatingWebhookConfiguration",
        "status-only",
        [_hook("status.test.pykueue.io", _url(webhooks, "/status"), rules)],
    )
    configurations.append(("ValidatingWebhookConfiguration", "status-only"))
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(deployment))
    cluster.kubectl("label", "deployment", "web", "tier=front")
    refused = cluster.kubectl(
        "patch",
        "deployment",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        '{"status":{"replicas":3}}',
        check=False,
    )
    assert refused.returncode != 0
    # the webhook's own code and reason (422 Invalid) reach kubectl, which words that as "invalid"
    assert refused.stderr.startswith("The request is invalid: ")
    assert 'admission webhook "status.test.pykueue.io" denied the request: status is read-only here' in refused.stderr
    request = webhooks.received["/status"][-1]["request"]
    assert request["subResource"] == "status"
    assert request["operation"] == "UPDATE"
    assert len(webhooks.received["/status"]) == 1


def test_reinvocation_if_needed_calls_an_earlier_webhook_again_after_a_later_change(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]]
) -> None:
    def record_labels(request: JSONDict) -> JSONDict:
        labels = sorted(request["object"]["metadata"].get("labels") or {})
        annotations = request["object"]["metadata"].get("annotations")
        value = ",".join(labels) or "none"
        operation = (
            {"op": "add", "path": "/metadata/annotations", "value": {"seen": value}}
            if not annotations
            else {"op": "add", "path": "/metadata/annotations/seen", "value": value}
        )
        return json_patch([operation])

    def add_label_b(request: JSONDict) -> JSONDict:
        labels = request["object"]["metadata"].get("labels")
        operation = (
            {"op": "add", "path": "/metadata/labels/b", "value": "1"}
            if labels
            else {"op": "add", "path": "/metadata/labels", "value": {"b": "1"}}
        )
        return json_patch([operation])

    webhooks.routes["/first"] = record_labels
    webhooks.routes["/second"] = add_label_b
    _apply(
        cluster,
        "MutatingWebhookConfiguration",
        "a-first",
        [_hook("first.test.pykueue.io", _url(webhooks, "/first"), reinvocationPolicy="IfNeeded")],
    )
    _apply(
        cluster,
        "MutatingWebhookConfiguration",
        "b-second",
        [_hook("second.test.pykueue.io", _url(webhooks, "/second"))],
    )
    configurations.extend([("MutatingWebhookConfiguration", "a-first"), ("MutatingWebhookConfiguration", "b-second")])
    cluster.kubectl("create", "configmap", "reinvoked", "--from-literal=a=b")
    stored = json.loads(cluster.kubectl("get", "configmap", "reinvoked", "-o", "json").stdout)
    assert stored["metadata"]["labels"] == {"b": "1"}
    assert stored["metadata"]["annotations"]["seen"] == "b"
    assert _names(webhooks, "/first") == ["reinvoked", "reinvoked"]
    assert _names(webhooks, "/second") == ["reinvoked"]


def test_service_client_config_is_reached_on_loopback_only(
    cluster: Pykueue, webhooks: WebhookServer, configurations: list[tuple[str, str]], tmp_path: Path
) -> None:
    webhooks.routes["/by-service"] = lambda request: {"allowed": False, "status": {"message": "seen via service"}}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "whsvc", "namespace": "default"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]},
    }
    slice_ = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "whsvc-1", "namespace": "default", "labels": {"kubernetes.io/service-name": "whsvc"}},
        "addressType": "IPv4",
        "ports": [{"name": "https", "port": webhooks.port, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["10.0.0.7"]}],
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump_all([service, slice_]))
    via_service = {
        "service": {"namespace": "default", "name": "whsvc", "path": "/by-service"},
        "caBundle": webhooks.ca_bundle,
    }
    _apply(cluster, "ValidatingWebhookConfiguration", "by-service", [_hook("service.test.pykueue.io", via_service)])
    configurations.append(("ValidatingWebhookConfiguration", "by-service"))
    off_machine = _create_configmap(cluster, "svc-1", check=False)
    assert 'service "default/whsvc" has no endpoint on a loopback address' in off_machine.stderr
    assert "/by-service" not in webhooks.received

    slice_["endpoints"] = [{"addresses": ["127.0.0.1"]}]
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(slice_))
    denied = _create_configmap(cluster, "svc-2", check=False)
    assert 'admission webhook "service.test.pykueue.io" denied the request: seen via service' in denied.stderr
    assert _names(webhooks, "/by-service") == ["svc-2"]


def test_writes_of_the_in_process_controllers_go_through_webhooks_too(
    pykueue: Pykueue, webhooks: WebhookServer
) -> None:
    """``pykueue up`` with Kueue: the job controller creates a Workload in process, and the Workload
    still meets the user's mutating webhook (called from a private loop while the write waits)."""
    webhooks.routes["/mutate-workload"] = lambda request: json_patch(
        [{"op": "add", "path": "/metadata/annotations", "value": {"seen-by": "test-webhook"}}]
    )
    rules = [
        {
            "operations": ["CREATE"],
            "apiGroups": ["kueue.x-k8s.io"],
            "apiVersions": ["v1beta2"],
            "resources": ["workloads"],
        }
    ]
    _apply(
        pykueue,
        "MutatingWebhookConfiguration",
        "workloads",
        [_hook("workloads.test.pykueue.io", _url(webhooks, "/mutate-workload"), rules)],
    )
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "hooked", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                }
            }
        },
    }
    pykueue.kubectl("create", "-f", "-", input=yaml.safe_dump(job))

    def workload() -> JSONDict | None:
        listed = json.loads(pykueue.kubectl("get", "workloads", "-o", "json").stdout)["items"]
        return next((w for w in listed if w["metadata"]["name"].startswith("job-hooked-")), None)

    created = eventually_blocking(workload)
    assert isinstance(created, dict)
    assert created["metadata"]["annotations"]["seen-by"] == "test-webhook"
    request = next(r["request"] for r in webhooks.received["/mutate-workload"])
    assert request["userInfo"]["username"] == "system:apiserver"
