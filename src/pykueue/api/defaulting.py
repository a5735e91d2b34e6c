"""Defaulting for every served kind: ``KindInfo.default(obj)``.

Owns two layers, applied in the order kube-apiserver applies them to a custom resource:
1. structural-schema defaults (``default`` in the OpenAPI schema, recursively, so a defaulted ``{}``
   gets its own fields defaulted) — generic, works for any CRD schema (:func:`apply_schema_defaults`);
2. per-kind defaults that are not expressible in the schema (Kueue's defaulting webhooks; the
   built-in kinds' ``SetDefaults_*`` in :mod:`pykueue.api.core_defaults`).

Called by the registry on the storage-version object, after mutating admission hooks and before
validation. Invariant: never mutates its argument (the result may share untouched fields with it);
idempotent (``default(default(x)) == default(x)``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from pykueue.api import builtin_defaults, core_defaults
from pykueue.api.jsoncopy import json_copy
from pykueue.api.kinds import JSONDict

__all__ = ["apply_schema_defaults", "default"]


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
        found = any(isinstance(sub, dict) and ("default" in sub or _has_defaults(sub))
                    for sub in properties.values())
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
                value[name] = copy.deepcopy(sub["default"])
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


def _dicts(value: Any) -> list[JSONDict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


def _limited_resources(workload: JSONDict) -> Iterator[JSONDict]:
    """The ``resources`` of every pod-template container of a Workload that sets ``limits``."""
    for pod_set in _dicts(_dict(workload.get("spec")).get("podSets")):
        spec = _dict(_dict(pod_set.get("template")).get("spec"))
        for key in ("containers", "initContainers"):
            for container in _dicts(spec.get(key)):
                resources = container.get("resources")
                if isinstance(resources, dict) and isinstance(resources.get("limits"), dict):
                    yield resources


def _default_kueue(kind: str, obj: JSONDict) -> None:
    if kind != "Workload":
        return
    # Kueue's webhook: container requests default to limits in pod templates, as for real pods.
    for resources in _limited_resources(obj):
        requests = resources.setdefault("requests", {})
        if isinstance(requests, dict):
            for name, limit in resources["limits"].items():
                requests.setdefault(name, limit)


_BUILT_IN_DEFAULTERS = {
    ("batch", "Job"): core_defaults.default_job,
    ("", "Pod"): core_defaults.default_pod,
    ("scheduling.k8s.io", "PriorityClass"): core_defaults.default_priority_class,
    ("", "Secret"): core_defaults.default_secret,
    ("jobset.x-k8s.io", "JobSet"): core_defaults.default_jobset,
    **builtin_defaults.DEFAULTERS,
}
"""Kinds whose defaulting is hand-written (it edits anywhere): they get a full private copy."""


def default(group: str, kind: str, obj: JSONDict) -> JSONDict:
    """A defaulted copy of ``obj`` (its apiVersion selects the schema version).

    Copy on write: the result is a new top-level dict, and only the top-level fields that receive a
    default are copied; the others are shared with ``obj`` (which is never mutated). A status write
    used to copy the whole object, pod templates included, to find nothing to default.
    """
    from pykueue.api.kinds import find_kind

    info = find_kind(group, kind)
    if info is None:
        unknown: JSONDict = json_copy(obj)
        return unknown
    built_in = _BUILT_IN_DEFAULTERS.get((group, kind))
    version = _version(obj, info.storage_version)
    schema = info.schema[version] if version in info.versions and info.is_crd else None
    if built_in is not None:
        out: JSONDict = json_copy(obj)
        if schema is not None:
            apply_schema_defaults(schema, out)
        built_in(out)
        return out
    out = dict(obj)
    if schema is not None:
        _default_top_level(schema, out)
    if (group, kind) == ("kueue.x-k8s.io", "Workload") and _workload_requests_missing(out):
        if out.get("spec") is obj.get("spec"):
            out["spec"] = json_copy(out["spec"])
        _default_kueue(kind, out)
    return out


def _default_top_level(schema: JSONDict, out: JSONDict) -> None:
    """``apply_schema_defaults`` on ``out``'s top level, copying a field before defaulting in it."""
    if not _has_defaults(schema):
        return
    properties: JSONDict = schema.get("properties") or {}
    for name, sub in properties.items():
        if name not in out and "default" in sub:
            out[name] = copy.deepcopy(sub["default"])
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


def _workload_requests_missing(obj: JSONDict) -> bool:
    """Would ``_default_kueue`` copy a limit into requests anywhere? (Read-only.)"""
    for resources in _limited_resources(obj):
        requests = resources.get("requests")
        if requests is None or (isinstance(requests, dict)
                                and any(name not in requests for name in resources["limits"])):
            return True
    return False
