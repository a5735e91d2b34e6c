"""CustomResourceDefinitions in the registry: established at once, validated objects, conflicts, deletion,
restarts, per-server kind sets, the scale subresource, and Kueue's kinds as ordinary CRDs."""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest

from pykueue.api.catalogue import build_catalogue
from pykueue.api.crds import custom_resource_definitions
from pykueue.api.kinds.custom.custom_kinds import CRD_KIND
from pykueue.api.meta.clock import ManualClock
from pykueue.api.meta.errors import ApiError, Invalid, NotFound, WebhookDenied
from pykueue.api.meta.field_errors import FieldError
from pykueue.registry import Registry
from pykueue.registry.scale import get_scale, patch_scale, update_scale
from pykueue.store import Store
from pykueue.store.types import WatchEvent

GROUP = "example.com"


def widget_crd(**spec_props: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "type": "object",
        "x-kubernetes-validations": [
            {
                "rule": "self.replicas <= self.maxReplicas",
                "messageExpression": "'replicas ' + string(self.replicas) + ' > ' + string(self.maxReplicas)",
                "fieldPath": ".replicas",
            }
        ],
        "properties": {
            "size": {"type": "string", "default": "medium", "enum": ["small", "medium", "large"]},
            "replicas": {"type": "integer", "minimum": 0, "default": 1},
            "maxReplicas": {"type": "integer", "default": 10},
            **spec_props,
        },
    }
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": spec,
                    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                },
            }
        },
        "subresources": {
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [version, {**copy.deepcopy(version), "name": "v1beta1", "storage": False}],
        },
    }


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def install(registry: Registry, crd: dict[str, Any] | None = None) -> Any:
    registry.create(CRD_KIND, "", crd or widget_crd(), version="v1")
    return registry.kind_for(GROUP, "v1", "widgets")


def conditions(registry: Registry, name: str) -> dict[str, tuple[str, str, str]]:
    crd = registry.get(CRD_KIND, "", name, version="v1")
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in crd["status"]["conditions"]}


def test_an_established_crd_is_served_at_once_with_its_status(registry: Registry) -> None:
    with pytest.raises(NotFound):
        registry.kind_for(GROUP, "v1", "widgets")
    kind = install(registry)
    assert (kind.kind, kind.namespaced, kind.short_names, kind.subresources) == (
        "Widget",
        True,
        ("wd",),
        ("status", "scale"),
    )
    assert conditions(registry, "widgets.example.com") == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted"),
    }
    crd = registry.get(CRD_KIND, "", "widgets.example.com", version="v1")
    assert crd["status"]["acceptedNames"]["listKind"] == "WidgetList"
    assert crd["status"]["storedVersions"] == ["v1"]
    assert registry.kind_for(GROUP, "v1beta1", "widgets") is kind


def test_objects_are_defaulted_pruned_and_validated(registry: Registry) -> None:
    kind = install(registry)
    obj, warnings = registry.create(kind, "default", widget("a", color="red"), version="v1", field_validation="Warn")
    assert obj["spec"] == {"size": "medium", "replicas": 1, "maxReplicas": 10}
    assert warnings == ['unknown field "spec.color"']
    with pytest.raises(Invalid) as refused:
        registry.create(kind, "default", widget("b", replicas=12), version="v1")
    assert refused.value.errors == [FieldError("spec.replicas", 'Invalid value: "object": replicas 12 > 10')]
    assert refused.value.code == 422
    old = registry.get(kind, "default", "a", version="v1beta1")
    assert old["apiVersion"] == "example.com/v1beta1"


def test_a_schema_update_takes_effect_at_once(registry: Registry) -> None:
    kind = install(registry)
    with pytest.raises(ApiError, match=re.escape('unknown field "spec.color"')):
        registry.create(kind, "default", widget("a", color="red"), version="v1")
    current = registry.get(CRD_KIND, "", "widgets.example.com", version="v1")
    updated = widget_crd(color={"type": "string", "maxLength": 4})
    updated["metadata"] = current["metadata"]
    registry.update(CRD_KIND, "", "widgets.example.com", updated, version="v1")
    kind = registry.kind_for(GROUP, "v1", "widgets")
    assert registry.create(kind, "default", widget("a", color="red"), version="v1")[0]["spec"]["color"] == "red"
    with pytest.raises(Invalid, match=re.escape("spec.color: Too long: may not be more than 4 bytes")):
        registry.create(kind, "default", widget("b", color="purple"), version="v1")


def test_name_conflicts_are_reported_and_the_kind_not_served(registry: Registry) -> None:
    install(registry)
    gadgets = widget_crd()
    gadgets["metadata"]["name"] = "gadgets.example.com"
    gadgets["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget", "shortNames": ["wd"]}
    registry.create(CRD_KIND, "", gadgets, version="v1")
    assert conditions(registry, "gadgets.example.com") == {
        "NamesAccepted": ("False", "ShortNamesConflict", '"wd" is already in use'),
        "Established": ("False", "NotAccepted", "not all names are accepted"),
    }
    with pytest.raises(NotFound):
        registry.kind_for(GROUP, "v1", "gadgets")


def test_deleting_a_crd_deletes_its_objects(registry: Registry) -> None:
    kind = install(registry)
    registry.create(kind, "default", widget("a"), version="v1")
    registry.create(kind, "default", widget("b"), version="v1")
    events: list[WatchEvent] = []
    registry.subscribe(events.append)
    registry.delete(CRD_KIND, "", "widgets.example.com", version="v1")
    registry.store.flush()
    deleted = [
        e.object["metadata"]["name"] for e in events if e.type == "DELETED" and e.resource == "widgets.example.com"
    ]
    assert sorted(deleted) == ["a", "b"]
    with pytest.raises(NotFound):
        registry.kind_for(GROUP, "v1", "widgets")
    assert registry.store.list("widgets.example.com").items == []


def test_crds_and_their_objects_survive_a_restart(store: Store, clock: ManualClock) -> None:
    first = Registry(store, clock=clock)
    kind = install(first)
    first.create(kind, "default", widget("a"), version="v1")
    second = Registry(store, clock=clock)
    kind = second.kind_for(GROUP, "v1", "widgets")
    assert second.get(kind, "default", "a", version="v1")["spec"]["size"] == "medium"
    with pytest.raises(Invalid, match="replicas 11 > 10"):
        second.create(kind, "default", widget("b", replicas=11), version="v1")


def test_kind_sets_are_per_server(clock: ManualClock) -> None:
    one = Registry(Store(), clock=clock)
    other = Registry(Store(), clock=clock)
    install(one)
    assert one.kind_by_plural(GROUP, "widgets") is not None
    assert other.kind_by_plural(GROUP, "widgets") is None
    assert Registry(Store(), clock=clock).kind_by_plural(GROUP, "widgets") is None


def test_scale_subresource(registry: Registry) -> None:
    kind = install(registry)
    registry.create(kind, "default", widget("a"), version="v1")
    assert get_scale(registry, kind, "default", "a")["spec"] == {"replicas": 1}
    scaled = patch_scale(registry, kind, "default", "a", b'{"spec":{"replicas":3}}', "application/merge-patch+json")
    assert scaled["spec"] == {"replicas": 3}
    assert registry.get(kind, "default", "a", version="v1")["spec"]["replicas"] == 3
    with pytest.raises(Invalid, match="replicas 11 > 10"):  # the object's own rules still apply
        update_scale(registry, kind, "default", "a", {"spec": {"replicas": 11}})
    with pytest.raises(
        Invalid, match=re.escape("spec.replicas: Invalid value: -1: must be greater than or equal to 0")
    ):
        update_scale(registry, kind, "default", "a", {"spec": {"replicas": -1}})


def test_a_bare_registry_serves_kueue_once_its_crds_are_created(clock: ManualClock) -> None:
    registry = Registry(Store(), clock=clock, kinds=build_catalogue(kueue=False))
    assert registry.kind_by_plural("kueue.x-k8s.io", "clusterqueues") is None
    for crd in custom_resource_definitions():
        registry.create(CRD_KIND, "", orjson.loads(orjson.dumps(crd)), version="v1")
    cq = registry.kind_for("kueue.x-k8s.io", "v1beta2", "clusterqueues")
    bad = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "memory", "nominalQuota": "1"}]}],
                }
            ]
        },
    }
    with pytest.raises(WebhookDenied) as refused:  # Kueue's webhook rules, not only the schema
        registry.create(cq, "", bad, version="v1beta2")
    assert refused.value.code == 403
    assert refused.value.errors == [
        FieldError(
            "spec.resourceGroups[0].flavors[0].resources[0].name",
            'Invalid value: "memory": must match the name in coveredResources[0] ("cpu")',
        )
    ]
    v1beta1 = registry.kind_for("kueue.x-k8s.io", "v1beta1", "clusterqueues")
    assert v1beta1.deprecated_versions["v1beta1"] == "This version is deprecated. Use v1beta2 instead."


def test_server_side_apply_merges_lists_by_the_schemas_map_keys(registry: Registry) -> None:
    crd = widget_crd(
        ports={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "number": {"type": "integer"}},
            },
        }
    )
    kind = install(registry, crd)
    for manager, port in (("one", {"name": "http", "number": 80}), ("two", {"name": "https", "number": 443})):
        body = orjson.dumps(widget("a", ports=[port]))
        applied, _ = registry.patch(
            kind, "default", "a", body, "application/apply-patch+yaml", version="v1", field_manager=manager
        )
    assert applied["spec"]["ports"] == [{"name": "http", "number": 80}, {"name": "https", "number": 443}]
    with pytest.raises(ApiError) as refused:  # CRDs take no strategic merge patch, as in kube-apiserver
        registry.patch(kind, "default", "a", b"{}", "application/strategic-merge-patch+json", version="v1")
    assert refused.value.code == 415


def test_list_with_selectors_and_pages(registry: Registry) -> None:
    kind = install(registry)
    for name, team in (("a", "x"), ("b", "y"), ("c", "x"), ("d", "x")):
        body = widget(name)
        body["metadata"]["labels"] = {"team": team}
        registry.create(kind, "default", body, version="v1")
    first = registry.list(kind, "default", version="v1beta1", label_selector="team=x", limit=2)
    assert [o["metadata"]["name"] for o in first["items"]] == ["a", "c"]
    assert first["items"][0]["apiVersion"] == "example.com/v1beta1"
    rest = registry.list(
        kind, "default", version="v1", label_selector="team=x", continue_token=first["metadata"]["continue"]
    )
    assert [o["metadata"]["name"] for o in rest["items"]] == ["d"]
    by_name = registry.list(kind, "default", version="v1", field_selector="metadata.name=b")
    assert [o["metadata"]["name"] for o in by_name["items"]] == ["b"]


def test_the_served_kind_is_rebuilt_only_when_the_crd_spec_changes(registry: Registry) -> None:
    kind = install(registry)
    generation = registry.kinds_generation
    crd = registry.get(CRD_KIND, "", "widgets.example.com", version="v1")
    crd["metadata"]["labels"] = {"touched": "yes"}
    registry.update(CRD_KIND, "", "widgets.example.com", crd, version="v1")
    assert registry.kind_for(GROUP, "v1", "widgets") is kind
    assert registry.kinds_generation == generation  # the OpenAPI documents stay valid
    crd = registry.get(CRD_KIND, "", "widgets.example.com", version="v1")
    crd["spec"]["names"]["shortNames"] = ["wdg"]
    registry.update(CRD_KIND, "", "widgets.example.com", crd, version="v1")
    assert registry.kind_for(GROUP, "v1", "widgets").short_names == ("wdg",)
    assert registry.kinds_generation > generation


def test_a_new_storage_version_is_what_reads_in_it_return(registry: Registry) -> None:
    kind = install(registry)
    registry.create(kind, "default", widget("a"), version="v1")
    crd = registry.get(CRD_KIND, "", "widgets.example.com", version="v1")
    v1, v1beta1 = crd["spec"]["versions"]
    v1["storage"], v1beta1["storage"] = False, True
    registry.update(CRD_KIND, "", "widgets.example.com", crd, version="v1")
    kind = registry.kind_for(GROUP, "v1beta1", "widgets")
    assert kind.storage_version == "v1beta1"
    assert registry.get(kind, "default", "a", version="v1beta1")["apiVersion"] == "example.com/v1beta1"
    listed = orjson.loads(registry.list_json(kind, "default", version="v1beta1") or b"{}")
    assert [o["apiVersion"] for o in listed["items"]] == ["example.com/v1beta1"]
    assert registry.get(kind, "default", "a", version="v1")["apiVersion"] == "example.com/v1"
    crd = registry.get(CRD_KIND, "", "widgets.example.com", version="v1")
    assert crd["status"]["storedVersions"] == ["v1", "v1beta1"]


def test_status_is_written_only_through_its_subresource(registry: Registry) -> None:
    kind = install(registry)
    body = widget("a")
    body["status"] = {"replicas": 5}
    created, _ = registry.create(kind, "default", body, version="v1")
    assert "status" not in created
    created["status"] = {"replicas": 2}
    with_status, _ = registry.update(kind, "default", "a", created, version="v1", subresource="status")
    assert with_status["status"] == {"replicas": 2}
    with_status["status"] = {"replicas": 9}
    with_status["spec"]["size"] = "large"
    main, _ = registry.update(kind, "default", "a", with_status, version="v1")
    assert (main["spec"]["size"], main["status"]) == ("large", {"replicas": 2})
    assert main["metadata"]["generation"] == 2
