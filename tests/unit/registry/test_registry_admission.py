"""The admission chain: mutating hooks, defaulting, validation, validating hooks, and patch kinds."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.errors import Forbidden, Invalid, UnsupportedMediaType, WebhookDenied
from pykueue.api.meta.field_errors import FieldError
from pykueue.registry import AdmissionHook, AdmissionRequest, Registry

from .conftest import cluster_queue, configmap, kind


def test_mutating_hook_runs_before_validation_and_sees_storage_version(registry: Registry) -> None:
    seen: list[tuple[str, str]] = []

    def add_label(request: AdmissionRequest) -> dict[str, Any]:
        seen.append((request.operation, request.object["apiVersion"]))
        obj = request.object
        obj["metadata"].setdefault("labels", {})["hooked"] = "yes"
        return obj

    registry.add_admission_hook(
        AdmissionHook("label", resources=frozenset({"clusterqueues.kueue.x-k8s.io"}), mutate=add_label)
    )
    v1beta1 = kind(registry, "kueue.x-k8s.io", "v1beta1", "clusterqueues")
    body = cluster_queue("cq")
    body["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    obj, _ = registry.create(v1beta1, "", body, version="v1beta1")
    assert obj["metadata"]["labels"] == {"hooked": "yes"}
    assert seen == [("CREATE", "kueue.x-k8s.io/v1beta2")]


def test_hooks_only_apply_to_their_resources(registry: Registry) -> None:
    calls: list[str] = []
    registry.add_admission_hook(
        AdmissionHook("jobs-only", resources=frozenset({"jobs.batch"}), mutate=lambda r: calls.append(r.name))
    )
    registry.create(kind(registry, "", "v1", "configmaps"), "default", configmap("a"), version="v1")
    assert calls == []


def test_validating_hook_errors_become_one_422(registry: Registry) -> None:
    def deny(request: AdmissionRequest) -> list[FieldError]:
        return [FieldError("data.k", "Forbidden: not today", "FieldValueForbidden")]

    registry.add_admission_hook(AdmissionHook("deny", validate=deny))
    cm = kind(registry, "", "v1", "configmaps")
    with pytest.raises(Invalid) as err:
        registry.create(cm, "default", configmap("a"), version="v1")
    assert err.value.code == 422
    assert err.value.details is not None
    assert err.value.details["causes"] == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: not today", "field": "data.k"}
    ]
    assert registry.list(cm, "default", version="v1")["items"] == []


def test_webhook_denials_are_403_with_kube_apiservers_message(registry: Registry) -> None:
    def deny(request: AdmissionRequest) -> list[FieldError]:
        return [
            FieldError("data.k", "Forbidden: not today", "FieldValueForbidden", webhook="vcm.example.com"),
            FieldError("data.j", "Invalid value: 1: too small", webhook="vcm.example.com"),
        ]

    registry.add_admission_hook(AdmissionHook("deny", validate=deny))
    cm = kind(registry, "", "v1", "configmaps")
    with pytest.raises(WebhookDenied) as err:
        registry.create(cm, "default", configmap("a"), version="v1")
    assert err.value.to_status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": "Forbidden",
        "code": 403,
        "message": 'admission webhook "vcm.example.com" denied the request: '
        "[data.k: Forbidden: not today, data.j: Invalid value: 1: too small]",
    }
    assert registry.list(cm, "default", version="v1")["items"] == []


def test_schema_errors_win_over_webhook_denials(registry: Registry) -> None:
    """kube-apiserver never calls the validating webhooks for an object its schema refused."""
    registry.add_admission_hook(
        AdmissionHook(
            "deny",
            validate=lambda r: [
                FieldError("spec", "Forbidden: no", "FieldValueForbidden", webhook="vclusterqueue.kb.io")
            ],
        )
    )
    cq = kind(registry, "kueue.x-k8s.io", "v1beta2", "clusterqueues")
    body = cluster_queue("cq")
    body["spec"]["queueingStrategy"] = "Sometimes"
    with pytest.raises(Invalid) as err:
        registry.create(cq, "", body, version="v1beta2")
    assert [c["field"] for c in (err.value.details or {})["causes"]] == ["spec.queueingStrategy"]


def test_validating_hook_may_raise_api_errors(registry: Registry) -> None:
    def refuse(request: AdmissionRequest) -> list[FieldError]:
        raise Forbidden("nope")

    registry.add_admission_hook(AdmissionHook("refuse", operations=frozenset({"UPDATE"}), validate=refuse))
    cm = kind(registry, "", "v1", "configmaps")
    obj, _ = registry.create(cm, "default", configmap("a"), version="v1")
    with pytest.raises(Forbidden):
        registry.update(cm, "default", "a", {**obj, "data": {"k": "2"}}, version="v1")


def test_status_writes_skip_main_resource_hooks(registry: Registry) -> None:
    calls: list[str] = []
    registry.add_admission_hook(AdmissionHook("main", mutate=lambda r: calls.append(r.subresource)))
    cq = kind(registry, "kueue.x-k8s.io", "v1beta2", "clusterqueues")
    obj, _ = registry.create(cq, "", cluster_queue("cq"), version="v1beta2")
    registry.update(cq, "", "cq", {**obj, "status": {"pendingWorkloads": 1}}, version="v1beta2", subresource="status")
    assert calls == [""]


def test_defaulting_is_applied(registry: Registry) -> None:
    cq = kind(registry, "kueue.x-k8s.io", "v1beta2", "clusterqueues")
    obj, _ = registry.create(cq, "", cluster_queue("cq"), version="v1beta2")
    assert obj["spec"]["queueingStrategy"] == "BestEffortFIFO"


def test_patch_kinds(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    obj, _ = registry.patch(cm, "default", "a", b'{"data":{"x":"1"}}', "application/merge-patch+json", version="v1")
    assert obj["data"] == {"k": "v", "x": "1"}
    obj, _ = registry.patch(
        cm, "default", "a", b'[{"op":"remove","path":"/data/k"}]', "application/json-patch+json", version="v1"
    )
    assert obj["data"] == {"x": "1"}
    obj, _ = registry.patch(
        cm, "default", "a", b'{"data":{"y":"2"}}', "application/strategic-merge-patch+json", version="v1"
    )
    assert obj["data"] == {"x": "1", "y": "2"}


def test_strategic_merge_patch_on_crd_is_415(registry: Registry) -> None:
    cq = kind(registry, "kueue.x-k8s.io", "v1beta2", "clusterqueues")
    registry.create(cq, "", cluster_queue("cq"), version="v1beta2")
    with pytest.raises(UnsupportedMediaType) as err:
        registry.patch(cq, "", "cq", b'{"spec":{}}', "application/strategic-merge-patch+json", version="v1beta2")
    assert "application/merge-patch+json" in err.value.message
    assert "strategic" not in err.value.message


def test_delete_reaches_only_hooks_that_ask_for_it(registry: Registry) -> None:
    seen: list[str] = []

    def guard(request: AdmissionRequest) -> list[FieldError]:
        seen.append(request.operation)
        if (request.object["metadata"].get("labels") or {}).get("protected") == "true":
            raise Forbidden(f'configmaps "{request.name}" is protected')
        return []

    registry.add_admission_hook(AdmissionHook("guard", operations=frozenset({"DELETE"}), validate=guard))
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("keep", labels={"protected": "true"}), version="v1")
    registry.create(cm, "default", configmap("drop"), version="v1")
    with pytest.raises(Forbidden, match="protected"):
        registry.delete(cm, "default", "keep", version="v1")
    registry.delete(cm, "default", "drop", version="v1")
    assert seen == ["DELETE", "DELETE"]
    assert registry.get(cm, "default", "keep", version="v1")["metadata"]["name"] == "keep"


def test_labels_annotations_finalizers_and_owner_references_are_validated(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    bad = configmap(
        "a",
        labels={"bad key!": "x", "ok": "-bad-"},
        finalizers=["not a finalizer"],
        ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}],
    )
    with pytest.raises(Invalid) as err:
        registry.create(cm, "default", bad, version="v1")
    assert err.value.details is not None
    fields = [c["field"] for c in err.value.details["causes"]]
    assert fields == ["metadata.labels", "metadata.labels", "metadata.finalizers[0]", "metadata.ownerReferences[0].uid"]
    good = configmap("b", labels={"example.com/team": "a_b.c", "empty": ""}, finalizers=["example.com/x"])
    created, _ = registry.create(cm, "default", good, version="v1")
    assert created["metadata"]["labels"]["empty"] == ""


def test_public_surface_is_pinned() -> None:
    import pykueue.apiserver
    import pykueue.registry

    assert sorted(pykueue.registry.__all__) == ["AdmissionHook", "AdmissionRequest", "DEFAULT_NAMESPACES", "Registry"]
    assert sorted(pykueue.apiserver.__all__) == ["KUBERNETES_VERSION", "Server", "create_app", "serve"]
