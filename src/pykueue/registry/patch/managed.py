"""``metadata.managedFields``: who owns which field, updated on every write.

Owned by ``registry/patch``. The registry calls :func:`update_managed_fields` for ordinary
create/update/patch writes (operation "Update"); :mod:`.apply` reuses the entry codec here for
server-side apply. Follows kube-apiserver's field manager:

- an entry is identified by (manager, operation, subresource) and, for "Update", apiVersion;
- an Update write gives its manager the fields it added or changed (and takes them from every
  other manager); fields the write removed leave every manager; empty entries disappear;
- ``apiVersion``, ``kind`` and identity/system metadata are never owned;
- a request that sends ``managedFields: [{}]`` resets tracking; one that sends none (or junk)
  keeps the stored entries; subresource writes always keep the stored entries;
- at most 10 Update entries are kept: older ones fold into "ancient-changes";
- entries are sorted Apply before Update, then by time, manager, apiVersion, subresource.

Invariant: inputs are never mutated; when a write changes no tracked field, the stored entries
come back unchanged (and nothing is decoded: this runs on every write). Entries whose field set
did not change are passed through without re-encoding, so results may share those (never
mutated) entry dicts with the stored object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pykueue.registry.patch.fieldpaths import FieldSet, compare, decode, encode
from pykueue.registry.patch.strategic import normalize_merge_keys

__all__ = ["ManagedEntry", "decode_entries", "encode_entries", "replace", "update_managed_fields"]

MAX_UPDATE_MANAGERS = 10
ANCIENT_MANAGER = "ancient-changes"

STRIPPED: FieldSet = frozenset(
    {
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata",),
        *(
            ("f:metadata", "f:" + name)
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    }
)
"""Paths nobody owns (kube-apiserver strips the same set)."""


@dataclass(frozen=True, slots=True)
class ManagedEntry:
    """One decoded ``managedFields`` entry."""

    manager: str
    operation: str
    api_version: str
    time: str
    subresource: str
    fields: FieldSet
    source: tuple[FieldSet, Any] | None = field(default=None, compare=False, repr=False)
    """(decoded set, stored FieldsV1) so an entry whose set is untouched is not re-encoded."""

    @property
    def identity(self) -> tuple[str, str, str, str]:
        """Appliers keep one entry across versions; updaters get one per apiVersion."""
        version = "" if self.operation == "Apply" else self.api_version
        return (self.manager, self.operation, version, self.subresource)


_KEEP: Any = object()


def replace(
    entry: ManagedEntry, *, time: str = _KEEP, fields: FieldSet = _KEEP, source: tuple[FieldSet, Any] | None = _KEEP
) -> ManagedEntry:
    """``dataclasses.replace`` for the fields a write changes (the generic one introspects the
    dataclass on every call: a fifth of the field manager's time on a status write)."""
    return ManagedEntry(
        entry.manager,
        entry.operation,
        entry.api_version,
        entry.time if time is _KEEP else time,
        entry.subresource,
        entry.fields if fields is _KEEP else fields,
        entry.source if source is _KEEP else source,
    )


def decode_entries(raw: Any) -> list[ManagedEntry]:
    """Decode stored or requested entries; malformed ones are dropped, never raised on."""
    entries: list[ManagedEntry] = []
    if not isinstance(raw, list):
        return entries
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("manager", ""), str):
            continue
        raw_fields = item.get("fieldsV1")
        fields = decode(raw_fields)
        if not fields:
            continue
        entries.append(
            ManagedEntry(
                manager=str(item.get("manager", "")),
                operation=str(item.get("operation", "Update")),
                api_version=str(item.get("apiVersion", "")),
                time=str(item.get("time", "") or ""),
                subresource=str(item.get("subresource", "") or ""),
                fields=fields,
                source=(fields, raw_fields),
            )
        )
    return entries


def _sort_key(entry: ManagedEntry) -> tuple[str, str, str, str, str]:
    return (entry.operation, entry.time, entry.manager, entry.api_version, entry.subresource)


def encode_entries(entries: Iterable[ManagedEntry]) -> list[dict[str, Any]]:
    """Encode entries in kube-apiserver's order; entries owning nothing are left out."""
    out: list[dict[str, Any]] = []
    for entry in sorted((e for e in entries if e.fields), key=_sort_key):
        raw: dict[str, Any] = {"manager": entry.manager, "operation": entry.operation, "apiVersion": entry.api_version}
        if entry.time:
            raw["time"] = entry.time
        raw["fieldsType"] = "FieldsV1"
        reusable = entry.source is not None and entry.source[0] is entry.fields
        raw["fieldsV1"] = entry.source[1] if entry.source is not None and reusable else encode(entry.fields)
        if entry.subresource:
            raw["subresource"] = entry.subresource
        out.append(raw)
    return out


def cap_update_managers(entries: list[ManagedEntry], now: str) -> list[ManagedEntry]:
    """Keep at most :data:`MAX_UPDATE_MANAGERS` Update entries: the oldest fold, per apiVersion,
    into an "ancient-changes" entry that keeps the newest folded time (as kube-apiserver does)."""
    updates = sorted((e for e in entries if e.operation == "Update"), key=lambda e: (e.time, e.manager))
    count = len(updates)
    if count <= MAX_UPDATE_MANAGERS:
        return entries
    by_identity = {e.identity: e for e in entries}
    for entry in updates:
        if count <= MAX_UPDATE_MANAGERS:
            break
        if entry.manager == ANCIENT_MANAGER:
            continue
        bucket_id = (ANCIENT_MANAGER, "Update", entry.api_version, "")
        bucket = by_identity.get(bucket_id)
        del by_identity[entry.identity]
        if bucket is None:
            by_identity[bucket_id] = ManagedEntry(
                ANCIENT_MANAGER, "Update", entry.api_version, entry.time, "", entry.fields
            )
        else:
            by_identity[bucket_id] = replace(bucket, time=entry.time, fields=bucket.fields | entry.fields)
            count -= 1
    return list(by_identity.values())


def stored_or_requested(old: Mapping[str, Any] | None, new: Mapping[str, Any], subresource: str) -> Any:
    """The managedFields a write starts from: the request's when it sends valid ones on the main
    resource, none when it sends the reset marker ``[{}]``, else the stored ones."""
    old_raw = old.get("metadata", {}).get("managedFields") if old else None
    if subresource:
        return old_raw
    requested = new.get("metadata", {}).get("managedFields")
    if isinstance(requested, list) and len(requested) == 1 and requested[0] == {}:
        return []
    if requested is None or requested is old_raw or requested == old_raw or not decode_entries(requested):
        return old_raw
    return requested


def _without_managed_fields(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    return obj


def with_managed_fields(obj: Mapping[str, Any], raw: Any) -> dict[str, Any]:
    """A shallow copy of ``obj`` whose metadata carries ``raw`` (omitted when empty)."""
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    if raw:
        metadata["managedFields"] = raw
    return {**obj, "metadata": metadata}


def update_managed_fields(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    operation: str,
    now: str,
    subresource: str = "",
    merge_keys: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Return ``new`` with ``metadata.managedFields`` recording that ``manager`` owns the fields
    this write added or changed.

    ``merge_keys`` (as for strategic merge patch) lets list items be owned one by one; pass the
    same mapping server-side apply gets, or ownership of lists is coarser (whole lists). The
    result is a shallow copy of ``new`` with a new ``metadata`` dict; ``new`` is not mutated.
    """
    keys = normalize_merge_keys(merge_keys)
    raw = stored_or_requested(old, new, subresource)
    diff = compare(_without_managed_fields(old or {}), _without_managed_fields(new), keys)
    changed = (diff.added | diff.modified) - STRIPPED
    removed = diff.removed - STRIPPED
    if not changed and not removed:
        # Entries are never mutated in place, so sharing them with the stored object is safe.
        return with_managed_fields(new, list(raw) if isinstance(raw, list) else raw)
    entries = decode_entries(raw)
    me = ManagedEntry(manager, operation, str(new.get("apiVersion", "")), now, subresource, frozenset())
    updated: list[ManagedEntry] = []
    mine: set[tuple[str, ...]] = set(changed)
    for entry in entries:
        if entry.identity == me.identity:
            me = replace(me, source=entry.source)
            if not changed:  # only removals: ownership shrinks, the entry's time stays
                me = replace(me, time=entry.time)
            mine |= entry.fields - removed
            continue
        fields = entry.fields - changed - removed
        if fields:
            updated.append(entry if fields == entry.fields else replace(entry, fields=fields))
    if mine:
        if me.source is not None and mine == me.source[0]:
            updated.append(replace(me, fields=me.source[0]))  # same set, new time: no re-encoding
        else:
            updated.append(replace(me, fields=frozenset(mine), source=None))
    return with_managed_fields(new, encode_entries(cap_update_managers(updated, now)))
