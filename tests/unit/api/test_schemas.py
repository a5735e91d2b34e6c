"""Schema sanity: structural, $ref-free, described, with Kueue's markers; CRDs render from them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pykueue.api.catalogue import build_catalogue
from pykueue.api.crds import custom_resource_definitions
from pykueue.api.schema.structural import validate_schema
from pykueue.testing.builders.raw_specs import info

KUEUE_KINDS = [k for k in list(build_catalogue()) if k.group == "kueue.x-k8s.io"]


def _nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from _nodes(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from _nodes(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], f"{path}{{}}")


@pytest.mark.parametrize("kind", list(build_catalogue()), ids=lambda k: k.resource_key)
def test_every_schema_is_structural(kind: Any) -> None:
    for version in kind.versions:
        for path, node in _nodes(kind.schema[version]):
            assert not {"$ref", "$defs", "title"} & node.keys(), path
            if node.get("x-kubernetes-int-or-string"):
                continue
            assert "anyOf" not in node, path
            assert "type" in node, path
            if node["type"] == "object" and path != ".metadata":
                assert (
                    "properties" in node
                    or "additionalProperties" in node
                    or node.get("x-kubernetes-preserve-unknown-fields")
                ), path


@pytest.mark.parametrize("kind", KUEUE_KINDS, ids=lambda k: k.kind)
def test_every_kueue_field_has_a_description(kind: Any) -> None:
    for version in kind.versions:
        missing = [
            path
            for path, node in _nodes(kind.schema[version])
            if path and path != ".metadata" and not path.endswith(("[]", "{}")) and not node.get("description")
        ]
        assert missing == [], (version, missing[:5])


def test_kueue_markers() -> None:
    cq = info("ClusterQueue").schema["v1beta2"]["properties"]["spec"]["properties"]
    flavors = cq["resourceGroups"]["items"]["properties"]["flavors"]
    assert flavors["x-kubernetes-list-type"] == "map"
    assert flavors["x-kubernetes-list-map-keys"] == ["name"]
    quota = flavors["items"]["properties"]["resources"]["items"]["properties"]["nominalQuota"]
    assert quota["x-kubernetes-int-or-string"] is True
    assert quota["pattern"].startswith("^(\\+|-)?")
    assert cq["queueingStrategy"]["enum"] == ["StrictFIFO", "BestEffortFIFO"]
    assert cq["queueingStrategy"]["default"] == "BestEffortFIFO"
    assert cq["resourceGroups"]["maxItems"] == 16
    wl = info("Workload").schema["v1beta2"]["properties"]["spec"]["properties"]
    assert wl["podSets"]["maxItems"] == 18
    assert any("minCount" in r["rule"] for r in wl["podSets"]["x-kubernetes-validations"])
    template = wl["podSets"]["items"]["properties"]["template"]
    assert "containers" in template["properties"]["spec"]["properties"]


def test_kubectl_explain_style_descriptions_for_core_kinds() -> None:
    job = info("Job", "batch").schema["v1"]
    spec = job["properties"]["spec"]
    assert "retries" in spec["properties"]["backoffLimit"]["description"]
    requests = spec["properties"]["template"]["properties"]["spec"]["properties"]["containers"]["items"]["properties"][
        "resources"
    ]["properties"]["requests"]
    assert requests["additionalProperties"]["x-kubernetes-int-or-string"] is True
    assert job["x-kubernetes-group-version-kind"] == [{"group": "batch", "version": "v1", "kind": "Job"}]


def test_v1beta1_schema_differences() -> None:
    cq = info("ClusterQueue").schema["v1beta1"]["properties"]["spec"]["properties"]
    assert "cohort" in cq
    assert "cohortName" not in cq
    assert "Borrow" in cq["flavorFungibility"]["properties"]["whenCanBorrow"]["enum"]
    wl = info("Workload").schema["v1beta1"]["properties"]
    assert "priorityClassName" in wl["spec"]["properties"]
    assert "priorityClassRef" not in wl["spec"]["properties"]
    assert "accumulatedPastExexcutionTimeSeconds" in wl["status"]["properties"]
    lq = info("LocalQueue").schema["v1beta1"]["properties"]["status"]["properties"]
    assert "flavorUsage" in lq
    assert "flavorsUsage" not in lq


def test_v1beta1_cq_rejects_both_admission_check_forms() -> None:
    cq_info = info("ClusterQueue")
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"admissionChecks": ["a"], "admissionChecksStrategy": {"admissionChecks": [{"name": "b"}]}},
    }
    errors = cq_info.validate(cq_info.default(obj), None)
    assert any("Either admissionChecks or admissionCheckStrategy" in e.message for e in errors)


def test_crds_render_every_crd_kind() -> None:
    crds = {c["metadata"]["name"]: c for c in custom_resource_definitions()}
    assert set(crds) == {f"{k.plural}.{k.group}" for k in list(build_catalogue()) if k.is_crd}
    cq = crds["clusterqueues.kueue.x-k8s.io"]["spec"]
    assert cq["scope"] == "Cluster"
    assert cq["names"]["shortNames"] == ["cq"]
    v1beta2, v1beta1 = cq["versions"]
    assert (v1beta2["name"], v1beta2["storage"], v1beta2["served"]) == ("v1beta2", True, True)
    assert (v1beta1["name"], v1beta1["storage"], v1beta1["deprecated"]) == ("v1beta1", False, True)
    assert v1beta1["deprecationWarning"] == "This version is deprecated. Use v1beta2 instead."
    assert v1beta2["subresources"] == {"status": {}}
    assert [c["name"] for c in v1beta2["additionalPrinterColumns"]] == [
        "Cohort",
        "Strategy",
        "Pending Workloads",
        "Admitted Workloads",
    ]
    assert v1beta1["additionalPrinterColumns"][0]["jsonPath"] == ".spec.cohort"
    wl = crds["workloads.kueue.x-k8s.io"]["spec"]
    assert wl["scope"] == "Namespaced"
    assert wl["versions"][0]["selectableFields"] == [{"jsonPath": ".status.admission.clusterQueue"}]
    rf = crds["resourceflavors.kueue.x-k8s.io"]["spec"]
    assert "subresources" not in rf["versions"][0]
    webhook = custom_resource_definitions(conversion_webhook={"url": "https://127.0.0.1:9443/convert"})
    assert webhook[0]["spec"]["conversion"]["strategy"] == "Webhook"


# ---------------------------------------------------------------- the generic CRD validator

_WIDGET = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                {"rule": "self.mode == oldSelf.mode", "message": "mode is immutable", "fieldPath": ".mode"},
            ],
            "properties": {
                "min": {"type": "integer"},
                "max": {"type": "integer", "maximum": 10},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {
                        "type": "object",
                        "required": ["k"],
                        "properties": {
                            "k": {"type": "string"},
                            "v": {
                                "type": "string",
                                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "v is immutable"}],
                            },
                        },
                    },
                },
            },
        },
    },
}


def test_generic_validator_runs_cel_with_old_self_on_any_crd() -> None:
    new = {"spec": {"min": 5, "max": 3, "mode": "b", "items": [{"k": "x", "v": "2"}, {"k": "y", "v": "1"}]}}
    old = {"spec": {"min": 1, "max": 3, "mode": "a", "items": [{"k": "x", "v": "1"}]}}
    errors = {(e.field, e.message) for e in validate_schema(_WIDGET, new, old)}
    assert ("spec", 'Invalid value: "object": min must not exceed max') in errors
    assert ("spec.mode", 'Invalid value: "object": mode is immutable') in errors
    assert ("spec.items[0].v", 'Invalid value: "string": v is immutable') in errors
    # item "y" has no correlated old item, so its transition rule does not run
    assert not any(f == "spec.items[1].v" for f, _ in errors)
    # on create no transition rule runs
    assert {e.field for e in validate_schema(_WIDGET, new)} == {"spec"}


def test_generic_validator_schema_errors() -> None:
    bad = {"spec": {"min": "1", "max": 11, "mode": "c", "items": [{"v": "x"}, {"k": "a"}, {"k": "a"}]}}
    fields = {e.field: e for e in validate_schema(_WIDGET, bad)}
    assert fields["spec.min"].type == "FieldValueTypeInvalid"
    assert "less than or equal to 10" in fields["spec.max"].message
    assert fields["spec.mode"].type == "FieldValueNotSupported"
    assert fields["spec.items[0].k"].type == "FieldValueRequired"
    assert fields["spec.items[2]"].type == "FieldValueDuplicate"


def test_cel_runtime_error_is_reported_not_raised() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.missing.field == 1", "message": "never shown"}],
            }
        },
    }
    errors = validate_schema(schema, {"spec": {}})
    assert len(errors) == 1
    assert errors[0].field == "spec"
    assert "evaluation error" in errors[0].message


def test_formats_date_time_and_byte() -> None:
    schema = {
        "type": "object",
        "properties": {"t": {"type": "string", "format": "date-time"}, "b": {"type": "string", "format": "byte"}},
    }
    assert validate_schema(schema, {"t": "2026-01-01T00:00:00Z", "b": "aGVsbG8="}) == []
    assert validate_schema(schema, {"t": "2026-01-01T00:00:00.123456+02:00"}) == []
    fields = {e.field: e.message for e in validate_schema(schema, {"t": "yesterday", "b": "not base64!"})}
    assert "must be of type date-time" in fields["t"]
    assert "illegal base64 data" in fields["b"]


def test_kubernetes_cel_extensions_and_unknown_functions() -> None:
    def rule(expr: str, value: object) -> list[str]:
        schema = {
            "type": "object",
            "properties": {"v": {"x-kubernetes-validations": [{"rule": expr, "message": "failed"}]}},
        }
        return [e.message for e in validate_schema(schema, {"v": value})]

    assert rule("self.lowerAscii() == 'abc'", "ABC") == []
    assert rule("self.split('/').size() == 2", "a/b") == []
    assert rule("quantity(self).isGreaterThan(quantity('1Gi'))", "2Gi") == []
    assert rule("quantity(self).isGreaterThan(quantity('1Gi'))", "512Mi") == ['Invalid value: "object": failed']
    assert rule("isURL(self)", "https://example.com/x") == []
    # a function no library here provides: the rule is skipped, the object is not rejected
    assert rule("self.someFutureFunction()", "x") == []


def test_core_schemas_carry_patch_merge_keys() -> None:
    spec = info("Job", "batch").schema["v1"]["properties"]["spec"]["properties"]["template"]["properties"]["spec"]
    containers = spec["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["items"]["properties"]["env"]["x-kubernetes-patch-merge-key"] == "name"
    assert containers["items"]["properties"]["volumeMounts"]["x-kubernetes-patch-merge-key"] == "mountPath"
    pod = info("Pod", "").schema["v1"]["properties"]
    assert pod["status"]["properties"]["conditions"]["x-kubernetes-patch-merge-key"] == "type"


@pytest.mark.parametrize("kind", [k for k in build_catalogue() if k.strategic_merge_keys], ids=lambda k: k.resource_key)
def test_every_merge_key_path_is_a_list_in_the_schema(kind: Any) -> None:
    from pykueue.api.kinds.core.core_schemas import _node_at

    schema = kind.schema[kind.storage_version]
    for path, key in kind.strategic_merge_keys.items():
        node = _node_at(schema, path)
        assert node is not None, path
        assert node["type"] == "array", path
        for name in key.split(","):  # server-side apply's list-map keys: several, comma-separated
            assert name in node["items"]["properties"], (path, key)


def test_crd_schemas_only_use_json_schema_props_keywords() -> None:
    """A real kube-apiserver strictly decodes CRDs: every schema keyword must be a JSONSchemaProps field."""
    from kubernetes.client import V1JSONSchemaProps

    allowed = set(V1JSONSchemaProps.attribute_map.values())
    for crd in custom_resource_definitions():
        for version in crd["spec"]["versions"]:
            for path, node in _nodes(version["schema"]["openAPIV3Schema"]):
                assert set(node) <= allowed, (crd["metadata"]["name"], path, set(node) - allowed)
