"""Body decoding by media type (``registry/bodies.py``) and the shape check (``registry/shape.py``).

Each case the property-based fuzz of the API found is pinned here by its own test, at the registry
(the HTTP side is ``tests/e2e/test_hostile_input.py``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from pykueue.api.meta.errors import BadRequest, Invalid, RequestEntityTooLarge, UnsupportedMediaType
from pykueue.registry import Registry
from pykueue.registry.bodies import MAX_DEPTH, decode_bytes, decode_object, media_type

from .conftest import kind

KUEUE = "kueue.x-k8s.io"


# ---------------------------------------------------------------------- media types


@pytest.mark.parametrize(
    ("header", "media"),
    [
        ("", "application/json"),
        ("application/json; charset=utf-8", "application/json"),
        ("Application/YAML", "application/yaml"),
        (" application/merge-patch+json ", "application/merge-patch+json"),
    ],
)
def test_media_type_of_a_content_type_header(header: str, media: str) -> None:
    assert media_type(header) == media


def test_json_media_types_never_fall_back_to_yaml() -> None:
    with pytest.raises(BadRequest, match="error decoding body"):
        decode_bytes(b"a: 1", "application/json")
    with pytest.raises(BadRequest, match="error decoding body"):
        decode_bytes(b"a: 1", "application/merge-patch+json")
    assert decode_bytes(b"a: 1", "application/yaml") == {"a": 1}


@pytest.mark.parametrize("media", ["text/plain", "application/cbor", "application/x-yaml", ""])
def test_unknown_media_types_are_415(media: str) -> None:
    with pytest.raises(UnsupportedMediaType, match="accepted media types include: application/json"):
        decode_bytes(b"{}", media)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": -Infinity}',
        b'{"a": "\xff"}',
        b'{"a": "\\ud800"}',
        b'{"a": "\\udc00"}',
        b"{'a': 1}",
        b'{"a": 1,}',
    ],
)
def test_strict_json(body: bytes) -> None:
    with pytest.raises(BadRequest) as caught:
        decode_bytes(body, "application/json")
    assert "\n" not in caught.value.to_status()["message"]


def test_json_nesting_is_limited_below_python_recursion() -> None:
    ok = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert decode_bytes(ok) is not None
    deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    with pytest.raises(BadRequest, match=f"nested more than {MAX_DEPTH} levels"):
        decode_bytes(deep)
    objects = b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1)
    with pytest.raises(BadRequest, match="nested"):
        decode_bytes(objects)
    wide = b"[" + b",".join([b"[[]]"] * 5000) + b"]"  # many brackets, shallow: served
    assert len(decode_bytes(wide)) == 5000


def test_yaml_aliases_are_refused() -> None:
    with pytest.raises(BadRequest, match="aliases are not allowed"):
        decode_bytes(b"a: &x [1, 2]\nb: *x\n", "application/yaml")
    with pytest.raises(BadRequest, match="aliases are not allowed"):
        decode_bytes(b"base: &b {x: 1}\nderived:\n  <<: *b\n", "application/apply-patch+yaml")


def test_yaml_nesting_is_refused_before_libyaml_builds_it() -> None:
    # 100,000 levels crash libyaml's recursive composer (a segfault, not an exception) if it ever sees them.
    deep = b"a: " + b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(BadRequest, match="nested more than"):
        decode_bytes(deep, "application/yaml")
    block = "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 1)) + "  " * (MAX_DEPTH + 1) + "v\n"
    with pytest.raises(BadRequest, match="nested more than"):
        decode_bytes(block.encode(), "application/yaml")


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1.0e+400"])
def test_yaml_numbers_json_cannot_hold_are_400(value: str) -> None:
    with pytest.raises(BadRequest, match="YAML to JSON"):
        decode_bytes(f"a: {value}\n".encode(), "application/yaml")


def test_yaml_reads_as_kubernetes_reads_it() -> None:
    value = decode_object(b"when: 2024-01-01\nbig: 123456789012345678901234567890\n1: one\n", "application/yaml")
    assert value == {"when": "2024-01-01", "big": 1.2345678901234568e29, "1": "one"}
    with pytest.raises(BadRequest, match="must be a JSON or YAML object"):
        decode_object(b"- a\n", "application/yaml")
    with pytest.raises(BadRequest, match="YAML to JSON"):
        decode_bytes(b"a: !!python/object:os.system x\n", "application/yaml")
    with pytest.raises(BadRequest, match="YAML to JSON"):
        decode_bytes(b'a: "\\ud800"\n', "application/yaml")


# ---------------------------------------------------------------------- patches


def test_patch_media_types(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", {"metadata": {"name": "p"}}, version="v1")
    with pytest.raises(UnsupportedMediaType):
        registry.patch(cm, "default", "p", b"{}", "application/json", version="v1")
    with pytest.raises(UnsupportedMediaType):
        registry.patch(cm, "default", "p", b"{}", "", version="v1")
    with pytest.raises(BadRequest, match="error decoding body"):
        registry.patch(cm, "default", "p", b"data: {a: b}", "application/merge-patch+json", version="v1")
    ops = b"[" + b",".join([b'{"op":"test","path":"/kind","value":"ConfigMap"}'] * 10_001) + b"]"
    with pytest.raises(RequestEntityTooLarge, match="maximum operations in a JSON patch is 10000"):
        registry.patch(cm, "default", "p", ops, "application/json-patch+json", version="v1")
    patched, _ = registry.patch(
        cm,
        "default",
        "p",
        b"{apiVersion: v1, kind: ConfigMap, data: {a: b}}",
        "application/apply-patch+yaml",
        version="v1",
        field_manager="m",
    )
    assert patched["data"] == {"a": "b"}


# ---------------------------------------------------------------------- shapes (the fuzz-found cases)


def _create(
    registry: Registry, group: str, version: str, plural: str, body: dict[str, Any], namespace: str = "default"
) -> dict[str, Any]:
    obj, _ = registry.create(kind(registry, group, version, plural), namespace, body, version=version)
    return obj


def test_metadata_name_of_the_wrong_type_is_400_on_every_kind(registry: Registry) -> None:
    with pytest.raises(BadRequest, match=re.escape("Go struct field ConfigMap.metadata.name of type string")):
        _create(registry, "", "v1", "configmaps", {"metadata": {"name": 1}})
    with pytest.raises(Invalid, match=re.escape("metadata.name in body must be of type string")):
        _create(registry, KUEUE, "v1beta2", "resourceflavors", {"metadata": {"name": 1}}, namespace="")
    with pytest.raises(BadRequest, match=re.escape("metadata.labels.a of type string")):
        _create(registry, "", "v1", "configmaps", {"metadata": {"name": "l", "labels": {"a": 1}}})


@pytest.mark.parametrize("spec", ["a string", ["a", "list"], 7, True])
def test_a_pod_spec_that_is_not_an_object_is_400(registry: Registry, spec: Any) -> None:
    with pytest.raises(BadRequest, match=re.escape("Go struct field Pod.spec of type object")):
        _create(registry, "", "v1", "pods", {"metadata": {"name": "p"}, "spec": spec})


def test_a_pod_spec_of_null_is_an_empty_spec(registry: Registry) -> None:
    with pytest.raises(Invalid, match=re.escape("spec.containers: Required value")):
        _create(registry, "", "v1", "pods", {"metadata": {"name": "p"}, "spec": None})


@pytest.mark.parametrize("spec", ["a string", ["a", "list"]])
def test_a_namespace_spec_that_is_not_an_object_is_400(registry: Registry, spec: Any) -> None:
    with pytest.raises(BadRequest, match=re.escape("Go struct field Namespace.spec of type object")):
        _create(registry, "", "v1", "namespaces", {"metadata": {"name": "n"}, "spec": spec}, namespace="")


def test_a_namespace_spec_of_null_gets_the_default_finalizer(registry: Registry) -> None:
    created = _create(registry, "", "v1", "namespaces", {"metadata": {"name": "n"}, "spec": None}, namespace="")
    assert created["spec"] == {"finalizers": ["kubernetes"]}


def _job(parallelism: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "j"},
        "spec": {
            "parallelism": parallelism,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}},
        },
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (2**31, "of type int32"),
        (-(2**31) - 1, "of type int32"),
        (float(2**80), "of type integer"),
        (1.2e29, re.escape("number 1.2e+29 into Go struct field Job.spec.parallelism of type integer")),
        (1e308, "of type integer"),
        (1.5, "of type integer"),
        ("3", "string into Go struct field"),
        (True, "boolean into Go struct field"),
    ],
)
def test_int32_fields_hold_int32s(registry: Registry, value: Any, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        _create(registry, "batch", "v1", "jobs", _job(value))


def test_a_python_integer_json_cannot_hold_is_400(registry: Registry) -> None:
    """JSON bodies never hold one (orjson reads 2^80 as a float); an in-process caller can pass one."""
    with pytest.raises(BadRequest, match="64-bit"):
        _create(registry, "batch", "v1", "jobs", _job(2**80))


def test_an_integral_float_is_that_integer(registry: Registry) -> None:
    created = _create(registry, "batch", "v1", "jobs", _job(2.0))
    assert created["spec"]["parallelism"] == 2
    assert isinstance(created["spec"]["parallelism"], int)


def test_int64_fields_hold_int64s(registry: Registry) -> None:
    job = _job(1)
    job["spec"]["activeDeadlineSeconds"] = 2**63
    with pytest.raises(BadRequest, match="activeDeadlineSeconds of type int64"):
        _create(registry, "batch", "v1", "jobs", job)


def test_custom_resources_get_422_for_wrong_types_and_int32_ranges(registry: Registry) -> None:
    with pytest.raises(Invalid) as caught:
        _create(
            registry,
            KUEUE,
            "v1beta2",
            "workloadpriorityclasses",
            {"metadata": {"name": "p"}, "value": 2**31},
            namespace="",
        )
    assert caught.value.code == 422
    assert "value in body must be of type int32" in str(caught.value)
    with pytest.raises(Invalid, match="spec in body must be of type object"):
        _create(registry, KUEUE, "v1beta2", "clusterqueues", {"metadata": {"name": "cq"}, "spec": "x"}, namespace="")


def test_kueue_counts_are_int32_as_in_kueues_crds_and_quantities_are_not(registry: Registry) -> None:
    """Kueue declares its counts as Go int32: a Workload's pod count of 2^31 is refused at its path,
    while a quantity (int-or-string) of 2^40 bytes in a ClusterQueue's quota is not an int32."""
    workload: dict[str, Any] = {
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {
            "queueName": "q",
            "podSets": [
                {
                    "name": "main",
                    "count": 2**31,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            ],
        },
    }
    with pytest.raises(Invalid) as caught:
        _create(registry, KUEUE, "v1beta2", "workloads", workload)
    assert "spec.podSets[0].count in body must be of type int32" in str(caught.value)
    workload["spec"]["podSets"][0]["count"] = 2**31 - 1
    assert _create(registry, KUEUE, "v1beta2", "workloads", workload)["spec"]["podSets"][0]["count"] == 2**31 - 1
    cq = {
        "metadata": {"name": "big"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["memory"],
                    "flavors": [{"name": "f", "resources": [{"name": "memory", "nominalQuota": 2**40}]}],
                }
            ]
        },
    }
    created = _create(registry, KUEUE, "v1beta2", "clusterqueues", cq, namespace="")
    assert created["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] in (2**40, str(2**40))


def test_a_patch_is_shape_checked_where_it_changed(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", {"metadata": {"name": "p"}, "data": {"a": "b"}}, version="v1")
    with pytest.raises(BadRequest, match=re.escape("ConfigMap.data.c of type string")):
        registry.patch(cm, "default", "p", b'{"data": {"c": 1}}', "application/merge-patch+json", version="v1")
    with pytest.raises(BadRequest, match=re.escape("ConfigMap.metadata.name of type string")):
        registry.patch(
            cm,
            "default",
            "p",
            b'[{"op": "replace", "path": "/metadata/name", "value": 5}]',
            "application/json-patch+json",
            version="v1",
        )
