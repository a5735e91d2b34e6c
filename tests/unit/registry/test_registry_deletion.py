"""Finalizers, deletionTimestamp, preconditions, garbage collection and namespace termination."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.errors import Conflict, Invalid, NotFound
from pykueue.registry import Registry

from .conftest import configmap, kind


def _owner_ref(owner: dict[str, Any], *, block: bool = False) -> dict[str, Any]:
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def _exists(registry: Registry, name: str, namespace: str = "default") -> bool:
    try:
        registry.get(kind(registry, "", "v1", "configmaps"), namespace, name, version="v1")
    except NotFound:
        return False
    return True


def test_delete_without_finalizers_removes(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    deleted = registry.delete(cm, "default", "a", version="v1")
    assert deleted["metadata"]["name"] == "a"
    assert not _exists(registry, "a")
    with pytest.raises(NotFound):
        registry.delete(cm, "default", "a", version="v1")


def test_finalizers_hold_the_object_until_removed(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a", finalizers=["example.com/x", "example.com/y"]), version="v1")
    deleting = registry.delete(cm, "default", "a", version="v1")
    assert deleting["metadata"]["deletionTimestamp"]
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == 0
    assert _exists(registry, "a")
    body = {**deleting, "metadata": {**deleting["metadata"], "finalizers": ["example.com/x", "example.com/z"]}}
    with pytest.raises(Invalid, match="no new finalizers can be added"):
        registry.update(cm, "default", "a", body, version="v1")
    one_left = {**deleting, "metadata": {**deleting["metadata"], "finalizers": ["example.com/y"]}}
    registry.update(cm, "default", "a", one_left, version="v1")
    assert _exists(registry, "a")
    registry.patch(
        cm, "default", "a", b'{"metadata":{"finalizers":null}}', "application/merge-patch+json", version="v1"
    )
    assert not _exists(registry, "a")


def test_delete_preconditions(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    obj, _ = registry.create(cm, "default", configmap("a"), version="v1")
    with pytest.raises(Conflict, match="Precondition failed: UID"):
        registry.delete(cm, "default", "a", version="v1", preconditions={"uid": "other"})
    with pytest.raises(Conflict, match="Precondition failed: ResourceVersion"):
        registry.delete(cm, "default", "a", version="v1", preconditions={"resourceVersion": "1"})
    registry.delete(cm, "default", "a", version="v1", preconditions={"uid": obj["metadata"]["uid"]})
    assert not _exists(registry, "a")


def test_dry_run_delete_keeps_the_object(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    registry.delete(cm, "default", "a", version="v1", dry_run=True)
    assert _exists(registry, "a")


def test_background_gc_deletes_dependents_after_owner(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    owner, _ = registry.create(cm, "default", configmap("owner"), version="v1")
    child, _ = registry.create(cm, "default", configmap("child", ownerReferences=[_owner_ref(owner)]), version="v1")
    registry.create(cm, "default", configmap("grandchild", ownerReferences=[_owner_ref(child)]), version="v1")
    registry.delete(cm, "default", "owner", version="v1")
    assert not _exists(registry, "owner")
    assert not _exists(registry, "child")
    assert not _exists(registry, "grandchild")


def test_gc_keeps_dependents_with_another_live_owner(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    a, _ = registry.create(cm, "default", configmap("a"), version="v1")
    b, _ = registry.create(cm, "default", configmap("b"), version="v1")
    registry.create(cm, "default", configmap("shared", ownerReferences=[_owner_ref(a), _owner_ref(b)]), version="v1")
    registry.delete(cm, "default", "a", version="v1")
    shared = registry.get(cm, "default", "shared", version="v1")
    assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["b"]


def test_orphan_propagation_removes_owner_references(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    owner, _ = registry.create(cm, "default", configmap("owner"), version="v1")
    registry.create(cm, "default", configmap("child", ownerReferences=[_owner_ref(owner)]), version="v1")
    registry.delete(cm, "default", "owner", version="v1", propagation="Orphan")
    child = registry.get(cm, "default", "child", version="v1")
    assert "ownerReferences" not in child["metadata"]


def test_foreground_waits_for_blocking_dependents(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    owner, _ = registry.create(cm, "default", configmap("owner"), version="v1")
    registry.create(
        cm,
        "default",
        configmap("child", ownerReferences=[_owner_ref(owner, block=True)], finalizers=["example.com/hold"]),
        version="v1",
    )
    result = registry.delete(cm, "default", "owner", version="v1", propagation="Foreground")
    assert result["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert _exists(registry, "owner")
    child = registry.get(cm, "default", "child", version="v1")
    assert child["metadata"]["deletionTimestamp"]
    registry.patch(
        cm, "default", "child", b'{"metadata":{"finalizers":null}}', "application/merge-patch+json", version="v1"
    )
    assert not _exists(registry, "child")
    assert not _exists(registry, "owner")


def test_unknown_propagation_policy_is_400(registry: Registry) -> None:
    from pykueue.api.meta.errors import BadRequest

    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    with pytest.raises(BadRequest, match="propagationPolicy"):
        registry.delete(cm, "default", "a", version="v1", propagation="Sideways")


def test_namespace_deletion_empties_then_removes(registry: Registry) -> None:
    ns = kind(registry, "", "v1", "namespaces")
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(ns, "", {"metadata": {"name": "team"}}, version="v1")
    registry.create(cm, "team", configmap("plain", namespace="team"), version="v1")
    registry.create(cm, "team", configmap("held", namespace="team", finalizers=["example.com/x"]), version="v1")
    registry.delete(ns, "", "team", version="v1")
    assert not _exists(registry, "plain", "team")
    assert _exists(registry, "held", "team")
    assert registry.get(ns, "", "team", version="v1")["metadata"]["deletionTimestamp"]
    registry.patch(cm, "team", "held", b'{"metadata":{"finalizers":[]}}', "application/merge-patch+json", version="v1")
    with pytest.raises(NotFound):
        registry.get(ns, "", "team", version="v1")


def test_delete_collection_by_label(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a", labels={"app": "x"}), version="v1")
    registry.create(cm, "default", configmap("b", labels={"app": "y"}), version="v1")
    deleted = registry.delete_collection(cm, "default", version="v1", label_selector="app=x")
    assert [o["metadata"]["name"] for o in deleted["items"]] == ["a"]
    assert not _exists(registry, "a")
    assert _exists(registry, "b")


def test_system_namespaces_cannot_be_deleted(registry: Registry) -> None:
    from pykueue.api.meta.errors import Forbidden

    ns = kind(registry, "", "v1", "namespaces")
    for name in ("default", "kube-system", "kube-public"):
        with pytest.raises(Forbidden, match="may not be deleted"):
            registry.delete(ns, "", name, version="v1")
    assert registry.get(ns, "", "default", version="v1")["status"]["phase"] == "Active"
