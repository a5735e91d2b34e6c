"""Any CustomResourceDefinition, served by ``pykueue up --no-kueue`` (a bare cluster) with the real kubectl.

A CRD written here (two versions, a CEL rule with ``messageExpression`` and ``fieldPath``, defaults, an
int-or-string, enum, printer columns, short name and category, ``status`` and ``scale`` subresources) is
applied, established and served at once; its objects are defaulted, pruned and validated as
kube-apiserver does; ``kubectl get``/``explain``/``scale``/``get -w`` work on it; an update of its schema
takes effect; deleting it deletes its objects; it survives a restart. An unmodified kopf operator runs
on the custom kind. Kueue's own kinds are absent until their rendered CRDs are applied.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.e2e.harness import Pykueue, kubectl_binary
from tests.waiting import eventually_blocking

GROUP, PLURAL, CRD_NAME = "example.com", "widgets", "widgets.example.com"
OPERATOR = Path(__file__).with_name("kopf_widget_operator.py")
PREFIX = "e2e.pykueue.io"

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "description": "The widget's desired state.",
            "x-kubernetes-validations": [
                {
                    "rule": "self.replicas <= self.maxReplicas",
                    "messageExpression": "'replicas (' + string(self.replicas) + ') must not exceed maxReplicas ('"
                    " + string(self.maxReplicas) + ')'",
                    "fieldPath": ".replicas",
                }
            ],
            "properties": {
                "size": {
                    "type": "string",
                    "description": "How big the widget is: small, medium or large.",
                    "default": "medium",
                    "enum": ["small", "medium", "large"],
                },
                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                "maxReplicas": {"type": "integer", "default": 10},
                "port": {"x-kubernetes-int-or-string": True, "description": "A port number or name."},
            },
        },
        "status": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}


def _crd(schema: dict[str, Any] | None = None) -> dict[str, Any]:
    def version(name: str, storage: bool) -> dict[str, Any]:
        return {
            "name": name,
            "served": True,
            "storage": storage,
            "deprecated": not storage,
            "schema": {"openAPIV3Schema": copy.deepcopy(schema or _SCHEMA)},
            "subresources": {
                "status": {},
                "scale": {
                    "specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector",
                },
            },
            "additionalPrinterColumns": [
                {"name": "Size", "type": "string", "jsonPath": ".spec.size", "description": "How big"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            ],
        }

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": PLURAL,
                "singular": "widget",
                "kind": "Widget",
                "shortNames": ["wd"],
                "categories": ["all"],
            },
            "versions": [version("v1", True), version("v1beta1", False)],
        },
    }


def _widget(name: str, spec: dict[str, Any], version: str = "v1") -> str:
    return json.dumps({"apiVersion": f"{GROUP}/{version}", "kind": "Widget", "metadata": {"name": name}, "spec": spec})


def _apply_crd(server: Pykueue, crd: dict[str, Any]) -> None:
    server.kubectl("apply", "-f", "-", input=json.dumps(crd))
    server.kubectl("wait", "--for", "condition=established", f"crd/{CRD_NAME}", "--timeout", "30s")


def _get(server: Pykueue, *args: str) -> Any:
    return json.loads(server.kubectl("get", *args, "-o", "json").stdout)


@contextmanager
def _watching(server: Pykueue, *args: str) -> Iterator[list[str]]:
    """``kubectl get -w --output-watch-events ...`` in the background; yields the lines it prints."""
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig)}
    watcher = subprocess.Popen(
        [kubectl_binary(), "get", *args, "-w", "--output-watch-events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    assert watcher.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        yield lines
    finally:
        watcher.kill()
        watcher.wait()
        reader.join(5)
        for stream in (watcher.stdout, watcher.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.timeout(180)
def test_custom_resource_definition_served_validated_and_deleted(api_only: Pykueue) -> None:
    server = api_only
    _apply_crd(server, _crd())
    crd = _get(server, "crd", CRD_NAME)
    conditions = {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": ("True", "NoConflicts"), "Established": ("True", "InitialNamesAccepted")}
    assert crd["status"]["storedVersions"] == ["v1"]
    resources = server.kubectl("api-resources", "--api-group", GROUP).stdout
    assert "widgets" in resources
    assert "wd" in resources
    assert "Widget" in resources

    # a valid object: defaults filled in, the unknown field pruned (kubectl --validate=false asks the
    # server to drop it, as kube-apiserver does for a structural schema)
    server.kubectl("create", "--validate=false", "-f", "-", input=_widget("w1", {"port": "http", "color": "red"}))
    w1 = _get(server, "widget", "w1")
    assert w1["spec"] == {"port": "http", "size": "medium", "replicas": 1, "maxReplicas": 10}

    # an invalid object: 422 naming the field path and the rule's messageExpression
    api = client.CustomObjectsApi(config.new_client_from_config(config_file=str(server.kubeconfig)))
    with pytest.raises(ApiException) as refused:
        api.create_namespaced_custom_object(
            GROUP, "v1", "default", PLURAL, json.loads(_widget("w2", {"replicas": 12, "port": 8080}))
        )
    assert refused.value.status == 422
    status = json.loads(refused.value.body)
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.replicas",
            "message": 'Invalid value: "object": replicas (12) must not exceed maxReplicas (10)',
        }
    ]
    res = server.kubectl("create", "-f", "-", input=_widget("w3", {"size": "huge"}), check=False)
    assert res.returncode != 0
    assert 'spec.size: Unsupported value: "huge": supported values: "small", "medium", "large"' in res.stderr

    # printer columns, short name, category "all", the other served version
    table = server.kubectl("get", "wd").stdout.splitlines()
    assert table[0].split() == ["NAME", "SIZE", "REPLICAS"]
    assert table[1].split() == ["w1", "medium", "1"]
    assert "widget.example.com/w1" in server.kubectl("get", "all").stdout
    old_read = server.kubectl("get", "widgets.v1beta1.example.com", "w1", "-o", "json")
    assert "Warning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget" in old_read.stderr
    old = json.loads(old_read.stdout)
    assert old["apiVersion"] == "example.com/v1beta1"
    assert old["spec"]["size"] == "medium"

    # kubectl explain reads the schema's descriptions from the OpenAPI documents
    assert "How big the widget is: small, medium or large." in server.kubectl("explain", "widget.spec.size").stdout

    # kubectl scale goes through the scale subresource; kubectl get -w sees the change
    with _watching(server, "widgets") as lines:
        eventually_blocking(lambda: any(line.startswith("ADDED") and "w1" in line for line in lines), within=30)
        assert "scaled" in server.kubectl("scale", "widget", "w1", "--replicas=3").stdout
        eventually_blocking(
            lambda: any(line.startswith("MODIFIED") and "w1" in line and " 3" in line for line in lines), within=30
        )
    scale = json.loads(server.kubectl("get", "--raw", f"/apis/{GROUP}/v1/namespaces/default/{PLURAL}/w1/scale").stdout)
    assert scale["kind"] == "Scale"
    assert scale["spec"] == {"replicas": 3}
    refused_scale = server.kubectl("scale", "widget", "w1", "--replicas=11", check=False)
    assert "replicas (11) must not exceed maxReplicas (10)" in refused_scale.stderr  # the object's own rules

    # an update of the CRD's schema takes effect at once: a new field is kept and explained
    schema = copy.deepcopy(_SCHEMA)
    schema["properties"]["spec"]["properties"]["color"] = {"type": "string", "description": "The widget's colour."}
    _apply_crd(server, _crd(schema))
    eventually_blocking(
        lambda: "The widget's colour." in server.kubectl("explain", "widget.spec.color", check=False).stdout, within=30
    )
    server.kubectl("create", "-f", "-", input=_widget("w4", {"color": "blue"}))
    assert _get(server, "widget", "w4")["spec"]["color"] == "blue"

    # deleting the CRD deletes its objects and stops serving the kind
    server.kubectl("delete", "crd", CRD_NAME)
    gone = server.kubectl("get", "--raw", f"/apis/{GROUP}/v1/namespaces/default/{PLURAL}", check=False)
    assert gone.returncode != 0
    assert "NotFound" in gone.stderr
    _apply_crd(server, _crd())
    assert _get(server, "widgets")["items"] == []  # the old objects did not come back with the kind


@pytest.mark.timeout(120)
def test_custom_resources_survive_a_restart(api_only: Pykueue) -> None:
    _apply_crd(api_only, _crd())
    api_only.kubectl("create", "-f", "-", input=_widget("kept", {"size": "large"}))
    api_only.stop()
    api_only.start()
    assert _get(api_only, "widget", "kept")["spec"]["size"] == "large"
    res = api_only.kubectl("create", "-f", "-", input=_widget("bad", {"replicas": 20}), check=False)
    assert "replicas (20) must not exceed maxReplicas (10)" in res.stderr  # served with its rules again


@pytest.mark.timeout(120)
def test_bare_cluster_serves_kueue_only_once_its_crds_are_applied(api_only: Pykueue, kueue_crds_file: Path) -> None:
    resources = api_only.kubectl("api-resources").stdout
    assert "kueue.x-k8s.io" not in resources
    assert "jobset.x-k8s.io" not in resources
    assert api_only.kubectl("get", "clusterqueues", check=False).returncode != 0
    printed = list(yaml.safe_load_all(kueue_crds_file.read_text()))
    assert {d["metadata"]["name"] for d in printed} >= {"clusterqueues.kueue.x-k8s.io", "jobsets.jobset.x-k8s.io"}
    out = api_only.kubectl("apply", "--server-side", "-f", str(kueue_crds_file)).stdout
    assert "customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io serverside-applied" in out
    assert api_only.kubectl("get", "clusterqueues").returncode == 0
    assert "clusterqueues" in api_only.kubectl("api-resources", "--api-group", "kueue.x-k8s.io").stdout


class _Kopf:
    """One ``kopf run`` subprocess (kopf's defaults: it also watches CRDs); output goes to a file."""

    def __init__(self, server: Pykueue, log: Path) -> None:
        self.log = log
        env = {**os.environ, "KUBECONFIG": str(server.kubeconfig), "PYTHONUNBUFFERED": "1"}
        with log.open("w") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces", "--verbose", str(OPERATOR)],
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=str(log.parent),
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.mark.timeout(150)
def test_kopf_operator_on_a_custom_kind(api_only: Pykueue, tmp_path: Path) -> None:
    server = api_only
    _apply_crd(server, _crd())
    kopf = _Kopf(server, tmp_path / "kopf.log")

    def until(what: str, predicate: Any) -> Any:
        def check() -> object:
            if kopf.process.poll() is not None:
                raise AssertionError(f"kopf exited:\n{kopf.output()[-4000:]}")
            return predicate()

        try:
            return eventually_blocking(check, within=30)
        except AssertionError as error:
            raise AssertionError(f"{what}: {error}\n--- kopf log ---\n{kopf.output()[-4000:]}") from None

    def widget() -> dict[str, Any]:
        return dict(_get(server, "widget", "k1"))

    try:
        until("kopf watching widgets", lambda: "Starting the watch-stream for widgets" in kopf.output())
        server.kubectl("create", "-f", "-", input=_widget("k1", {"size": "small", "replicas": 2}))
        until(
            "create handled", lambda: widget()["metadata"].get("annotations", {}).get(f"{PREFIX}/size-seen") == "small"
        )
        obj = widget()
        assert obj["status"]["replicas"] == 2  # written by kopf through the status subresource
        assert obj["status"]["created"] == {"message": "a small widget"}  # kopf's handler result
        assert any(f.startswith("kopf.zalando.org/") for f in obj["metadata"]["finalizers"])
        events = _get(server, "events", "-n", "default")["items"]
        assert any(e["reason"] == "WidgetObserved" and e["involvedObject"]["kind"] == "Widget" for e in events)

        server.kubectl("scale", "widget", "k1", "--replicas=4")
        until("scale followed", lambda: widget()["status"].get("replicas") == 4)
        scale = json.loads(
            server.kubectl("get", "--raw", f"/apis/{GROUP}/v1/namespaces/default/{PLURAL}/k1/scale").stdout
        )
        assert scale["status"]["replicas"] == 4

        server.kubectl("delete", "widget", "k1", "--timeout", "30s")  # kopf releases its finalizer
        assert server.kubectl("get", "widget", "k1", check=False).returncode != 0
        assert any(e["reason"] == "WidgetDeleted" for e in _get(server, "events", "-n", "default")["items"])
        bad = [line for line in kopf.output().splitlines() if "[ERROR" in line or line.startswith("Traceback")]
        assert not bad, "kopf reported problems:\n" + "\n".join(bad)
    finally:
        kopf.stop()
