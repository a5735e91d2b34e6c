"""Defaulting from a schema, and the ``KindInfo.default(obj)`` hook every kind is given.

Owns two layers, applied in the order kube-apiserver applies them to a custom resource:
1. structural-schema defaults (``default`` in the OpenAPI schema, recursively, so a defaulted ``{}``
   gets its own fields defaulted) — generic, works for any CRD schema (:func:`apply_schema_defaults`);
2. per-kind defaults that are not expressible in the schema, handed in by the kind's package
   (Kueue's defaulting webhooks; the built-in kinds' ``SetDefaults_*``), see :func:`schema_defaulter`.

Called by the registry on the storage-version object, after mutating admission hooks and before
validation. Invariant: never mutates its argument (the result may share untouched fields with it);
idempotent (``default(default(x)) == default(x)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["apply_schema_defaults", "schema_defaulter"]


_HAS_DEFAULTS: dict[int, tuple[JSONDict, bool]] = {}
"""id(schema node) -> (the node, whether a default sits anywhere beneath it). Holding the node keeps
its id from being reused while the entry lives; bounded, since tests build throwaway schemas."""


def _has_defaults(schema: JSONDict) -> bool:
    """Whether any property at or below ``schema`` declares a ``default`` (memoised per node)."""
    entry = _HAS_DEFAULTS.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    found = False
    properties = schema.get("properties")
    if isinstance(properties, dict):
        found = any(isinstance(sub, dict) and ("default" in sub or _has_defaults(sub)) for sub in properties.values())
    for key in ("additionalProperties", "items"):
        sub = schema.get(key)
        if not found and isinstance(sub, dict):
            found = _has_defaults(sub)
    if len(_HAS_DEFAULTS) > 50_000:
        _HAS_DEFAULTS.clear()
    _HAS_DEFAULTS[id(schema)] = (schema, found)
    return found


def apply_schema_defaults(schema: JSONDict, value: Any) -> None:
    """Fill schema ``default`` values into ``value`` in place (absent properties only).

    Subtrees whose schema declares no default anywhere are not walked (a Workload's pod template
    is most of the object and has none).
    """
    if not _has_defaults(schema):
        return
    if isinstance(value, dict):
        properties: JSONDict = schema.get("properties") or {}
        for name, sub in properties.items():
            if name not in value and "default" in sub:
                value[name] = json_copy(sub["default"])
        for name, child in value.items():
            sub = properties.get(name)
            if sub is None:
                extra = schema.get("additionalProperties")
                sub = extra if isinstance(extra, dict) else None
            if sub is not None:
                apply_schema_defaults(sub, child)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                apply_schema_defaults(items, item)


def _version(obj: JSONDict, fallback: str) -> str:
    api_version = str(obj.get("apiVersion") or "")
    return api_version.rsplit("/", 1)[-1] if api_version else fallback


def schema_defaulter(
    schemas: Mapping[str, JSONDict] | None,
    storage_version: str,
    hand_written: Callable[[JSONDict], None] | None = None,
) -> Callable[[JSONDict], JSONDict]:
    """A kind's ``default`` hook: its schema's defaults (``schemas`` is ``None`` for a built-in kind,
    whose schema kube-apiserver does not default from), then its ``hand_written`` defaults.

    Copy on write: the result is a new top-level dict. A kind with hand-written defaults (they edit
    anywhere) gets a full private copy; otherwise only the top-level fields that receive a default
    are copied, and the others are shared with ``obj`` (which is never mutated). A status write
    used to copy the whole object, pod templates included, to find nothing to default.
    """

    def default(obj: JSONDict) -> JSONDict:
        schema = None
        if schemas is not None:
            version = _version(obj, storage_version)
            schema = schemas.get(version)
        if hand_written is not None:
            out: JSONDict = json_copy(obj)
            if schema is not None:
                apply_schema_defaults(schema, out)
            hand_written(out)
            return out
        out = dict(obj)
        if schema is not None:
            _default_top_level(schema, out)
        return out

    return default


def _default_top_level(schema: JSONDict, out: JSONDict) -> None:
    """``apply_schema_defaults`` on ``out``'s top level, copying a field before defaulting in it."""
    if not _has_defaults(schema):
        return
    properties: JSONDict = schema.get("properties") or {}
    for name, sub in properties.items():
        if name not in out and "default" in sub:
            out[name] = json_copy(sub["default"])
            apply_schema_defaults(sub, out[name])
    extra = schema.get("additionalProperties")
    for name, child in list(out.items()):
        sub = properties.get(name)
        if sub is None:
            sub = extra if isinstance(extra, dict) else None
        if sub is not None and isinstance(child, (dict, list)) and _missing_defaults(sub, child):
            child = json_copy(child)
            apply_schema_defaults(sub, child)
            out[name] = child


def _missing_defaults(schema: JSONDict, value: Any) -> bool:
    """Would ``apply_schema_defaults(schema, value)`` change anything? (Read-only.)"""
    if not _has_defaults(schema):
        return False
    if isinstance(value, dict):
        properties: JSONDict = schema.get("properties") or {}
        for name, sub in properties.items():
            if name not in value and "default" in sub:
                return True
        extra = schema.get("additionalProperties")
        for name, child in value.items():
            sub = properties.get(name)
            if sub is None:
                sub = extra if isinstance(extra, dict) else None
            if sub is not None and _missing_defaults(sub, child):
                return True
        return False
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return any(_missing_defaults(items, item) for item in value)
    return False
