"""One invalid field (:class:`FieldError`) and constructors that word it the way kube-apiserver does.

Owns the message shapes ("Required value", ``Invalid value: "x": detail``, ``Unsupported value``,
``Duplicate value`` ...), so every validator in ``api/`` reports errors that read like the real
API server's and carry the matching ``StatusCause`` reason. Also owns path rendering helpers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FieldError",
    "duplicate",
    "forbidden",
    "invalid",
    "join",
    "not_supported",
    "render_value",
    "required",
    "too_long",
    "too_many",
    "type_invalid",
]


@dataclass(frozen=True, slots=True)
class FieldError:
    """One invalid field, shaped like a Kubernetes ``StatusCause``.

    ``type`` is the Kubernetes cause type: FieldValueRequired, FieldValueInvalid,
    FieldValueNotSupported, FieldValueDuplicate, FieldValueForbidden, FieldValueTooLong,
    FieldValueTooMany, FieldValueTypeInvalid.
    """

    field: str
    """Path like ``spec.resourceGroups[0].flavors[0].resources[1].nominalQuota``."""
    message: str
    type: str = "FieldValueInvalid"
    webhook: str = dataclasses.field(default="", compare=False)
    """Set when a validating admission webhook (Kueue's ``vworkload.kb.io``, ...) found the problem
    rather than the kind's schema: kube-apiserver then reports the denial as a 403, not a 422."""


def join(path: str, child: str | int) -> str:
    """``join("spec", "x") == "spec.x"``; ``join("spec.a", 0) == "spec.a[0]"``."""
    if isinstance(child, int):
        return f"{path}[{child}]"
    if not path:
        return child
    if any(c in child for c in "./[]") and not child.startswith("["):
        return f"{path}[{child}]"
    return f"{path}.{child}"


def render_value(value: Any) -> str:
    """Go's ``%#v``-like rendering used inside messages: strings quoted, numbers bare."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, f"Required value: {detail}" if detail else "Required value", "FieldValueRequired")


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {render_value(value)}: {detail}", "FieldValueInvalid")


def type_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {render_value(value)}: {detail}", "FieldValueTypeInvalid")


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    options = ", ".join(json.dumps(v) for v in valid)
    return FieldError(
        path, f"Unsupported value: {render_value(value)}: supported values: {options}", "FieldValueNotSupported"
    )


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {render_value(value)}", "FieldValueDuplicate")


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}", "FieldValueForbidden")


def too_long(path: str, max_length: int) -> FieldError:
    return FieldError(path, f"Too long: may not be more than {max_length} bytes", "FieldValueTooLong")


def too_many(path: str, actual: int, max_items: int) -> FieldError:
    return FieldError(path, f"Too many: {actual}: must have at most {max_items} items", "FieldValueTooMany")
