"""Kubernetes strategic merge patch (``application/strategic-merge-patch+json``), applied server-side.

Owned by ``registry/patch``; the registry calls :func:`apply_strategic_merge_patch` for built-in
kinds (``kubectl edit/label/annotate/scale/patch`` and client-side ``kubectl apply`` send these).
Written from the documented semantics of apimachinery's ``strategicpatch`` package:

- maps merge recursively; ``null`` deletes a key;
- a list whose dotted path (from the object root, indices elided) is in ``merge_keys`` merges:
  lists of maps by the merge key (same key: merged recursively; new: added), lists of scalars
  as a set union; every other list is replaced;
- directives: ``$patch: replace|delete`` in a map, ``{"$patch": "replace"}`` and
  ``{<key>: v, "$patch": "delete"}`` in a merging list, ``$retainKeys``,
  ``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``;
- order as Kubernetes does: ``$setElementOrder`` first, then the patch's order, then the live
  object's order (so items new to the list come before live-only items unless told otherwise).

Invariant: inputs are never mutated; the result shares no containers with them; a malformed
patch raises ``BadRequest`` before anything is returned.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from typing import Any

from pykueue.api.meta.json_types import JSONValue
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.registry.patch._common import bad_request

__all__ = ["METADATA_MERGE_KEYS", "apply_strategic_merge_patch", "merge_key_for", "normalize_merge_keys"]

_INDEX = re.compile(r"\[[^\]]*\]")

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
DELETE_PRIMITIVE_PREFIX = "$deleteFromPrimitiveList/"
SET_ORDER_PREFIX = "$setElementOrder/"

METADATA_MERGE_KEYS: Mapping[str, str] = {
    "metadata.ownerReferences": "uid",
    "metadata.finalizers": "",
}
"""ObjectMeta's merging lists, shared by every kind; "" marks a merging list of scalars (a set)."""


def normalize_merge_keys(merge_keys: Mapping[str, str] | None) -> Mapping[str, str]:
    """Accept list paths written with ``[]`` for elided indices ("spec.containers[].env") as well
    as plain dotted paths ("spec.containers.env"); returns the plain form."""
    if not merge_keys:
        return {}
    if not any("[" in path for path in merge_keys):
        return merge_keys
    return {_INDEX.sub("", path): key for path, key in merge_keys.items()}


def merge_key_for(merge_keys: Mapping[str, str], path: str) -> str | None:
    """The SMP merge key of the list at ``path``: None = atomic, "" = set of scalars.

    A value may name several list-map keys separated by commas (for server-side apply, e.g.
    "containerPort,protocol"); strategic merge patch, like Kubernetes, merges by the first.
    """
    key = merge_keys.get(path)
    if key is None:
        key = METADATA_MERGE_KEYS.get(path)
    if key is None:
        return None
    return key.split(",", 1)[0].strip()


def apply_strategic_merge_patch(
    current: dict[str, Any], patch: dict[str, Any], merge_keys: Mapping[str, str]
) -> dict[str, Any]:
    """Return ``current`` with the strategic merge ``patch`` applied."""
    if not isinstance(patch, dict):
        raise bad_request("json: cannot unmarshal strategic merge patch: the patch must be a JSON object")
    return _Merger(normalize_merge_keys(merge_keys)).merge_map(json_copy(current), json_copy(patch), "")


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _token(value: JSONValue) -> Hashable:
    """A hashable identity for a scalar or merge-key value (bool kept apart from 1, as in Go)."""
    if isinstance(value, (dict, list)):
        return ("json", repr(value))
    return (isinstance(value, bool), value)


class _Merger:
    """Walks one patch into one (already copied) object; mutates only those private copies."""

    def __init__(self, merge_keys: Mapping[str, str]) -> None:
        self.merge_keys = merge_keys

    # ---- maps -------------------------------------------------------------------------------

    def merge_map(self, original: dict[str, Any], patch: dict[str, Any], path: str) -> dict[str, Any]:
        directive = patch.pop(DIRECTIVE, None)
        if directive is not None:
            if directive == "replace":
                return self.merge_map({}, patch, path)
            if directive == "delete":
                return {}
            if directive != "merge":
                raise bad_request(f"unknown patch type: {directive} in map: {patch}")
        self._apply_retain_keys(original, patch)
        self._apply_set_element_order(original, patch, path)
        for key, value in patch.items():
            if key.startswith(DELETE_PRIMITIVE_PREFIX):
                self._delete_from_primitive_list(original, key, value)
                continue
            if key.startswith(SET_ORDER_PREFIX):  # pragma: no cover - consumed above
                continue
            if value is None:
                original.pop(key, None)
                continue
            original[key] = self.merge_value(original.get(key), value, _child(path, key))
        return original

    def merge_value(self, original: JSONValue, patch: JSONValue, path: str) -> JSONValue:
        """Merge one field's patch value into its live value (``None`` = field absent)."""
        if isinstance(patch, dict):
            return self.merge_map(original if isinstance(original, dict) else {}, patch, path)
        if isinstance(patch, list):
            key = merge_key_for(self.merge_keys, path)
            if key is None:
                return patch
            return self.merge_list(original if isinstance(original, list) else [], patch, key, path)
        return patch

    def _apply_retain_keys(self, original: dict[str, Any], patch: dict[str, Any]) -> None:
        """``$retainKeys``: clear live keys not listed; every set patch key must be listed."""
        if RETAIN_KEYS not in patch:
            return
        retain = patch.pop(RETAIN_KEYS)
        if not isinstance(retain, list):
            raise bad_request("invalid patch format of retainKeys")
        allowed = {_token(k) for k in retain}
        for key, value in patch.items():
            if value is None or key.startswith((DELETE_PRIMITIVE_PREFIX, SET_ORDER_PREFIX)):
                continue
            if _token(key) not in allowed:
                raise bad_request("invalid patch format of retainKeys")
        for key in [k for k in original if _token(k) not in allowed]:
            del original[key]

    def _delete_from_primitive_list(self, original: dict[str, Any], key: str, values: JSONValue) -> None:
        field = key[len(DELETE_PRIMITIVE_PREFIX) :]
        if not field or not isinstance(values, list):
            raise bad_request("invalid patch format of primitive list")
        live = original.get(field)
        if not isinstance(live, list):
            return
        doomed = {_token(v) for v in values}
        original[field] = [v for v in live if _token(v) not in doomed]

    # ---- lists ------------------------------------------------------------------------------

    def merge_list(self, original: list[Any], patch: list[Any], key: str, path: str) -> list[Any]:
        """Merge a merging list; order = patch order interleaved with live-only items."""
        if not original and not patch:
            return original
        if not any(isinstance(v, dict) for v in (*original, *patch)):
            merged = list(original)
            seen = {_token(v) for v in merged}
            for v in patch:
                if _token(v) not in seen:
                    seen.add(_token(v))
                    merged.append(v)
            return _normalize_order(merged, patch, original, "")
        if not key:
            raise bad_request(f"cannot merge lists without merge key for {path}")
        for item in (*original, *patch):
            if not isinstance(item, dict):
                raise bad_request(f"list element types are not identical in {path}")
        original, plain, replaced = self._special_elements(original, patch, key)
        if replaced:
            return [self.merge_map({}, item, path) for item in plain]
        merged = list(original)
        for item in plain:
            if key not in item:
                raise bad_request(f"map: {item} does not contain declared merge key: {key}")
            wanted = _token(item[key])
            for index, live in enumerate(merged):
                if key in live and _token(live[key]) == wanted:
                    merged[index] = self.merge_map(live, item, path)
                    break
            else:
                merged.append(self.merge_map({}, item, path))
        return _normalize_order(merged, plain, original, key)

    def _special_elements(
        self, original: list[dict[str, Any]], patch: list[dict[str, Any]], key: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool]:
        """Apply ``$patch`` elements: deletions by key, or a ``replace`` marker for the list."""
        plain: list[dict[str, Any]] = []
        replace = False
        for item in patch:
            if DIRECTIVE not in item:
                plain.append(item)
                continue
            directive = item[DIRECTIVE]
            if directive == "delete":
                if key not in item:
                    raise bad_request(f"map: {item} does not contain declared merge key: {key}")
                doomed = _token(item[key])
                original = [v for v in original if key not in v or _token(v[key]) != doomed]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise bad_request("merging lists cannot yet be specified in the patch")
            else:
                raise bad_request(f"unknown patch type: {directive} in map: {item}")
        return original, plain, replace

    def _apply_set_element_order(self, original: dict[str, Any], patch: dict[str, Any], path: str) -> None:
        """``$setElementOrder/<field>``: merge that list now and put it in the stated order."""
        for directive_key in [k for k in patch if k.startswith(SET_ORDER_PREFIX)]:
            order = patch.pop(directive_key)
            field = directive_key[len(SET_ORDER_PREFIX) :]
            if not field or not isinstance(order, list):
                raise bad_request("invalid patch format of setElementOrder list")
            key = merge_key_for(self.merge_keys, _child(path, field))
            if key is None:
                continue  # not a merging list: the field's own patch value simply replaces it
            live = original.get(field)
            patched = patch.get(field)
            if patched is not None and not isinstance(patched, list):
                raise bad_request("invalid patch format of setElementOrder list")
            if live is not None and not isinstance(live, list):
                live = None
            if live is None and patched is None:
                continue
            _check_order(patched or [], order, key)
            merged = self.merge_list(live or [], patched or [], key, _child(path, field))
            original[field] = _normalize_order(merged, order, live or [], key)
            patch.pop(field, None)


def _identity(item: JSONValue, key: str) -> Hashable:
    if key and isinstance(item, dict):
        return _token(item.get(key))
    return _token(item)


def _normalize_order(merged: list[Any], patch_order: list[Any], server_order: list[Any], key: str) -> list[Any]:
    """Order ``merged``: items named in ``patch_order`` keep that order, live-only items keep the
    live order, and the two are interleaved by live position (apimachinery's rule)."""
    wanted: dict[Hashable, int] = {}
    for index, item in enumerate(patch_order):
        if not (isinstance(item, dict) and DIRECTIVE in item):
            wanted.setdefault(_identity(item, key), index)
    live_pos: dict[Hashable, int] = {}
    for index, item in enumerate(server_order):
        live_pos.setdefault(_identity(item, key), index)
    from_patch = sorted((v for v in merged if _identity(v, key) in wanted), key=lambda v: wanted[_identity(v, key)])
    server_only = sorted(
        (v for v in merged if _identity(v, key) not in wanted),
        key=lambda v: live_pos.get(_identity(v, key), len(live_pos)),
    )
    result: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(from_patch):
        if j >= len(from_patch):
            result.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            result.append(from_patch[j])
            j += 1
        else:
            left = live_pos.get(_identity(server_only[i], key))
            right = live_pos.get(_identity(from_patch[j], key))
            if left is not None and right is not None and left < right:
                result.append(server_only[i])
                i += 1
            else:
                result.append(from_patch[j])
                j += 1
    return result


def _check_order(patch_list: list[Any], order: list[Any], key: str) -> None:
    """The patch list's items (deletions aside) must appear in ``$setElementOrder`` order."""
    items = [v for v in patch_list if not (isinstance(v, dict) and DIRECTIVE in v)]
    if key:
        for v in (*items, *order):
            if not isinstance(v, dict) or key not in v:
                raise bad_request(f"map: {v} does not contain declared merge key: {key}")
    p = s = 0
    while p < len(items) and s < len(order):
        if _identity(items[p], key) == _identity(order[s], key):
            p += 1
        s += 1
    if p < len(items):
        raise bad_request(f"The order in patch list: {patch_list} doesn't match $setElementOrder list: {order}")
