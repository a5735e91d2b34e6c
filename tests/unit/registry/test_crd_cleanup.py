"""The ``customresourcecleanup.apiextensions.k8s.io`` finalizer: a deleted CRD terminates, its objects
go, then the CRD goes; an object held by its own finalizer holds the CRD (served, no creates) until
it is released, across a restart too."""

from __future__ import annotations

from typing import Any

import pytest
from tests.unit.registry.test_registry_crds import GROUP, install, widget

from pykueue.api.kinds.custom.custom_kinds import CRD_KIND
from pykueue.api.meta.clock import ManualClock
from pykueue.api.meta.errors import MethodNotAllowed, NotFound
from pykueue.registry import Registry
from pykueue.registry.crd_cleanup import CLEANUP_FINALIZER
from pykueue.store import Store
from pykueue.store.types import WatchEvent

CRD_NAME = "widgets.example.com"


def _terminating(crd: dict[str, Any]) -> tuple[str, str] | None:
    for condition in crd.get("status", {}).get("conditions", []):
        if condition["type"] == "Terminating":
            return condition["status"], condition["reason"]
    return None


def _held(registry: Registry) -> Any:
    kind = install(registry)
    registry.create(kind, "default", widget("free"), version="v1")
    held = widget("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    registry.create(kind, "default", held, version="v1")
    return kind


def test_a_crd_terminates_then_goes_once_its_objects_are_gone(registry: Registry) -> None:
    kind = install(registry)
    registry.create(kind, "default", widget("a"), version="v1")
    events: list[WatchEvent] = []
    registry.subscribe(events.append)
    result = registry.delete(CRD_KIND, "", CRD_NAME, version="v1")
    registry.store.flush()
    assert CLEANUP_FINALIZER not in (result["metadata"].get("finalizers") or [])
    seen = [(e.type, e.resource, e.object["metadata"]["name"]) for e in events]
    crd_events = [e for e in events if e.resource == "customresourcedefinitions.apiextensions.k8s.io"]
    assert [e.type for e in crd_events][-1] == "DELETED"
    first = crd_events[0].object
    assert first["metadata"]["deletionTimestamp"]
    assert CLEANUP_FINALIZER in first["metadata"]["finalizers"]
    assert _terminating(first) == ("True", "InstanceDeletionPending")
    assert [_terminating(e.object) for e in crd_events] == [
        ("True", "InstanceDeletionPending"),
        ("True", "InstanceDeletionInProgress"),
        ("False", "InstanceDeletionCompleted"),
        ("False", "InstanceDeletionCompleted"),
    ]
    # the object went before the CRD
    assert seen.index(("DELETED", "widgets.example.com", "a")) < seen.index(
        ("DELETED", "customresourcedefinitions.apiextensions.k8s.io", CRD_NAME)
    )
    with pytest.raises(NotFound):
        registry.kind_for(GROUP, "v1", "widgets")


def test_an_object_with_a_finalizer_holds_the_terminating_crd(registry: Registry) -> None:
    kind = _held(registry)
    result = registry.delete(CRD_KIND, "", CRD_NAME, version="v1")
    assert CLEANUP_FINALIZER in result["metadata"]["finalizers"]
    crd = registry.get(CRD_KIND, "", CRD_NAME, version="v1")
    assert crd["metadata"]["deletionTimestamp"]
    assert _terminating(crd) == ("True", "InstanceDeletionInProgress")
    assert registry.kind_for(GROUP, "v1", "widgets") is kind  # still served: reads, updates, deletes
    with pytest.raises(NotFound):
        registry.get(kind, "default", "free", version="v1")
    assert registry.get(kind, "default", "held", version="v1")["metadata"]["deletionTimestamp"]
    with pytest.raises(MethodNotAllowed, match="create not allowed while custom resource definition is terminating"):
        registry.create(kind, "default", widget("new"), version="v1")

    registry.patch(
        kind, "default", "held", b'{"metadata":{"finalizers":null}}', "application/merge-patch+json", version="v1"
    )
    with pytest.raises(NotFound):
        registry.get(CRD_KIND, "", CRD_NAME, version="v1")
    with pytest.raises(NotFound):
        registry.kind_for(GROUP, "v1", "widgets")


def test_a_crd_left_terminating_by_a_restart_is_finished_after_it(store: Store, clock: ManualClock) -> None:
    first = Registry(store, clock=clock)
    _held(first)
    first.delete(CRD_KIND, "", CRD_NAME, version="v1")
    second = Registry(store, clock=clock)
    kind = second.kind_for(GROUP, "v1", "widgets")
    assert _terminating(second.get(CRD_KIND, "", CRD_NAME, version="v1")) == ("True", "InstanceDeletionInProgress")
    with pytest.raises(MethodNotAllowed):
        second.create(kind, "default", widget("new"), version="v1")
    second.patch(
        kind, "default", "held", b'{"metadata":{"finalizers":null}}', "application/merge-patch+json", version="v1"
    )
    with pytest.raises(NotFound):
        second.get(CRD_KIND, "", CRD_NAME, version="v1")


def test_another_finalizer_keeps_the_crd_after_its_objects_are_gone(registry: Registry) -> None:
    crd_kind_install = install(registry)
    registry.patch(
        CRD_KIND,
        "",
        CRD_NAME,
        b'{"metadata":{"finalizers":["example.com/keep"]}}',
        "application/merge-patch+json",
        version="v1",
    )
    registry.create(crd_kind_install, "default", widget("a"), version="v1")
    registry.delete(CRD_KIND, "", CRD_NAME, version="v1")
    crd = registry.get(CRD_KIND, "", CRD_NAME, version="v1")
    assert crd["metadata"]["finalizers"] == ["example.com/keep"]
    assert _terminating(crd) == ("False", "InstanceDeletionCompleted")
    assert registry.store.list("widgets.example.com").items == []
