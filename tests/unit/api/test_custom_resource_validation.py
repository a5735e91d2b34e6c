"""Custom resources validated, defaulted and pruned as kube-apiserver does, from their CRD alone."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.kinds.custom.custom_kinds import custom_kind
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.kind_info import KindInfo
from pykueue.registry.decode import check_fields

SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "port": {"x-kubernetes-int-or-string": True},
        "size": {"type": "string", "enum": ["small", "large"]},
        "name": {"type": "string", "pattern": "^(a+)+$"},
        "at": {"type": "string", "format": "date-time"},
        "id": {"type": "string", "format": "uuid"},
        "ip": {"type": "string", "format": "ipv4"},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "ports": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "number": {"type": "integer", "default": 80}},
            },
        },
        "template": {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}},
        },
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        "limits": {"type": "object", "default": {}, "properties": {"cpu": {"type": "integer", "default": 2}}},
        "owner": {
            "type": "string",
            "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "owner is immutable"}],
        },
        "peers": {
            "type": "array",
            "items": {"type": "string"},
            "x-kubernetes-validations": [
                {"rule": "self.all(p, self.exists_one(q, q == p))", "reason": "FieldValueDuplicate"}
            ],
        },
        "secret": {
            "type": "string",
            "x-kubernetes-validations": [
                {"rule": "self.startsWith('s-')", "message": "must start with s-", "reason": "FieldValueForbidden"}
            ],
        },
    },
}


def kind() -> KindInfo:
    crd = {
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": SPEC}}},
                }
            ],
        },
    }
    return custom_kind(crd)


def thing(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": spec,
    }


def errors(spec: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
    info = kind()
    return info.validate(thing(**spec), thing(**old) if old is not None else None)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"port": True},
            FieldError(
                "spec.port",
                'Invalid value: "boolean": spec.port in body must be of type integer-or-string: "boolean"',
                "FieldValueTypeInvalid",
            ),
        ),
        (
            {"size": "medium"},
            FieldError(
                "spec.size", 'Unsupported value: "medium": supported values: "small", "large"', "FieldValueNotSupported"
            ),
        ),
        (
            {"name": "a" * 40 + "!"},
            FieldError("spec.name", f"Invalid value: \"{'a' * 40}!\": spec.name in body should match '^(a+)+$'"),
        ),
        (
            {"at": "yesterday"},
            FieldError("spec.at", 'Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday"'),
        ),
        (
            {"id": "not-a-uuid"},
            FieldError("spec.id", 'Invalid value: "not-a-uuid": spec.id in body must be of type uuid: "not-a-uuid"'),
        ),
        (
            {"ip": "10.0.0.256"},
            FieldError("spec.ip", 'Invalid value: "10.0.0.256": spec.ip in body must be of type ipv4: "10.0.0.256"'),
        ),
        ({"peers": ["a", "a"]}, FieldError("spec.peers", 'Duplicate value: "array"', "FieldValueDuplicate")),
        ({"tags": ["a", "a"]}, FieldError("spec.tags[1]", 'Duplicate value: "a"', "FieldValueDuplicate")),
        (
            {"ports": [{"name": "http"}, {"name": "http"}]},
            FieldError("spec.ports[1]", 'Duplicate value: {"name":"http"}', "FieldValueDuplicate"),
        ),
        (
            {"template": {"spec": {}}},
            FieldError("spec.template.apiVersion", "Required value: must not be empty", "FieldValueRequired"),
        ),
        ({"secret": "x"}, FieldError("spec.secret", "Forbidden: must start with s-", "FieldValueForbidden")),
    ],
)
def test_each_schema_rule_refuses_with_its_message(spec: dict[str, Any], expected: FieldError) -> None:
    found = errors(spec)
    if expected.field == "spec.template.apiVersion":
        assert found == [
            expected,
            FieldError("spec.template.kind", "Required value: must not be empty", "FieldValueRequired"),
        ]
    else:
        assert found == [expected]


def test_valid_values_pass() -> None:
    assert (
        errors(
            {
                "port": 8080,
                "size": "small",
                "name": "aaa",
                "at": "2026-01-01T00:00:00Z",
                "id": "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
                "ip": "10.0.0.1",
                "tags": ["a", "b"],
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
                "secret": "s-1",
            }
        )
        == []
    )
    assert errors({"port": "http"}) == []


def test_defaults_fill_nested_objects_and_map_list_items() -> None:
    defaulted = kind().default(thing(ports=[{"name": "http"}]))
    assert defaulted["spec"]["limits"] == {"cpu": 2}
    assert defaulted["spec"]["ports"] == [{"name": "http", "number": 80}]


def test_transition_rules_run_on_update_only() -> None:
    assert errors({"owner": "ann"}) == []
    assert errors({"owner": "bob"}, old={"owner": "ann"}) == [
        FieldError("spec.owner", 'Invalid value: "string": owner is immutable')
    ]


def test_ratcheting_keeps_an_unchanged_invalid_value() -> None:
    assert errors({"size": "medium", "port": 1}, old={"size": "medium", "port": 2}) == []
    assert errors({"size": "huge"}, old={"size": "medium"}) == [
        FieldError(
            "spec.size", 'Unsupported value: "huge": supported values: "small", "large"', "FieldValueNotSupported"
        )
    ]


def test_message_expression_and_field_path() -> None:
    crd = {
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                                    "x-kubernetes-validations": [
                                        {
                                            "rule": "self.min <= self.max",
                                            "fieldPath": ".min",
                                            "message": "static",
                                            "messageExpression": "'min ' + string(self.min) + ' is above max '"
                                            " + string(self.max)",
                                        }
                                    ],
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    info = custom_kind(crd)
    assert info.validate(thing(min=3, max=2), None) == [
        FieldError("spec.min", 'Invalid value: "object": min 3 is above max 2')
    ]


def test_unknown_fields_are_pruned_except_where_preserved() -> None:
    info = kind()
    obj = thing(
        port=1,
        color="red",
        extra={"anything": {"goes": 1}},
        template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": "1", "y": 2}},
    )
    warnings = check_fields(info, obj, "v1", "Warn")
    assert sorted(warnings) == ['unknown field "spec.color"', 'unknown field "spec.template.spec.y"']
    assert obj["spec"] == {
        "port": 1,
        "extra": {"anything": {"goes": 1}},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": "1"}},
    }


def test_a_crds_patterns_have_re2_semantics() -> None:
    # Python's re would let "$" match before a trailing newline; RE2 (as kube-apiserver) does not
    crd = {
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"code": {"type": "string", "pattern": "^[a-z]+$"}},
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    info = custom_kind(crd)
    assert info.validate(thing(code="abc"), None) == []
    assert info.validate(thing(code="abc\n"), None) == [
        FieldError("spec.code", "Invalid value: \"abc\\n\": spec.code in body should match '^[a-z]+$'")
    ]
