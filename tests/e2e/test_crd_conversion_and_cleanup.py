"""A CRD served in two versions through a conversion webhook, and a CRD deleted through its
``customresourcecleanup.apiextensions.k8s.io`` finalizer, on ``pykueue up --no-kueue`` with kubectl.

The conversion webhook is the tests' own (:mod:`tests.e2e.webhook_server`): ``example.com/v1`` keeps a
gadget's size in ``spec.size``, ``v2`` in ``spec.dimensions.size``; objects are stored in v1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.e2e.harness import Pykueue
from tests.e2e.webhook_server import WebhookServer
from tests.waiting import eventually_blocking

JSONDict = dict[str, Any]
_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


@pytest.fixture(scope="module")
def webhooks() -> Iterator[WebhookServer]:
    server = WebhookServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, webhooks: WebhookServer) -> Iterator[Pykueue]:
    base = tmp_path_factory.mktemp("crdhooks")
    server = Pykueue(base / "data", base / "kubeconfig", ["--no-kueue"]).start()
    try:
        yield server
    finally:
        server.stop()


def _convert(request: JSONDict) -> JSONDict:
    desired = request["desiredAPIVersion"]
    out = []
    for obj in request["objects"]:
        spec = dict(obj.get("spec") or {})
        if desired == "example.com/v2" and "size" in spec:
            spec = {"dimensions": {"size": spec.pop("size")}, **spec}
        elif desired == "example.com/v1" and "dimensions" in spec:
            spec = {"size": spec.pop("dimensions").get("size"), **spec}
        metadata = {
            **obj["metadata"],
            "labels": {**(obj["metadata"].get("labels") or {}), "converted": "yes"},
            "generation": 99,
        }  # only labels and annotations may change: the rest is restored
        out.append({**obj, "apiVersion": desired, "metadata": metadata, "spec": spec})
    return {"convertedObjects": out, "result": {"status": "Success"}}


def _crd(plural: str, kind: str, conversion: JSONDict | None = None) -> JSONDict:
    def version(name: str, storage: bool) -> JSONDict:
        return {
            "name": name,
            "served": True,
            "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": _OPEN}}},
        }

    spec: JSONDict = {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": plural, "kind": kind, "singular": kind.lower()},
        "versions": [version("v1", True), version("v2", False)],
    }
    if conversion is not None:
        spec["conversion"] = conversion
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": spec,
    }


def _get(cluster: Pykueue, *args: str) -> Any:
    return json.loads(cluster.kubectl("get", *args, "-o", "json").stdout)


def _established(cluster: Pykueue, name: str) -> bool:
    crd = _get(cluster, "crd", name)
    return any(c["type"] == "Established" and c["status"] == "True" for c in crd["status"].get("conditions", []))


def test_a_conversion_webhook_serves_two_versions(cluster: Pykueue, webhooks: WebhookServer) -> None:
    webhooks.routes["/convert"] = _convert
    conversion = {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": webhooks.url("/convert"), "caBundle": webhooks.ca_bundle},
            "conversionReviewVersions": ["v1"],
        },
    }
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(_crd("gadgets", "Gadget", conversion)))
    eventually_blocking(lambda: _established(cluster, "gadgets.example.com"))

    gadget = {
        "apiVersion": "example.com/v2",
        "kind": "Gadget",
        "metadata": {"name": "g1"},
        "spec": {"dimensions": {"size": "large"}, "colour": "red"},
    }
    cluster.kubectl("create", "-f", "-", input=yaml.safe_dump(gadget))
    # stored in v1 through the webhook, then answered in v2 through it again
    write, answer = webhooks.received["/convert"][-2:]
    assert answer["request"]["desiredAPIVersion"] == "example.com/v2"
    assert write["apiVersion"] == "apiextensions.k8s.io/v1"
    assert write["kind"] == "ConversionReview"
    assert write["request"]["desiredAPIVersion"] == "example.com/v1"
    assert write["request"]["objects"][0]["spec"]["dimensions"] == {"size": "large"}

    as_v1 = _get(cluster, "gadgets.v1.example.com", "g1")
    assert as_v1["apiVersion"] == "example.com/v1"
    assert as_v1["spec"] == {"size": "large", "colour": "red"}
    assert as_v1["metadata"]["labels"] == {"converted": "yes"}
    assert as_v1["metadata"]["generation"] == 1
    calls = len(webhooks.received["/convert"])
    as_v2 = _get(cluster, "gadgets.v2.example.com", "g1")
    assert as_v2["apiVersion"] == "example.com/v2"
    assert as_v2["spec"] == {"dimensions": {"size": "large"}, "colour": "red"}
    assert as_v2["metadata"]["generation"] == 1  # the webhook's 99 is not taken
    assert as_v2["metadata"]["uid"] == as_v1["metadata"]["uid"]
    assert len(webhooks.received["/convert"]) == calls + 1
    assert webhooks.received["/convert"][-1]["request"]["desiredAPIVersion"] == "example.com/v2"
    more = [
        {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": f"g{i}"}, "spec": {"size": "s"}}
        for i in (2, 3)
    ]
    cluster.kubectl("create", "-f", "-", input=yaml.safe_dump_all(more))  # the storage version: no call
    calls = len(webhooks.received["/convert"])
    listed = _get(cluster, "gadgets.v2.example.com")
    assert [item["spec"]["dimensions"] for item in listed["items"]] == [{"size": "large"}, {"size": "s"}, {"size": "s"}]
    assert len(webhooks.received["/convert"]) == calls + 1  # the whole list in one review, as kube sends it
    assert len(webhooks.received["/convert"][-1]["request"]["objects"]) == 3

    webhooks.routes["/convert"] = lambda request: {
        "convertedObjects": [],
        "result": {"status": "Failure", "message": "converter is broken"},
    }
    failed = cluster.kubectl("get", "gadgets.v2.example.com", "g1", check=False)
    assert failed.returncode != 0
    assert "conversion webhook for example.com/v1, Kind=Gadget failed: converter is broken" in failed.stderr
    assert _get(cluster, "gadgets.v1.example.com", "g1")["spec"]["size"] == "large"  # storage version: no call


def test_a_deleted_crd_shows_its_finalizer_until_its_objects_are_gone(cluster: Pykueue) -> None:
    cluster.kubectl("apply", "-f", "-", input=yaml.safe_dump(_crd("sprockets", "Sprocket")))
    eventually_blocking(lambda: _established(cluster, "sprockets.example.com"))
    held = {
        "apiVersion": "example.com/v1",
        "kind": "Sprocket",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
        "spec": {},
    }
    free = {"apiVersion": "example.com/v1", "kind": "Sprocket", "metadata": {"name": "free"}, "spec": {}}
    cluster.kubectl("create", "-f", "-", input=yaml.safe_dump_all([held, free]))

    cluster.kubectl("delete", "crd", "sprockets.example.com", "--wait=false")
    crd = _get(cluster, "crd", "sprockets.example.com")
    assert crd["metadata"]["deletionTimestamp"]
    assert "customresourcecleanup.apiextensions.k8s.io" in crd["metadata"]["finalizers"]
    terminating = next(c for c in crd["status"]["conditions"] if c["type"] == "Terminating")
    assert (terminating["status"], terminating["reason"]) == ("True", "InstanceDeletionInProgress")
    names = [item["metadata"]["name"] for item in _get(cluster, "sprockets")["items"]]
    assert names == ["held"]
    refused = cluster.kubectl(
        "create", "-f", "-", check=False, input=yaml.safe_dump({**free, "metadata": {"name": "late"}})
    )
    assert refused.returncode != 0
    assert "create not allowed while custom resource definition is terminating" in refused.stderr

    cluster.kubectl("patch", "sprocket", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    eventually_blocking(lambda: cluster.kubectl("get", "crd", "sprockets.example.com", check=False).returncode != 0)
    gone = cluster.kubectl("get", "sprockets", check=False)
    assert gone.returncode != 0  # kubectl's cached discovery words it one of two ways
    assert (
        "the server could not find the requested resource" in gone.stderr
        or 'the server doesn\'t have a resource type "sprockets"' in gone.stderr
    )
