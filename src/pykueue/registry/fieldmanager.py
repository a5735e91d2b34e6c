"""The registry's single doorway to field ownership (``metadata.managedFields``).

Owned by ``registry/``. Server-side apply and ownership bookkeeping are implemented by the patch
library (:mod:`pykueue.registry.patch`); this module only adapts the registry's calls to it and
keeps the registry importable while that library grows (a missing function means "no bookkeeping",
never a failed write).

A create (no previous object, no requested entries) has one possible result, the manager owning
every field it sent: :func:`_created_entry` builds that FieldsV1 directly, which is what the patch
library computes through a full comparison against an empty object (~3x the work). Objects whose
metadata holds the itemized lists (finalizers, ownerReferences) take the library's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pykueue.api.meta.errors import BadRequest
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.api.schema.list_types import list_keys

__all__ = ["list_keys_of", "server_side_apply", "update_managed_fields"]


def _patch_function(name: str) -> Any:
    from pykueue.registry import patch

    return getattr(patch, name, None)


def list_keys_of(kind: KindInfo, version: str) -> Mapping[str, str]:
    """The lists whose items are owned one by one: a custom resource's from its schema's
    ``x-kubernetes-list-type``/``-map-keys`` (as kube-apiserver reads them), a built-in kind's from
    its merge keys."""
    if not kind.is_crd:
        return kind.strategic_merge_keys
    schema = kind.schema.get(version) if version in kind.schema else None
    return list_keys(schema) if schema else {}


def update_managed_fields(
    old: JSONDict | None,
    new: JSONDict,
    *,
    manager: str | None,
    now: str,
    subresource: str = "",
    merge_keys: Mapping[str, str] | None = None,
) -> JSONDict:
    """Record that ``manager`` wrote the fields that changed between ``old`` and ``new`` (through
    ``subresource``, "" for the main resource)."""
    fn = _patch_function("update_managed_fields")
    if fn is None or not manager:
        return new
    if old is None:
        created = _created(new, manager, now)
        if created is not None:
            return created
    result: JSONDict = fn(
        old, new, manager=manager, operation="Update", now=now, subresource=subresource, merge_keys=merge_keys
    )
    return result


_UNOWNED_TOP = frozenset({"apiVersion", "kind", "metadata"})
_UNOWNED_METADATA = frozenset(
    {
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    }
)
_ITEMIZED_METADATA = ("finalizers", "ownerReferences")


def _created(new: JSONDict, manager: str, now: str) -> JSONDict | None:
    """``new`` with the managedFields of a create by ``manager``; None when the library must decide."""
    metadata = new.get("metadata")
    if (
        not isinstance(metadata, dict)
        or metadata.get("managedFields") is not None
        or any(metadata.get(name) is not None for name in _ITEMIZED_METADATA)
    ):
        return None
    fields = _owned(new, _UNOWNED_TOP)
    owned_metadata = _owned(metadata, _UNOWNED_METADATA)
    if owned_metadata:
        fields["f:metadata"] = owned_metadata
        fields = {key: fields[key] for key in sorted(fields)}
    out_metadata = {k: v for k, v in metadata.items() if k != "managedFields"}
    if fields:
        entry: JSONDict = {"manager": manager, "operation": "Update", "apiVersion": str(new.get("apiVersion", ""))}
        if now:
            entry["time"] = now
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = fields
        out_metadata["managedFields"] = [entry]
    return {**new, "metadata": out_metadata}


def _owned(value: JSONDict, skip: frozenset[str] = frozenset()) -> JSONDict:
    """FieldsV1 of every non-null field under ``value`` (lists are atomic: owned as a whole)."""
    out: JSONDict = {}
    for name in sorted(value):
        child = value[name]
        if child is None or name in skip:
            continue
        if isinstance(child, dict):
            inner = _owned(child)
            out["f:" + name] = {".": {}, **inner} if inner else {}
        else:
            out["f:" + name] = {}
    return out


def server_side_apply(
    current: JSONDict | None,
    applied: JSONDict,
    *,
    manager: str,
    force: bool,
    merge_keys: Mapping[str, str],
    now: str,
    subresource: str = "",
) -> JSONDict:
    fn = _patch_function("server_side_apply")
    if fn is None:
        raise BadRequest("server-side apply is not available in this build")
    result: JSONDict = fn(
        current, applied, manager=manager, force=force, merge_keys=merge_keys, now=now, subresource=subresource
    )
    return result
