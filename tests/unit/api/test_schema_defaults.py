"""Schema defaults reach nested properties; subtrees without defaults are skipped, not broken."""

from __future__ import annotations

from typing import Any

from pykueue.api.schema.defaults import _has_defaults, apply_schema_defaults

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plain": {"type": "object", "properties": {"a": {"type": "string"}}},
        "sets": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "inner": {"type": "object", "properties": {"mode": {"type": "string", "default": "Auto"}}},
                },
            },
        },
        "byName": {
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}},
        },
    },
}


def test_nested_defaults_apply_through_lists_and_maps() -> None:
    value: dict[str, Any] = {"plain": {}, "sets": [{"inner": {}}, {}], "byName": {"x": {}, "y": {"n": 5}}}
    apply_schema_defaults(_SCHEMA, value)
    assert value == {"plain": {}, "sets": [{"inner": {"mode": "Auto"}}, {}], "byName": {"x": {"n": 1}, "y": {"n": 5}}}


def test_only_subtrees_with_defaults_are_walked() -> None:
    properties = _SCHEMA["properties"]
    assert _has_defaults(_SCHEMA)
    assert not _has_defaults(properties["plain"])
    assert _has_defaults(properties["sets"])
    assert _has_defaults(properties["byName"])
    # A schema built later at a recycled address is judged afresh (the memo holds its node).
    for _ in range(100):
        assert not _has_defaults({"type": "object", "properties": {"a": {"type": "string"}}})
        assert _has_defaults({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}})


def _reference_default(group: str, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The definition: a full private copy, schema defaults, then the per-kind defaults."""
    from pykueue.api.catalogue import build_catalogue
    from pykueue.api.kinds.kueue.workload_defaults import default_requests
    from pykueue.api.meta.jsoncopy import json_copy

    info = build_catalogue().find(group, kind)
    assert info is not None
    out = json_copy(obj)
    apply_schema_defaults(info.schema[info.storage_version], out)
    if kind == "Workload":
        default_requests(out)
    return out


def _cases() -> list[tuple[str, dict[str, Any]]]:
    from pykueue.testing.builders.raw_specs import cluster_queue, pod_template, reserved, workload

    limits_only = pod_template()
    limits_only["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    partly = pod_template()
    partly["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}, "limits": {"cpu": "2", "memory": "1Gi"}}
    bare_cq = cluster_queue()
    for key in ("queueingStrategy", "namespaceSelector", "preemption", "flavorFungibility", "stopPolicy"):
        bare_cq["spec"].pop(key, None)
    return [
        ("Workload", workload()),
        ("Workload", reserved(workload(), admitted=True)),
        ("Workload", workload(pod_sets=[{"name": "main", "count": 2, "template": limits_only}])),
        ("Workload", workload(pod_sets=[{"name": "main", "count": 1, "template": partly}])),
        ("ClusterQueue", bare_cq),
        (
            "LocalQueue",
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": "ns"},
                "spec": {"clusterQueue": "cq"},
            },
        ),
    ]


def test_copy_on_write_defaulting_equals_a_full_copy_and_leaves_the_input_alone() -> None:
    """Only fields that receive a default are copied: the result must still be exactly what
    defaulting a full private copy gives, and the input must stay as it was."""
    from pykueue.api.catalogue import build_catalogue
    from pykueue.api.meta.jsoncopy import json_copy

    catalogue = build_catalogue()

    changed = 0
    for kind, obj in _cases():
        before = json_copy(obj)
        kind_info = catalogue.find("kueue.x-k8s.io", kind)
        assert kind_info is not None
        got = kind_info.default(obj)
        assert got == _reference_default("kueue.x-k8s.io", kind, before), kind
        assert obj == before, f"{kind}: defaulting mutated its argument"
        assert got is not obj
        changed += got != before
    assert changed >= 3  # the cases do exercise defaults (CQ fields, requests from limits)
