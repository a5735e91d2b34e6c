"""CRUD, resourceVersions, optimistic concurrency and the errors' kube-apiserver wording."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pykueue.api.meta.errors import AlreadyExists, BadRequest, Conflict, NotFound
from pykueue.store import Store
from pykueue.testing.builders.raw_specs import bare_cluster_queue as cq
from pykueue.testing.builders.raw_specs import pod

from .object_reads import names, rv

CQ = "clusterqueues.kueue.x-k8s.io"


def test_create_sets_resource_version_and_nothing_else(store: Store) -> None:
    created = store.create("pods", pod("a"))
    assert created["metadata"] == {"name": "a", "namespace": "default", "resourceVersion": "1"}
    assert created["spec"] == {"nodeName": ""}
    assert store.get("pods", "default", "a") == created
    assert store.resource_version == 1


def test_every_write_takes_the_next_global_rv(store: Store) -> None:
    seen = [
        rv(store.create("pods", pod("a"))),
        rv(store.create(CQ, cq("q"))),
        rv(store.update("pods", pod("a"), expected_rv=None)),
        rv(store.delete(CQ, "", "q")),
        rv(store.create(CQ, cq("q"))),
    ]
    assert seen == [1, 2, 3, 4, 5]
    assert store.resource_version == 5


def test_create_ignores_a_resource_version_in_the_body(store: Store) -> None:
    body = pod("a")
    body["metadata"]["resourceVersion"] = "999"
    assert rv(store.create("pods", body)) == 1


def test_create_of_existing_key_is_already_exists(store: Store) -> None:
    store.create(CQ, cq("q"))
    with pytest.raises(AlreadyExists) as err:
        store.create(CQ, cq("q"))
    assert err.value.message == 'clusterqueues.kueue.x-k8s.io "q" already exists'
    assert err.value.to_status()["code"] == 409
    assert err.value.to_status()["details"] == {"name": "q", "kind": "clusterqueues", "group": "kueue.x-k8s.io"}
    assert store.resource_version == 1


def test_same_name_in_other_namespace_or_resource_is_a_different_key(store: Store) -> None:
    store.create("pods", pod("a", "ns1"))
    store.create("pods", pod("a", "ns2"))
    store.create("secrets", pod("a", "ns1"))
    assert names(store.list("pods").items) == ["a", "a"]


_MISSING_OPS: dict[str, Callable[[Store], object]] = {
    "get": lambda s: s.get(CQ, "", "x"),
    "update": lambda s: s.update(CQ, cq("x"), expected_rv=None),
    "delete": lambda s: s.delete(CQ, "", "x"),
}


@pytest.mark.parametrize("op", sorted(_MISSING_OPS))
def test_missing_object_is_not_found_with_kube_message(store: Store, op: str) -> None:
    with pytest.raises(NotFound) as err:
        _MISSING_OPS[op](store)
    assert err.value.message == 'clusterqueues.kueue.x-k8s.io "x" not found'
    assert err.value.to_status()["reason"] == "NotFound"


def test_core_resource_not_found_has_no_group(store: Store) -> None:
    with pytest.raises(NotFound, match=r'^pods "x" not found$'):
        store.get("pods", "default", "x")


def test_update_with_stale_rv_is_conflict_and_changes_nothing(store: Store) -> None:
    first = store.create("pods", pod("a"))
    store.update("pods", pod("a", tier="x"), expected_rv=first["metadata"]["resourceVersion"])
    with pytest.raises(Conflict) as err:
        store.update("pods", pod("a", tier="y"), expected_rv=first["metadata"]["resourceVersion"])
    assert err.value.message == (
        'Operation cannot be fulfilled on pods "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert err.value.to_status()["code"] == 409
    assert store.get("pods", "default", "a")["metadata"]["labels"] == {"tier": "x"}
    assert store.resource_version == 2


@pytest.mark.parametrize("expected", [None, ""])
def test_update_without_expected_rv_is_unconditional(store: Store, expected: str | None) -> None:
    store.create("pods", pod("a"))
    store.update("pods", pod("a", v="1"), expected_rv=None)
    assert rv(store.update("pods", pod("a", v="2"), expected_rv=expected)) == 3


def test_update_with_current_rv_succeeds(store: Store) -> None:
    created = store.create("pods", pod("a"))
    updated = store.update(
        "pods", {**created, "spec": {"nodeName": "n1"}}, expected_rv=created["metadata"]["resourceVersion"]
    )
    assert updated["spec"] == {"nodeName": "n1"}
    assert rv(updated) == 2


def test_delete_returns_object_with_new_rv_and_removes_it(store: Store) -> None:
    store.create("pods", pod("a", x="1"))
    deleted = store.delete("pods", "default", "a")
    assert deleted["metadata"] == {"name": "a", "namespace": "default", "labels": {"x": "1"}, "resourceVersion": "2"}
    with pytest.raises(NotFound):
        store.get("pods", "default", "a")
    assert store.list("pods").items == []


def test_delete_with_stale_rv_is_conflict(store: Store) -> None:
    store.create("pods", pod("a"))
    store.update("pods", pod("a"), expected_rv=None)
    with pytest.raises(Conflict):
        store.delete("pods", "default", "a", expected_rv="1")
    assert store.delete("pods", "default", "a", expected_rv="2")["metadata"]["resourceVersion"] == "3"


def test_returned_dicts_are_copies(store: Store) -> None:
    body = pod("a", x="1")
    created = store.create("pods", body)
    body["metadata"]["labels"]["x"] = "mutated-input"
    created["metadata"]["labels"]["x"] = "mutated-result"
    got = store.get("pods", "default", "a")
    got["spec"]["nodeName"] = "mutated-get"
    store.list("pods").items[0]["metadata"]["name"] = "mutated-list"
    fresh = store.get("pods", "default", "a")
    assert fresh["metadata"]["labels"] == {"x": "1"}
    assert fresh["spec"] == {"nodeName": ""}
    assert names(store.list("pods", label_selector="x=1").items) == ["a"]


def test_input_metadata_is_not_mutated(store: Store) -> None:
    body = pod("a")
    store.create("pods", body)
    assert "resourceVersion" not in body["metadata"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"kind": "Pod"}, "object has no metadata"),
        ({"metadata": {"namespace": "default"}}, "resource name may not be empty"),
        ({"metadata": {"name": ""}}, "resource name may not be empty"),
        ({"metadata": {"name": "a", "namespace": 3}}, "metadata.namespace must be a string"),
        ({"metadata": {"name": "a"}, "spec": {"x": {1, 2}}}, "object is not valid JSON"),
        ({"metadata": {"name": "a"}, "spec": {1: "non-string key"}}, "object is not valid JSON"),
    ],
)
def test_bad_object_is_bad_request_and_leaves_no_trace(store: Store, body: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        store.create("pods", body)
    assert store.resource_version == 0
    assert store.list("pods").items == []
    store.create("pods", pod("ok"))
    assert store.resource_version == 1


def test_cluster_scoped_objects_use_empty_namespace(store: Store) -> None:
    store.create(CQ, cq("q"))
    assert store.get(CQ, "", "q")["metadata"]["name"] == "q"
    assert names(store.list(CQ, "").items) == ["q"]
    assert names(store.list(CQ).items) == ["q"]


def test_closed_store_refuses_writes(store: Store) -> None:
    store.create("pods", pod("a"))
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.create("pods", pod("b"))
    with pytest.raises(RuntimeError, match="closed"):
        store.flush()


def test_version_of_follows_every_write_without_decoding(store: Store) -> None:
    created = store.create("pods", pod("a"))
    assert store.version_of("pods", "default", "a") == rv(created)
    updated = store.update("pods", pod("a"), expected_rv=None)
    assert store.version_of("pods", "default", "a") == rv(updated) > rv(created)
    store.delete("pods", "default", "a")
    with pytest.raises(NotFound, match=r'^pods "a" not found$'):
        store.version_of("pods", "default", "a")
