"""The JSON types of a decoded object, checked against its kind's schema before any other code reads it.

Owned by ``registry/``; the registry calls :func:`check_shape` on every create, update and patch
right after ``fieldValidation`` (:mod:`.decode`), so admission hooks, defaulting, pruning and the
kinds' own rules only ever see an object whose every declared field has its declared JSON type.
kube-apiserver gets the same guarantee from decoding into Go structs; here the schema stands in for
the struct:

- a value of the wrong type (``"spec": "x"``, ``"metadata": {"name": 1}``, a string where a
  boolean goes) is refused: for a built-in kind with kube's 400 (``Pod in version "v1" cannot be
  handled as a Pod: json: cannot unmarshal string into Go struct field Pod.spec of type object``),
  for a custom resource with the 422 its structural schema gives;
- integers are Go's: ``format: int32`` fields hold -2^31..2^31-1, every other integer field an
  int64; an integral float (``1e3``) is that integer, any other number (``1.5``, ``1.2e29``) is
  not an integer;
- ``null`` is what Go makes of it: the field is absent (for a custom resource only where the
  schema does not say ``nullable: true``, as the structural schema's pruning does).

Object metadata has the same shape for every kind (``ObjectMeta``), whatever the schema says.
Subtrees equal to the stored object's (``unchanged_from``: a patch's target) are not walked again.

Invariant: raises only ``BadRequest`` / ``Invalid``; changes the object only by dropping nulls and
writing integral floats as integers.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.errors import BadRequest, Invalid
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

__all__ = ["INT32", "INT64", "check_shape"]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
_EXACT_FLOAT = 2**53
"""Beyond this a float is not an integer JSON can hold exactly (kube-openapi's rule too)."""
_MISSING: Any = object()
_MAX_ERRORS = 20

_STRING: JSONDict = {"type": "string"}
_STRING_MAP: JSONDict = {"type": "object", "additionalProperties": _STRING}
_OWNER_REFERENCE: JSONDict = {
    "type": "object",
    "properties": {
        "apiVersion": _STRING,
        "kind": _STRING,
        "name": _STRING,
        "uid": _STRING,
        "controller": {"type": "boolean"},
        "blockOwnerDeletion": {"type": "boolean"},
    },
}
OBJECT_META: JSONDict = {
    "type": "object",
    "properties": {
        "name": _STRING,
        "generateName": _STRING,
        "namespace": _STRING,
        "selfLink": _STRING,
        "uid": _STRING,
        "resourceVersion": _STRING,
        "generation": {"type": "integer", "format": "int64"},
        "creationTimestamp": _STRING,
        "deletionTimestamp": _STRING,
        "deletionGracePeriodSeconds": {"type": "integer", "format": "int64"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "ownerReferences": {"type": "array", "items": _OWNER_REFERENCE},
        "finalizers": {"type": "array", "items": _STRING},
        "managedFields": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    },
}
"""``ObjectMeta``'s JSON shape: what every kind's ``metadata`` must be."""


def check_shape(kind: KindInfo, obj: JSONDict, version: str, unchanged_from: JSONDict | None = None) -> None:
    """Raise if a field of ``obj`` is not of its schema's JSON type (see the module docstring)."""
    walker = _Walker(builtin=not kind.is_crd, kind_name=kind.kind)
    old: Any = unchanged_from if unchanged_from is not None else _MISSING
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key, ""), str):
            walker.error(key, "string", obj[key])
    metadata = obj.get("metadata")
    if metadata is not None:
        old_meta = old.get("metadata", _MISSING) if isinstance(old, dict) else _MISSING
        if metadata != old_meta:
            walker.walk(OBJECT_META, metadata, old_meta, "metadata")
    try:
        schema = kind.schema[version]
    except KeyError:
        schema = None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        for key in [k for k in obj if k not in ("apiVersion", "kind", "metadata")]:
            sub = properties.get(key)
            if isinstance(sub, dict):
                old_child = old.get(key, _MISSING) if isinstance(old, dict) else _MISSING
                value = obj[key]
                if value is None and walker.drops_null(sub):
                    del obj[key]
                elif value != old_child or type(value) is not type(old_child):
                    obj[key] = walker.walk(sub, value, old_child, key)
    if walker.errors:
        given = metadata.get("name") if isinstance(metadata, dict) else None
        name = given if isinstance(given, str) else ""
        if walker.builtin:
            raise BadRequest(
                f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: ' + "; ".join(walker.messages)
            )
        raise Invalid(kind.kind, name, walker.errors, kind.group)


class _Walker:
    __slots__ = ("builtin", "errors", "kind_name", "messages")

    def __init__(self, *, builtin: bool, kind_name: str) -> None:
        self.builtin = builtin
        self.kind_name = kind_name
        self.errors: list[FieldError] = []
        self.messages: list[str] = []

    def drops_null(self, schema: JSONDict) -> bool:
        return self.builtin or not schema.get("nullable")

    def error(self, where: _Path, expected: str, value: Any, detail: str = "") -> None:
        if len(self.errors) >= _MAX_ERRORS:
            return
        path = _render(where)
        actual = _json_type(value)
        shown = detail or f'{path} in body must be of type {expected}: "{actual}"'
        self.errors.append(fe.type_invalid(path, actual if not detail else value, shown))
        what = f"number {value}" if actual in ("integer", "number") else actual
        self.messages.append(
            f"json: cannot unmarshal {what} into Go struct field {self.kind_name}.{path} of type {expected}"
        )

    def walk(self, schema: JSONDict, value: Any, old: Any, path: _Path) -> Any:
        """``value`` checked (errors recorded), with nulls dropped below it; returns the value to keep."""
        expected = schema.get("type")
        if schema.get("x-kubernetes-int-or-string"):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                self.error(path, "integer-or-string", value)
                return value
            return self._integer(value, schema, path) if isinstance(value, float) else value
        if expected == "object":
            if not isinstance(value, dict):
                self.error(path, "object", value)
                return value
            self._object(schema, value, old, path)
        elif expected == "array":
            if not isinstance(value, list):
                self.error(path, "array", value)
                return value
            items = schema.get("items")
            if isinstance(items, dict):
                old_list = old if isinstance(old, list) else ()
                for index, item in enumerate(value):
                    if index < len(old_list) and old_list[index] == item:
                        continue
                    if item is not None:
                        value[index] = self.walk(items, item, _MISSING, (path, index))
        elif expected == "string":
            if not isinstance(value, str):
                self.error(path, "string", value)
        elif expected == "boolean":
            if not isinstance(value, bool):
                self.error(path, "boolean", value)
        elif expected == "integer":
            return self._integer(value, schema, path)
        elif expected == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            self.error(path, "number", value)
        return value

    def _object(self, schema: JSONDict, value: JSONDict, old: Any, path: _Path) -> None:
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if not isinstance(properties, dict) and not isinstance(extra, dict):
            return  # free-form (x-kubernetes-preserve-unknown-fields, or an unchecked map)
        old_map = old if isinstance(old, dict) else None
        dropped: list[str] = []
        for name, child in value.items():
            sub = properties.get(name) if isinstance(properties, dict) else None
            if sub is None:
                sub = extra if isinstance(extra, dict) else None
            if sub is None:
                continue
            if child is None:
                if self.drops_null(sub):
                    dropped.append(name)
                continue
            if type(child) is str and sub.get("type") == "string":
                continue  # the commonest leaf, without a call
            old_child = old_map.get(name, _MISSING) if old_map is not None else _MISSING
            if old_child is not _MISSING and old_child == child and type(old_child) is type(child):
                continue  # came from storage unchanged
            checked = self.walk(sub, child, old_child, (path, name))
            if checked is not child:
                value[name] = checked
        for name in dropped:
            del value[name]

    def _integer(self, value: Any, schema: JSONDict, path: _Path) -> Any:
        fmt = schema.get("format")
        low, high = INT32 if fmt == "int32" else INT64
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.error(path, "integer", value)
            return value
        if isinstance(value, float):
            if not value.is_integer() or abs(value) > _EXACT_FLOAT:
                self.error(path, "integer", value)
                return value
            value = int(value)
        if not low <= value <= high:
            name = fmt if fmt in ("int32", "int64") else "int64"
            where = _render(path)
            self.error(path, name, value, f"{where} in body must be of type {name}: {value} is out of range")
        return value


_Path = str | tuple[Any, str | int]
"""A field's path, rendered only for an error: ``"spec"``, or (parent path, name or index)."""


def _render(path: _Path) -> str:
    parts: list[str] = []
    while isinstance(path, tuple):
        path, step = path
        parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
    return path + "".join(reversed(parts))


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"
