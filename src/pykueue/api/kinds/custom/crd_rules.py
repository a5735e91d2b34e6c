"""kube-apiserver's validation of a CustomResourceDefinition itself (``apiextensions.k8s.io/v1``).

Owns the rules a CRD must pass before its kind is served: the object's name is
``<plural>.<group>``, names are DNS-1035 labels, scope is Cluster or Namespaced, version names are
unique and exactly one is the storage version, every version has a structural schema (types
everywhere, ``object`` at the root, metadata restricted to name/generateName, valid list types,
RE2 patterns that compile, CEL rules that compile), printer columns with simple JSONPaths and
known types, scale paths under ``.spec``/``.status``, and on update an immutable group and scope
and stored versions still listed. Messages are kube-apiserver's, field paths included.

Invariant: pure; never raises on user input.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.schema.structural import pattern_error, rule_compile_error, validate_schema

__all__ = ["validate_crd"]

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")
_COLUMN_FORMATS = ("int32", "int64", "float", "double", "byte", "date", "date-time", "password")
_LIST_TYPES = ("atomic", "set", "map")
_SCHEMA_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def _dns1035(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    if len(value) > 63:
        return "must be no more than 63 characters"
    return None if _DNS1035.match(value) else _DNS1035_MESSAGE


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


def _names_errors(names: JSONDict) -> list[FieldError]:
    errors: list[FieldError] = []
    path = "spec.names"
    for key in ("plural", "singular"):
        value = names.get(key)
        if not value:
            if key == "plural":
                errors.append(fe.required(f"{path}.{key}"))
            continue
        if (problem := _dns1035(value)) is not None:
            errors.append(fe.invalid(f"{path}.{key}", value, problem))
    kind = names.get("kind")
    if not kind:
        errors.append(fe.required(f"{path}.kind"))
    elif not isinstance(kind, str) or _dns1035(kind.lower()) is not None:
        errors.append(
            fe.invalid(
                f"{path}.kind", kind, "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?"
            )
        )
    list_kind = names.get("listKind")
    if list_kind is not None:
        if not isinstance(list_kind, str) or _dns1035(list_kind.lower()) is not None:
            errors.append(
                fe.invalid(
                    f"{path}.listKind",
                    list_kind,
                    "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?",
                )
            )
        elif list_kind == kind:
            errors.append(fe.invalid(f"{path}.listKind", list_kind, "kind and listKind may not be the same"))
    for key in ("shortNames", "categories"):
        for index, value in enumerate(names.get(key) or ()):
            if (problem := _dns1035(value)) is not None:
                errors.append(fe.invalid(f"{path}.{key}[{index}]", value, problem))
    return errors


def _schema_errors(schema: Any, path: str, *, root: bool = False) -> list[FieldError]:
    """Structural-schema rules for one node and everything beneath it."""
    if not isinstance(schema, dict):
        return [fe.invalid(path, schema, "must be an object")]
    errors: list[FieldError] = []
    kind = schema.get("type")
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    preserve = schema.get("x-kubernetes-preserve-unknown-fields")
    if preserve is not None and preserve is not True:
        errors.append(fe.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", preserve, "must be true or undefined"))
    if kind is not None and kind not in _SCHEMA_TYPES:
        errors.append(fe.not_supported(f"{path}.type", kind, _SCHEMA_TYPES))
    if int_or_string and kind:
        errors.append(fe.invalid(f"{path}.type", kind, "must be empty if x-kubernetes-int-or-string is true"))
    if root:
        if kind != "object":
            errors.append(
                fe.required(f"{path}.type", "must not be empty at the root")
                if not kind
                else fe.invalid(f"{path}.type", kind, "must be object at the root")
            )
        metadata = _dict(schema.get("properties")).get("metadata")
        if isinstance(metadata, dict) and set(_dict(metadata.get("properties"))) - {"name", "generateName"}:
            errors.append(
                fe.forbidden(
                    f"{path}.properties[metadata]",
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                )
            )
    if schema.get("x-kubernetes-embedded-resource") is True and kind != "object":
        errors.append(fe.required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
    properties = schema.get("properties")
    if properties is not None and schema.get("additionalProperties") not in (None, False):
        errors.append(
            fe.forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive")
        )
    for name, sub in _dict(properties).items():
        sub_path = f"{path}.properties[{name}]"
        if (
            isinstance(sub, dict)
            and not sub.get("type")
            and not sub.get("x-kubernetes-int-or-string")
            and not sub.get("x-kubernetes-preserve-unknown-fields")
        ):
            errors.append(fe.required(f"{sub_path}.type", "must not be empty for specified object fields"))
        errors.extend(_schema_errors(sub, sub_path))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        errors.extend(_schema_errors(extra, f"{path}.additionalProperties"))
    items = schema.get("items")
    if kind == "array" and items is None:
        errors.append(fe.required(f"{path}.items", "must be specified"))
    if isinstance(items, dict):
        if (
            not items.get("type")
            and not items.get("x-kubernetes-int-or-string")
            and not items.get("x-kubernetes-preserve-unknown-fields")
        ):
            errors.append(fe.required(f"{path}.items.type", "must not be empty for specified array items"))
        errors.extend(_schema_errors(items, f"{path}.items"))
    errors.extend(_list_type_errors(schema, path))
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and (problem := pattern_error(pattern)) is not None:
        errors.append(
            fe.invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {problem}")
        )
    for index, rule in enumerate(schema.get("x-kubernetes-validations") or ()):
        errors.extend(_rule_errors(rule, f"{path}.x-kubernetes-validations[{index}]"))
    if "default" in schema and not errors:
        # a default must itself be valid against its schema (CEL rules aside: kube runs those too,
        # but a rule may read siblings a lone default does not have)
        plain = {k: v for k, v in schema.items() if k not in ("default", "x-kubernetes-validations")}
        errors.extend(validate_schema(plain, schema["default"], path=f"{path}.default"))
    return errors


def _list_type_errors(schema: JSONDict, path: str) -> list[FieldError]:
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys")
    errors: list[FieldError] = []
    if list_type is None:
        if keys:
            errors.append(
                fe.forbidden(f"{path}.x-kubernetes-list-map-keys", "must be empty if x-kubernetes-list-type is not map")
            )
        return errors
    if list_type not in _LIST_TYPES:
        return [fe.not_supported(f"{path}.x-kubernetes-list-type", list_type, _LIST_TYPES)]
    if schema.get("type") != "array":
        errors.append(
            fe.invalid(f"{path}.type", schema.get("type"), "must be array if x-kubernetes-list-type is specified")
        )
    items = _dict(schema.get("items"))
    if list_type == "map":
        if not keys:
            errors.append(
                fe.required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map")
            )
        if items.get("type") != "object":
            errors.append(
                fe.invalid(
                    f"{path}.items.type",
                    items.get("type"),
                    "must be object if parent array's x-kubernetes-list-type is map",
                )
            )
        properties = _dict(items.get("properties"))
        for index, key in enumerate(keys or ()):
            if key not in properties:
                errors.append(
                    fe.invalid(
                        f"{path}.x-kubernetes-list-map-keys[{index}]",
                        key,
                        "entries must all be names of item properties",
                    )
                )
    elif keys:
        errors.append(
            fe.forbidden(f"{path}.x-kubernetes-list-map-keys", "must be empty if x-kubernetes-list-type is not map")
        )
    if list_type == "set" and items.get("type") in ("object", "array"):
        errors.append(
            fe.invalid(
                f"{path}.items.type",
                items.get("type"),
                "must be a scalar type if parent array's x-kubernetes-list-type is set",
            )
        )
    return errors


def _rule_errors(rule: Any, path: str) -> list[FieldError]:
    if not isinstance(rule, dict):
        return [fe.invalid(path, rule, "must be an object")]
    text = rule.get("rule")
    if not isinstance(text, str) or not text.strip():
        return [fe.required(f"{path}.rule")]
    errors: list[FieldError] = []
    if (problem := rule_compile_error(text)) is not None:
        errors.append(fe.invalid(f"{path}.rule", text, f"compilation failed: {problem}"))
    message_expression = rule.get("messageExpression")
    if isinstance(message_expression, str) and (problem := rule_compile_error(message_expression)) is not None:
        errors.append(
            fe.invalid(
                f"{path}.messageExpression", message_expression, f"messageExpression compilation failed: {problem}"
            )
        )
    message = rule.get("message")
    if isinstance(message, str) and message and not message.strip():
        errors.append(fe.invalid(f"{path}.message", message, "must be non-empty if specified"))
    reason = rule.get("reason")
    reasons = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")
    if reason is not None and reason not in reasons:
        errors.append(fe.not_supported(f"{path}.reason", reason, reasons))
    field_path = rule.get("fieldPath")
    if field_path is not None and (not isinstance(field_path, str) or not field_path.startswith(".")):
        errors.append(fe.invalid(f"{path}.fieldPath", field_path, "must be a valid path"))
    return errors


def _column_errors(columns: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, column in enumerate(columns or ()):
        where = f"{path}[{index}]"
        column = _dict(column)
        if not column.get("name"):
            errors.append(fe.required(f"{where}.name"))
        kind = column.get("type")
        if not kind:
            errors.append(fe.required(f"{where}.type"))
        elif kind not in _COLUMN_TYPES:
            errors.append(fe.not_supported(f"{where}.type", kind, _COLUMN_TYPES))
        fmt = column.get("format")
        if fmt and fmt not in _COLUMN_FORMATS:
            errors.append(fe.not_supported(f"{where}.format", fmt, _COLUMN_FORMATS))
        json_path = column.get("jsonPath")
        if not json_path:
            errors.append(fe.required(f"{where}.jsonPath"))
        elif not isinstance(json_path, str) or not json_path.startswith("."):
            errors.append(fe.invalid(f"{where}.jsonPath", json_path, "must be a simple json path starting with ."))
        priority = column.get("priority")
        if isinstance(priority, int) and priority < 0:
            errors.append(fe.invalid(f"{where}.priority", priority, "must be non-negative"))
    return errors


def _scale_errors(scale: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    scale = _dict(scale)
    for key, under in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        value = scale.get(key)
        if not value:
            errors.append(fe.required(f"{path}.{key}"))
        elif not isinstance(value, str) or not value.startswith(under) or value.endswith("."):
            errors.append(fe.invalid(f"{path}.{key}", value, f"should be a json path under {under[:-1]}"))
    selector = scale.get("labelSelectorPath")
    if selector is not None and (not isinstance(selector, str) or not selector.startswith((".spec.", ".status."))):
        errors.append(
            fe.invalid(f"{path}.labelSelectorPath", selector, "should be a json path under either .spec or .status")
        )
    return errors


_CHECKED: dict[bytes, list[FieldError]] = {}
"""Verdicts on ``spec.versions`` by their JSON: every start-up stores the same rendered CRDs, whose
schemas are large (a Workload's is ~650 kB); checking one again would give the same answer."""


def _versions_errors(versions: Any) -> list[FieldError]:
    try:
        key = orjson.dumps(versions)
    except (TypeError, orjson.JSONEncodeError):
        return _check_versions(versions)
    hit = _CHECKED.get(key)
    if hit is None:
        if len(_CHECKED) >= 64:
            _CHECKED.clear()
        hit = _CHECKED[key] = _check_versions(versions)
    return list(hit)


def _check_versions(versions: Any) -> list[FieldError]:
    if not isinstance(versions, list) or not versions:
        return [
            fe.invalid(
                "spec.versions",
                versions if versions is not None else [],
                "must have exactly one version marked as storage version",
            )
        ]
    errors: list[FieldError] = []
    names: list[Any] = []
    for index, version in enumerate(versions):
        version = _dict(version)
        where = f"spec.versions[{index}]"
        name = version.get("name")
        if not name:
            errors.append(fe.required(f"{where}.name"))
        elif (problem := _dns1035(name)) is not None:
            errors.append(fe.invalid(f"{where}.name", name, problem))
        names.append(name)
        schema = _dict(version.get("schema")).get("openAPIV3Schema")
        if schema is None:
            errors.append(fe.required(f"{where}.schema.openAPIV3Schema", "schemas are required"))
        else:
            errors.extend(_schema_errors(schema, f"{where}.schema.openAPIV3Schema", root=True))
        errors.extend(_column_errors(version.get("additionalPrinterColumns"), f"{where}.additionalPrinterColumns"))
        subresources = _dict(version.get("subresources"))
        if "scale" in subresources:
            errors.extend(_scale_errors(subresources["scale"], f"{where}.subresources.scale"))
    if len(set(map(str, names))) != len(names):
        errors.append(fe.invalid("spec.versions", [n for n in names], "must contain unique version names"))
    if sum(1 for v in versions if _dict(v).get("storage") is True) != 1:
        errors.append(
            fe.invalid(
                "spec.versions",
                [_dict(v).get("name") for v in versions],
                "must have exactly one version marked as storage version",
            )
        )
    if not any(_dict(v).get("served") is True for v in versions):
        errors.append(
            fe.invalid(
                "spec.versions",
                [_dict(v).get("name") for v in versions],
                "must have at least one version marked as served",
            )
        )
    return errors


def validate_crd(crd: JSONDict, old: JSONDict | None) -> list[FieldError]:
    """Every reason kube-apiserver would refuse this CRD (``old``: the stored one, on update)."""
    spec = _dict(crd.get("spec"))
    if old is not None and old.get("spec") == crd.get("spec"):
        return _stored_versions_errors(crd, spec)  # a status write: the spec passed already
    names = _dict(spec.get("names"))
    group = spec.get("group")
    errors: list[FieldError] = []
    name = _dict(crd.get("metadata")).get("name")
    if names.get("plural") and group and name != f"{names.get('plural')}.{group}":
        errors.append(fe.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        errors.append(fe.required("spec.group"))
    elif not isinstance(group, str) or "." not in group:
        errors.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope")
    if not scope:
        errors.append(fe.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(fe.not_supported("spec.scope", scope, ("Cluster", "Namespaced")))
    errors.extend(_names_errors(names))
    errors.extend(_versions_errors(spec.get("versions")))
    if spec.get("preserveUnknownFields") is True:
        errors.append(
            fe.invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set "
                "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
            )
        )
    strategy = _dict(spec.get("conversion")).get("strategy")
    if strategy is not None and strategy not in ("None", "Webhook"):
        errors.append(fe.not_supported("spec.conversion.strategy", strategy, ("None", "Webhook")))
    if old is not None:
        old_spec = _dict(old.get("spec"))
        for key in ("group", "scope"):
            if old_spec.get(key) != spec.get(key):
                errors.append(fe.invalid(f"spec.{key}", spec.get(key), "field is immutable"))
        errors.extend(_stored_versions_errors(crd, spec))
    return errors


def _stored_versions_errors(crd: JSONDict, spec: JSONDict) -> list[FieldError]:
    stored = _dict(crd.get("status")).get("storedVersions")
    if not stored:
        return []
    listed = {_dict(v).get("name") for v in spec.get("versions") or ()}
    return [
        fe.invalid(f"status.storedVersions[{index}]", version, "must appear in spec.versions")
        for index, version in enumerate(stored)
        if version not in listed
    ]
