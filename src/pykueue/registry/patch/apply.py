"""Server-side apply (``application/apply-patch+yaml``): merge a configuration, track ownership.

Owned by ``registry/patch``; the registry calls :func:`server_side_apply` for apply PATCHes.
Follows Kubernetes' structured-merge-diff model:

1. the applied configuration is merged into the live object: maps recursively, lists keyed by
   merge keys item by item (live order kept, new items placed as the configuration orders them),
   sets of scalars as unions, every other list (and scalar) replaced;
2. the manager's Apply entry becomes exactly the set of fields the configuration names;
3. fields the manager applied last time but no longer applies are removed from the object,
   unless another manager owns them (or something beneath them);
4. changing a field another manager owns is a conflict (409) unless ``force``, which moves
   ownership; setting it to the value it already has shares ownership instead.

An object without managedFields is first attributed to "before-first-apply". When the manager is
"kubectl" and the object carries a client-side-apply annotation, the annotation is refreshed from
the configuration. ``null`` values in a configuration are ignored. On the main resource
``status`` is not applied; on the ``status`` subresource only ``status`` is. Nothing the
configuration still names is pruned (an emptied map stays).

Invariant: inputs are never mutated; a conflict raises before anything is returned.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pykueue.api.meta.errors import BadRequest, Conflict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.registry.patch.fieldpaths import (
    FieldSet,
    Path,
    compare,
    find_item,
    index_items,
    item_element,
    list_kind,
    path_string,
    prefixes,
    to_field_set,
    value_at,
)
from pykueue.registry.patch.managed import (
    STRIPPED,
    ManagedEntry,
    cap_update_managers,
    decode_entries,
    encode_entries,
    replace,
    with_managed_fields,
)
from pykueue.registry.patch.strategic import normalize_merge_keys

__all__ = ["BEFORE_FIRST_APPLY", "server_side_apply"]

BEFORE_FIRST_APPLY = "before-first-apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def server_side_apply(
    current: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    merge_keys: Mapping[str, str],
    now: str,
    subresource: str = "",
) -> dict[str, Any]:
    """Apply ``applied`` for ``manager``; ``current`` None creates. Returns the new object."""
    if not isinstance(applied, dict):
        raise BadRequest("error decoding YAML: the applied configuration must be an object")
    if (applied.get("metadata") or {}).get("managedFields"):
        raise BadRequest("metadata.managedFields must be nil")
    merge_keys = normalize_merge_keys(merge_keys)
    config = _effective_config(applied, subresource)
    _check_keys(config, "", merge_keys, "")
    live = _without_managed_fields(current or {})
    entries = decode_entries(((current or {}).get("metadata") or {}).get("managedFields"))
    if current is not None and not entries:
        entries = _before_first_apply(live, merge_keys, now)

    applied_set = to_field_set(config, merge_keys) - STRIPPED
    me = ManagedEntry(manager, "Apply", str(applied.get("apiVersion", "")), now, subresource, applied_set)
    last: FieldSet = frozenset()
    previous: ManagedEntry | None = None
    others: list[ManagedEntry] = []
    for entry in entries:
        if entry.identity == me.identity:
            last, previous = entry.fields, entry
        else:
            others.append(entry)

    merged = _merge_value(json_copy(live), json_copy(config), "", merge_keys)
    owned_now = applied_set.union(*(e.fields for e in others))
    _prune(merged, last - owned_now, owned_now, config)

    diff = compare(live, merged, merge_keys)
    changed = (diff.added | diff.modified) - STRIPPED
    conflicts: dict[tuple[str, str, str, str], tuple[ManagedEntry, set[Path]]] = {}
    for entry in others:
        clashes = _clashes(entry.fields, changed, live)
        if clashes:
            conflicts[entry.identity] = (entry, clashes)
    if conflicts and not force:
        raise _conflict_error([(e, sorted(paths)) for e, paths in conflicts.values()])
    removed = diff.removed
    kept: list[ManagedEntry] = []
    for entry in others:
        lost = conflicts[entry.identity][1] if entry.identity in conflicts else frozenset()
        fields = entry.fields - removed - lost
        if fields:
            kept.append(entry if fields == entry.fields else replace(entry, fields=fields))
    mine = applied_set - removed
    if mine:
        if previous is not None and mine == previous.fields:  # same set: reuse its encoding
            kept.append(replace(me, fields=previous.fields, source=previous.source))
        else:
            kept.append(replace(me, fields=mine))
    if manager == "kubectl":
        _sync_last_applied(merged, applied)
    return with_managed_fields(merged, encode_entries(cap_update_managers(kept, now)))


def _sync_last_applied(obj: dict[str, Any], applied: Mapping[str, Any]) -> None:
    """kubectl's server-side apply keeps an existing client-side-apply annotation in step with
    the configuration (so a later client-side ``kubectl apply`` diffs against it), as kube does."""
    annotations = (obj.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict) or LAST_APPLIED not in annotations:
        return
    config = json_copy(dict(applied))
    metadata = config.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
        config_annotations = metadata.get("annotations")
        if isinstance(config_annotations, dict):
            config_annotations.pop(LAST_APPLIED, None)
            if not config_annotations:
                del metadata["annotations"]
    annotations[LAST_APPLIED] = json.dumps(config, separators=(",", ":"), sort_keys=True) + "\n"


def _clashes(owned: FieldSet, changed: set[Path], live: Mapping[str, Any]) -> set[Path]:
    """Owned paths this apply changes: the paths themselves, and whole lists owned as one leaf
    (written by a caller that tracked that list as atomic) that the apply changes inside."""
    clashes = set(owned & changed)
    inner: set[Path] | None = None
    for path in changed:
        for end in range(1, len(path)):
            prefix = path[:end]
            if prefix not in owned or not prefix[-1].startswith("f:"):
                continue
            if inner is None:
                inner = set(prefixes(owned))
            value = value_at(live, prefix)
            if prefix not in inner and isinstance(value, list) and value:  # an empty list proves nothing
                clashes.add(prefix)
    return clashes


def _before_first_apply(live: dict[str, Any], merge_keys: Mapping[str, str], now: str) -> list[ManagedEntry]:
    """An object nobody tracked yet: its fields belong to "before-first-apply" (as in Kubernetes),
    so a first apply that changes them conflicts instead of silently taking them over."""
    fields = compare({}, live, merge_keys).added - STRIPPED
    if not fields:
        return []
    return [ManagedEntry(BEFORE_FIRST_APPLY, "Update", str(live.get("apiVersion", "")), now, "", frozenset(fields))]


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    return with_managed_fields(obj, None)


def _effective_config(applied: Mapping[str, Any], subresource: str) -> dict[str, Any]:
    """The part of the configuration this endpoint applies, without nulls."""
    if subresource == "status":
        scoped = {k: v for k, v in applied.items() if k in ("apiVersion", "kind", "status")}
    else:
        scoped = {k: v for k, v in applied.items() if k != "status"}
    metadata = scoped.get("metadata")
    if isinstance(metadata, dict):
        scoped["metadata"] = {k: v for k, v in metadata.items() if k != "managedFields"}
    cleaned = _drop_nulls(scoped)
    return cleaned if isinstance(cleaned, dict) else {}


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value if v is not None]
    return value


def _child(dotted: str, name: str) -> str:
    return f"{dotted}.{name}" if dotted else name


def _check_keys(value: Any, dotted: str, merge_keys: Mapping[str, str], shown: str) -> None:
    """Every item of a keyed list names its key; no two items share one (else 400)."""
    if isinstance(value, dict):
        for name, child in value.items():
            _check_keys(child, _child(dotted, name), merge_keys, f"{shown}.{name}")
        return
    if not isinstance(value, list):
        return
    kind = list_kind(merge_keys, dotted)
    seen: set[str] = set()
    for index, item in enumerate(value):
        if kind is not None:
            element = item_element(item, kind)
            if element is None:
                raise BadRequest(
                    f"failed to create typed patch object: {shown}: element {index}: associative list "
                    f"with keys has an element that omits key field {kind[0]!r}"
                    if kind
                    else f"failed to create typed patch object: {shown}: element {index}: set of scalars "
                    "holds a non-scalar"
                )
            if element in seen:
                raise BadRequest(
                    f"failed to create typed patch object: {shown}: duplicate entries for key {path_string((element,))}"
                )
            seen.add(element)
        _check_keys(item, dotted, merge_keys, f"{shown}[{index}]")


# ---- merging ---------------------------------------------------------------------------------


def _merge_value(live: Any, config: Any, dotted: str, merge_keys: Mapping[str, str]) -> Any:
    """Merge a configuration value into a live value; both are private copies."""
    if isinstance(config, dict):
        if not isinstance(live, dict):
            return config
        for name, value in config.items():
            live[name] = _merge_value(live.get(name), value, _child(dotted, name), merge_keys)
        return live
    if isinstance(config, list):
        kind = list_kind(merge_keys, dotted)
        if kind is None or not isinstance(live, list):
            return config
        live_index = index_items(live, kind)
        config_index = index_items(config, kind)
        if live_index is None or config_index is None:
            return config
        return _merge_lists(live_index, config_index, dotted, merge_keys)
    return config


def _merge_lists(live: dict[str, Any], config: dict[str, Any], dotted: str, merge_keys: Mapping[str, str]) -> list[Any]:
    """Interleave: live-only items keep their places; configured items follow the config's order."""
    live_keys, config_keys = list(live), list(config)
    shared = [k for k in config_keys if k in live]
    next_shared = 0
    done: set[str] = set()
    out: list[Any] = []
    li = ci = 0

    def take(key: str) -> None:
        nonlocal next_shared
        done.add(key)
        out.append(_merge_value(live.get(key), config[key], dotted, merge_keys))
        if next_shared < len(shared) and shared[next_shared] == key:
            next_shared += 1

    while li < len(live_keys) or ci < len(config_keys):
        if li < len(live_keys) and ci < len(config_keys):
            key = live_keys[li]
            if key == config_keys[ci]:
                take(key)
                li += 1
                ci += 1
                continue
            wanted = shared[next_shared] if next_shared < len(shared) else None
            if key in config and wanted is not None and wanted != key:
                li += 1
                continue
        if li < len(live_keys):
            key = live_keys[li]
            if key not in config:
                out.append(live[key])
                li += 1
                continue
            if key in done:
                li += 1
                continue
        if ci < len(config_keys):
            take(config_keys[ci])
            ci += 1
    return out


# ---- pruning ---------------------------------------------------------------------------------


def _prune(obj: dict[str, Any], doomed: FieldSet, owned: FieldSet, config: Mapping[str, Any]) -> None:
    """Remove fields the applier dropped; keep any node with something owned beneath it."""
    if not doomed:
        return
    owned_inner = set(prefixes(owned))
    for path in sorted(doomed, key=len):
        if path in owned_inner or path in owned or _is_key_field(path):
            continue
        if value_at(config, path) is not None:  # still named (e.g. an emptied map): keep
            continue
        _remove(obj, path, owned, config)


def _is_key_field(path: Path) -> bool:
    """``…/k:{"name":"a"}/f:name`` — an item's key is never removed while the item stays."""
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    return f'"{path[-1][2:]}":' in path[-2]


def _remove(obj: dict[str, Any], path: Path, owned: FieldSet, config: Mapping[str, Any]) -> None:
    """Delete the node at ``path``; then drop containers it left empty that nobody owns and the
    configuration does not name."""
    trail: list[tuple[Any, Any]] = []  # (container, key-or-index) from the root down
    node: Any = obj
    for element in path:
        if element.startswith("f:") and isinstance(node, dict) and element[2:] in node:
            trail.append((node, element[2:]))
            node = node[element[2:]]
        elif element[:2] in ("k:", "v:") and isinstance(node, list):
            index = find_item(node, element)
            if index is None:
                return
            trail.append((node, index))
            node = node[index]
        else:
            return
    depth = len(path)
    while trail:
        container, key = trail.pop()
        del container[key]
        depth -= 1
        if container or depth == 0 or path[:depth] in owned or not path[depth - 1].startswith("f:"):
            return
        if value_at(config, path[:depth]) is not None:
            return


# ---- conflicts -------------------------------------------------------------------------------


def _print_manager(entry: ManagedEntry) -> str:
    text = _quote(entry.manager)
    if entry.subresource:
        text += f" with subresource {_quote(entry.subresource)}"
    if entry.operation == "Update":
        text += f" using {entry.api_version}"
    return text


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _conflict_error(conflicts: list[tuple[ManagedEntry, list[Path]]]) -> Conflict:
    """Kubernetes' apply conflict: one line for a single conflict, else grouped by manager."""
    conflicts.sort(key=lambda c: (c[0].manager, c[0].operation, c[0].api_version, c[0].subresource))
    total = sum(len(paths) for _, paths in conflicts)
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {_print_manager(entry)}",
            "field": path_string(path),
        }
        for entry, paths in conflicts
        for path in paths
    ]
    if total == 1:
        entry, paths = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {_print_manager(entry)}: {path_string(paths[0])}"
    else:
        lines: list[str] = []
        for entry, paths in conflicts:
            lines.append(f"conflicts with {_print_manager(entry)}:")
            lines.extend(f"- {path_string(path)}" for path in paths)
        message = f"Apply failed with {total} conflicts: " + "\n".join(lines)
    return Conflict(message, details={"causes": causes})
