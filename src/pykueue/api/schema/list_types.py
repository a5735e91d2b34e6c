"""The list types of a kind's schema, as server-side apply and field ownership need them.

Owned by ``api/``. kube-apiserver tracks the items of a list one by one when the schema declares
``x-kubernetes-list-type: map`` (items identified by ``x-kubernetes-list-map-keys``) or ``set``
(scalars identified by value); every other list is atomic (owned and replaced as a whole). This
module reads those declarations out of an OpenAPI v3 schema into the table the registry's patch
library takes: dotted path from the object root, list indices elided ("status.conditions",
"spec.podSets.template.spec.containers") -> the map keys comma-separated, or "" for a set.

Pure functions over schema dicts; the result for a schema object is remembered (schemas are
immutable once served). Lists under a map's values (``additionalProperties``) have no fixed path
and stay atomic.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.json_types import JSONDict

__all__ = ["list_keys"]


_CACHE: dict[int, tuple[JSONDict, dict[str, str]]] = {}


def list_keys(schema: JSONDict) -> dict[str, str]:
    """Every map or set list of ``schema``: path -> "key1,key2" (map) or "" (set)."""
    cached = _CACHE.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    out: dict[str, str] = {}
    _walk(schema, "", out, 0)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[id(schema)] = (schema, out)
    return out


_MAX_DEPTH = 64
_CACHE_SIZE = 512


def _walk(node: Any, path: str, out: dict[str, str], depth: int) -> None:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return
    if node.get("type") == "array" or "items" in node:
        list_type = node.get("x-kubernetes-list-type")
        if list_type == "map":
            keys = [str(k) for k in node.get("x-kubernetes-list-map-keys") or ()]
            if keys:
                out[path] = ",".join(keys)
        elif list_type == "set":
            out[path] = ""
        _walk(node.get("items"), path, out, depth + 1)
        return
    for name, child in (node.get("properties") or {}).items():
        _walk(child, f"{path}.{name}" if path else name, out, depth + 1)
    for combinator in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(combinator) or ():
            _walk(branch, path, out, depth + 1)
