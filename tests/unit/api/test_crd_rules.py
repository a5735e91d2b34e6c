"""kube-apiserver's validation of a CustomResourceDefinition: each rule refuses one CRD with its exact message."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from pykueue.api.crds import custom_resource_definitions
from pykueue.api.kinds.custom.crd_rules import validate_crd
from pykueue.api.meta.field_errors import FieldError

Crd = dict[str, Any]

SCHEMA = "spec.versions[0].schema.openAPIV3Schema"


def crd() -> Crd:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": {"size": {"type": "string"}}}},
                        }
                    },
                }
            ],
        },
    }


def _spec_props(c: Crd) -> dict[str, Any]:
    props: dict[str, Any] = c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    return props


def _set(path: str, value: Any) -> Callable[[Crd], None]:
    def mutate(c: Crd) -> None:
        node: Any = c
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        node[parts[-1]] = value

    return mutate


def _both(*mutations: Callable[[Crd], None]) -> Callable[[Crd], None]:
    def mutate(c: Crd) -> None:
        for mutation in mutations:
            mutation(c)

    return mutate


def _add_prop(name: str, schema: dict[str, Any]) -> Callable[[Crd], None]:
    def mutate(c: Crd) -> None:
        _spec_props(c)[name] = schema

    return mutate


def _second_version(**fields: Any) -> Callable[[Crd], None]:
    def mutate(c: Crd) -> None:
        version = copy.deepcopy(c["spec"]["versions"][0])
        version.update(fields)
        c["spec"]["versions"].append(version)

    return mutate


CASES: list[tuple[str, Callable[[Crd], None], FieldError]] = [
    (
        "name",
        _set("metadata.name", "gadgets.example.com"),
        FieldError("metadata.name", 'Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group'),
    ),
    (
        "group-without-dot",
        _both(_set("spec.group", "example"), _set("metadata.name", "widgets.example")),
        FieldError("spec.group", 'Invalid value: "example": should be a domain with at least one dot'),
    ),
    (
        "scope",
        _set("spec.scope", "Global"),
        FieldError(
            "spec.scope",
            'Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
            "FieldValueNotSupported",
        ),
    ),
    (
        "plural",
        _both(_set("spec.names.plural", "Widgets"), _set("metadata.name", "Widgets.example.com")),
        FieldError(
            "spec.names.plural",
            'Invalid value: "Widgets": a DNS-1035 label must consist of lower case '
            "alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric "
            "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
    ),
    (
        "kind",
        _set("spec.names.kind", "Wid_get"),
        FieldError(
            "spec.names.kind",
            'Invalid value: "Wid_get": may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?',
        ),
    ),
    (
        "list-kind-same-as-kind",
        _set("spec.names.listKind", "Widget"),
        FieldError("spec.names.listKind", 'Invalid value: "Widget": kind and listKind may not be the same'),
    ),
    (
        "short-name",
        _set("spec.names.shortNames", ["w_d"]),
        FieldError(
            "spec.names.shortNames[0]",
            'Invalid value: "w_d": a DNS-1035 label must consist of lower case '
            "alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric "
            "character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        ),
    ),
    (
        "no-storage-version",
        _set("spec.versions.0.storage", False),
        FieldError("spec.versions", 'Invalid value: ["v1"]: must have exactly one version marked as storage version'),
    ),
    (
        "two-storage-versions",
        _second_version(name="v2"),
        FieldError(
            "spec.versions", 'Invalid value: ["v1","v2"]: must have exactly one version marked as storage version'
        ),
    ),
    (
        "duplicate-version",
        _second_version(storage=False),
        FieldError("spec.versions", 'Invalid value: ["v1","v1"]: must contain unique version names'),
    ),
    (
        "no-schema",
        _set("spec.versions.0.schema", {}),
        FieldError(f"{SCHEMA}", "Required value: schemas are required", "FieldValueRequired"),
    ),
    (
        "root-not-object",
        _set("spec.versions.0.schema.openAPIV3Schema.type", "string"),
        FieldError(f"{SCHEMA}.type", 'Invalid value: "string": must be object at the root'),
    ),
    (
        "untyped-field",
        _add_prop("color", {"description": "no type"}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[color].type",
            "Required value: must not be empty for specified object fields",
            "FieldValueRequired",
        ),
    ),
    (
        "untyped-items",
        _add_prop("tags", {"type": "array", "items": {"description": "no type"}}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[tags].items.type",
            "Required value: must not be empty for specified array items",
            "FieldValueRequired",
        ),
    ),
    (
        "int-or-string-with-type",
        _add_prop("port", {"type": "string", "x-kubernetes-int-or-string": True}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[port].type",
            'Invalid value: "string": must be empty if x-kubernetes-int-or-string is true',
        ),
    ),
    (
        "preserve-false",
        _add_prop("x", {"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[x].x-kubernetes-preserve-unknown-fields",
            "Invalid value: false: must be true or undefined",
        ),
    ),
    (
        "properties-and-additional",
        _add_prop(
            "m", {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}
        ),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[m].additionalProperties",
            "Forbidden: additionalProperties and properties are mutual exclusive",
            "FieldValueForbidden",
        ),
    ),
    (
        "metadata-fields",
        _set(
            "spec.versions.0.schema.openAPIV3Schema.properties.metadata",
            {"type": "object", "properties": {"labels": {"type": "object"}}},
        ),
        FieldError(
            f"{SCHEMA}.properties[metadata]",
            "Forbidden: must not specify anything other than name and "
            "generateName, but metadata is implicitly specified",
            "FieldValueForbidden",
        ),
    ),
    (
        "list-type",
        _add_prop("l", {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[l].x-kubernetes-list-type",
            'Unsupported value: "bag": supported values: "atomic", "set", "map"',
            "FieldValueNotSupported",
        ),
    ),
    (
        "map-list-without-keys",
        _add_prop(
            "l",
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        ),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[l].x-kubernetes-list-map-keys",
            "Required value: must not be empty if x-kubernetes-list-type is map",
            "FieldValueRequired",
        ),
    ),
    (
        "map-key-not-a-property",
        _add_prop(
            "l",
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["id"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        ),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[l].x-kubernetes-list-map-keys[0]",
            'Invalid value: "id": entries must all be names of item properties',
        ),
    ),
    (
        "set-of-objects",
        _add_prop("l", {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[l].items.type",
            'Invalid value: "object": must be a scalar type if parent array\'s x-kubernetes-list-type is set',
        ),
    ),
    (
        "pattern-not-re2",
        _add_prop("p", {"type": "string", "pattern": "(a)\\1"}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[p].pattern",
            'Invalid value: "(a)\\\\1": must be a valid regular expression, but isn\'t: invalid escape sequence: \\1',
        ),
    ),
    (
        "cel-rule-reason",
        _add_prop(
            "c", {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''", "reason": "FieldValueWrong"}]}
        ),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[c].x-kubernetes-validations[0].reason",
            'Unsupported value: "FieldValueWrong": supported values: "FieldValueInvalid", '
            '"FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"',
            "FieldValueNotSupported",
        ),
    ),
    (
        "cel-field-path",
        _add_prop("c", {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''", "fieldPath": "c"}]}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[c].x-kubernetes-validations[0].fieldPath",
            'Invalid value: "c": must be a valid path',
        ),
    ),
    (
        "default-not-in-enum",
        _add_prop("size", {"type": "string", "enum": ["s", "m"], "default": "xl"}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[size].default",
            'Unsupported value: "xl": supported values: "s", "m"',
            "FieldValueNotSupported",
        ),
    ),
    (
        "default-wrong-type",
        _add_prop("n", {"type": "integer", "default": "one"}),
        FieldError(
            f"{SCHEMA}.properties[spec].properties[n].default",
            f'Invalid value: "string": {SCHEMA}.properties[spec].properties[n].default in body must be of '
            'type integer: "string"',
            "FieldValueTypeInvalid",
        ),
    ),
    (
        "preserve-unknown-fields",
        _set("spec.preserveUnknownFields", True),
        FieldError(
            "spec.preserveUnknownFields",
            "Invalid value: true: cannot set to true, set "
            "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ),
    ),
    (
        "column-path",
        _set("spec.versions.0.additionalPrinterColumns", [{"name": "Size", "type": "string", "jsonPath": "spec.size"}]),
        FieldError(
            "spec.versions[0].additionalPrinterColumns[0].jsonPath",
            'Invalid value: "spec.size": must be a simple json path starting with .',
        ),
    ),
    (
        "column-type",
        _set("spec.versions.0.additionalPrinterColumns", [{"name": "Size", "type": "text", "jsonPath": ".spec.size"}]),
        FieldError(
            "spec.versions[0].additionalPrinterColumns[0].type",
            'Unsupported value: "text": supported values: "integer", "number", "string", "boolean", "date"',
            "FieldValueNotSupported",
        ),
    ),
    (
        "scale-path",
        _set(
            "spec.versions.0.subresources",
            {"scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": ".status.replicas"}},
        ),
        FieldError(
            "spec.versions[0].subresources.scale.specReplicasPath",
            'Invalid value: ".status.replicas": should be a json path under .spec',
        ),
    ),
]


@pytest.mark.parametrize(("mutate", "expected"), [(m, e) for _, m, e in CASES], ids=[c[0] for c in CASES])
def test_each_rule_refuses_with_kube_apiserver_message(mutate: Callable[[Crd], None], expected: FieldError) -> None:
    bad = crd()
    mutate(bad)
    assert validate_crd(bad, None) == [expected]


def test_a_valid_crd_and_pykueues_own_crds_pass() -> None:
    assert validate_crd(crd(), None) == []
    for rendered in custom_resource_definitions():
        assert validate_crd(rendered, None) == [], rendered["metadata"]["name"]


def test_cel_rule_that_does_not_compile() -> None:
    bad = crd()
    _add_prop("c", {"type": "string", "x-kubernetes-validations": [{"rule": "self ==="}]})(bad)
    [error] = validate_crd(bad, None)
    assert error.field == f"{SCHEMA}.properties[spec].properties[c].x-kubernetes-validations[0].rule"
    assert error.message.startswith('Invalid value: "self ===": compilation failed: ')


def test_update_keeps_group_and_scope_and_stored_versions() -> None:
    old = crd()
    old["status"] = {"storedVersions": ["v1"]}
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    new["spec"]["versions"][0]["name"] = "v2"
    assert validate_crd(new, old) == [
        FieldError("spec.scope", 'Invalid value: "Cluster": field is immutable'),
        FieldError("status.storedVersions[0]", 'Invalid value: "v1": must appear in spec.versions'),
    ]
