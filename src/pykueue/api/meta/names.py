"""Kubernetes name, label and selector validation (apimachinery's ``validation`` package wording).

Owns the checks every kind shares: DNS-1123 subdomains and labels, qualified names (label keys),
label values, metadata (name, labels, annotations) and LabelSelectors. Each function returns
:class:`FieldError` lists with the field path it was given, so callers only choose the path.
"""

from __future__ import annotations

import re
from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.field_errors import FieldError

__all__ = [
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "qualified_name_errors",
    "validate_label_selector",
    "validate_labels",
    "validate_metadata",
]

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_LABEL_RE = re.compile(rf"^{_LABEL}$")
_SUBDOMAIN_RE = re.compile(rf"^{_SUBDOMAIN}$")
_QNAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(rf"^{_QNAME}$")
_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_MAX_ANNOTATIONS = 256 * 1024


def dns1123_label_errors(value: str) -> list[str]:
    out: list[str] = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _LABEL_RE.match(value):
        out.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
            f"regex used for validation is '{_LABEL}')"
        )
    return out


def dns1123_subdomain_errors(value: str) -> list[str]:
    out: list[str] = []
    if len(value) > 253:
        out.append("must be no more than 253 characters")
    if not _SUBDOMAIN_RE.match(value):
        out.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
            "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
            f"regex used for validation is '{_SUBDOMAIN}')"
        )
    return out


def qualified_name_errors(value: str) -> list[str]:
    """Label keys and similar: an optional DNS-subdomain prefix, '/', and a name of ≤63 chars."""
    parts = value.split("/")
    if len(parts) == 1:
        prefix, name = "", parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
            f"used for validation is '{_QNAME}') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    out: list[str] = []
    if prefix:
        out.extend(f"prefix part {msg}" for msg in dns1123_subdomain_errors(prefix))
    if not name:
        out.append("name part must be non-empty")
    else:
        if len(name) > 63:
            out.append("name part must be no more than 63 characters")
        if not _QNAME_RE.match(name):
            out.append(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                f"used for validation is '{_QNAME}')"
            )
    return out


def label_value_errors(value: str) -> list[str]:
    out: list[str] = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _VALUE_RE.match(value):
        out.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
            "'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return out


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [fe.type_invalid(path, labels, "must be a map of string keys to string values")]
    errors: list[FieldError] = []
    for key, value in labels.items():
        errors.extend(fe.invalid(path, key, msg) for msg in qualified_name_errors(str(key)))
        if not isinstance(value, str):
            errors.append(fe.type_invalid(f"{path}[{key}]", value, "must be a string"))
        else:
            errors.extend(fe.invalid(path, value, msg) for msg in label_value_errors(value))
    return errors


def validate_metadata(meta: Any, *, name_format: str = "subdomain", path: str = "metadata") -> list[FieldError]:
    """Name (when present; generateName is the registry's), labels and annotations."""
    if meta is None:
        return []
    if not isinstance(meta, dict):
        return [fe.type_invalid(path, meta, "must be an object")]
    errors: list[FieldError] = []
    name = meta.get("name")
    generate = meta.get("generateName")
    if isinstance(name, str) and name:
        check = dns1123_label_errors if name_format == "label" else dns1123_subdomain_errors
        # A generated name's problems are the prefix's: report them where the user wrote it.
        field = (
            f"{path}.generateName"
            if isinstance(generate, str) and generate and name.startswith(generate)
            else f"{path}.name"
        )
        errors.extend(fe.invalid(field, name, msg) for msg in check(name))
    elif not generate:
        errors.append(fe.required(f"{path}.name", "name or generateName is required"))
    errors.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        total = 0
        for key, value in annotations.items():
            errors.extend(
                fe.invalid(f"{path}.annotations", key, msg) for msg in qualified_name_errors(str(key).lower())
            )
            total += len(str(key)) + len(str(value))
        if total > _MAX_ANNOTATIONS:
            errors.append(
                FieldError(
                    f"{path}.annotations",
                    f"Too long: may not be more than {_MAX_ANNOTATIONS} bytes",
                    "FieldValueTooLong",
                )
            )
    return errors


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(selector: Any, path: str) -> list[FieldError]:
    if selector is None:
        return []
    if not isinstance(selector, dict):
        return [fe.type_invalid(path, selector, "must be an object")]
    errors = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    expressions = selector.get("matchExpressions")
    for index, expr in enumerate(expressions if isinstance(expressions, list) else []):
        expr_path = f"{path}.matchExpressions[{index}]"
        if not isinstance(expr, dict):
            errors.append(fe.type_invalid(expr_path, expr, "must be an object"))
            continue
        operator = expr.get("operator")
        raw_values = expr.get("values")
        values: list[Any] = raw_values if isinstance(raw_values, list) else []
        if operator in ("In", "NotIn"):
            if not values:
                errors.append(
                    fe.required(f"{expr_path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errors.append(
                    fe.forbidden(
                        f"{expr_path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                    )
                )
        else:
            errors.append(fe.invalid(f"{expr_path}.operator", operator, "not a valid selector operator"))
        key = expr.get("key")
        if not isinstance(key, str) or not key:
            errors.append(fe.required(f"{expr_path}.key"))
        else:
            errors.extend(fe.invalid(f"{expr_path}.key", key, msg) for msg in qualified_name_errors(key))
        for vi, value in enumerate(values):
            if isinstance(value, str):
                errors.extend(fe.invalid(f"{expr_path}.values[{vi}]", value, msg) for msg in label_value_errors(value))
    return errors
