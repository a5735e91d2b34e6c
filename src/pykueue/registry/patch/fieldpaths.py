"""Field paths and field sets, the vocabulary of ``metadata.managedFields`` (``FieldsV1``).

Owned by ``registry/patch``; used by :mod:`.managed` (ownership of ordinary writes) and
:mod:`.apply` (server-side apply). A field set is a ``frozenset`` of paths; a path is a tuple of
FieldsV1 element strings: ``f:<field>``, ``k:<json of the key fields>`` for an item of a list
keyed by merge keys, ``v:<json value>`` for an item of a set of scalars. Lists that are not
named in ``merge_keys`` are atomic: the list is one leaf.

Invariant: a path is in a set when that node itself is owned; FieldsV1 marks that with ``{}``
for a leaf and ``".": {}`` for a node that also has owned children, and :func:`decode` /
:func:`encode` round-trip exactly that.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from pykueue.registry.patch.strategic import METADATA_MERGE_KEYS

__all__ = [
    "FieldSet",
    "ListKind",
    "Path",
    "compare",
    "decode",
    "encode",
    "find_item",
    "index_items",
    "item_element",
    "list_kind",
    "path_string",
    "prefixes",
    "to_field_set",
    "value_at",
]

Path = tuple[str, ...]
FieldSet = frozenset[Path]

ListKind = tuple[str, ...] | None
"""How a list is tracked: None = atomic, () = set of scalars, (k1, ...) = map keyed by k1..."""


def list_kind(merge_keys: Mapping[str, str], dotted: str) -> ListKind:
    """Look up a list's kind; "" in ``merge_keys`` means a set, "a,b" a map keyed by a and b."""
    raw = merge_keys.get(dotted)
    if raw is None:
        raw = METADATA_MERGE_KEYS.get(dotted)
    if raw is None:
        return None
    return tuple(k.strip() for k in raw.split(",") if k.strip())


def _dump(value: Any) -> str:
    """Go's JSON of a key or set item, as in FieldsV1 (compact, sorted keys, UTF-8).

    Item keys are strings, integers and booleans: orjson writes exactly what ``json.dumps`` writes
    for those (tested over the characters and the 64-bit range), ~10x faster, and a server-side
    apply names every keyed list item several times (its conditions in each comparison). Anything
    else (floats, nested values, integers past 64 bits) takes ``json.dumps``.
    """
    if _plain(value) or (type(value) is dict and all(type(k) is str and _plain(v) for k, v in value.items())):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def _plain(value: Any) -> bool:
    kind = type(value)
    return kind is str or kind is bool or value is None or (kind is int and _INT64_MIN <= value <= _UINT64_MAX)


def item_element(item: Any, kind: tuple[str, ...]) -> str | None:
    """The FieldsV1 element naming one list item, or None when the item lacks its key fields."""
    if not kind:
        if isinstance(item, (dict, list)):
            return None
        return "v:" + _dump(item)
    if not isinstance(item, dict):
        return None
    fields = {k: item[k] for k in kind if k in item}
    if not fields or kind[0] not in fields:
        return None
    return "k:" + _dump(fields)


def _child(dotted: str, name: str) -> str:
    return f"{dotted}.{name}" if dotted else name


def index_items(items: list[Any], kind: tuple[str, ...]) -> dict[str, Any] | None:
    """Index a keyed list or set by element; None if an item lacks keys (then it is atomic)."""
    out: dict[str, Any] = {}
    for item in items:
        element = item_element(item, kind)
        if element is None:
            return None
        out.setdefault(element, item)
    return out


# ---- building sets from objects --------------------------------------------------------------


def to_field_set(obj: Mapping[str, Any], merge_keys: Mapping[str, str]) -> FieldSet:
    """Every path an applied configuration sets: leaves, keyed-list items and set items.

    Plain maps are structural (owning ``spec.x`` does not own ``spec``), except empty maps,
    which are leaves themselves.
    """
    out: set[Path] = set()
    _collect_map(obj, (), "", merge_keys, out)
    return frozenset(out)


def _collect_map(
    node: Mapping[str, Any], path: Path, dotted: str, merge_keys: Mapping[str, str], out: set[Path]
) -> None:
    for name, value in node.items():
        if value is None:
            continue
        _collect_value(value, (*path, "f:" + name), _child(dotted, name), merge_keys, out)


def _collect_value(value: Any, path: Path, dotted: str, merge_keys: Mapping[str, str], out: set[Path]) -> None:
    if isinstance(value, dict):
        if value:
            _collect_map(value, path, dotted, merge_keys, out)
        else:
            out.add(path)
        return
    if isinstance(value, list):
        kind = list_kind(merge_keys, dotted)
        index = None if kind is None else index_items(value, kind)
        if index is None:
            out.add(path)
            return
        for element, item in index.items():
            item_path = (*path, element)
            out.add(item_path)
            if isinstance(item, dict):
                _collect_map(item, item_path, dotted, merge_keys, out)
        return
    out.add(path)


# ---- comparing two objects -------------------------------------------------------------------


class Comparison:
    """Paths added, modified (leaves whose value changed) and removed between two objects."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: set[Path] = set()
        self.modified: set[Path] = set()
        self.removed: set[Path] = set()

    def is_empty(self) -> bool:
        return not (self.added or self.modified or self.removed)


def compare(old: Mapping[str, Any], new: Mapping[str, Any], merge_keys: Mapping[str, str]) -> Comparison:
    """Compare two objects the way field ownership sees them.

    A node present only in ``new`` is added together with everything beneath it (so a new map
    is owned as a node, FieldsV1's ``"."``); only in ``old``: removed, with everything beneath.
    """
    result = Comparison()
    _compare_maps(old, new, (), "", merge_keys, result)
    return result


def _compare_maps(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    path: Path,
    dotted: str,
    merge_keys: Mapping[str, str],
    out: Comparison,
) -> None:
    if old is new:
        return
    for name, value in new.items():
        before = old.get(name)
        if before is value or (type(before) is type(value) and before == value):
            continue  # equal subtrees compare at C speed; only differences are walked
        child_path, child_dotted = (*path, "f:" + name), _child(dotted, name)
        if before is None:
            if value is not None:
                _whole(value, child_path, child_dotted, merge_keys, out.added)
        elif value is None:
            _whole(before, child_path, child_dotted, merge_keys, out.removed)
        else:
            _compare_values(before, value, child_path, child_dotted, merge_keys, out)
    for name, before in old.items():
        if before is not None and new.get(name) is None:
            _whole(before, (*path, "f:" + name), _child(dotted, name), merge_keys, out.removed)


def _compare_values(
    old: Any, new: Any, path: Path, dotted: str, merge_keys: Mapping[str, str], out: Comparison
) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _compare_maps(old, new, path, dotted, merge_keys, out)
        return
    if isinstance(old, list) and isinstance(new, list):
        kind = list_kind(merge_keys, dotted)
        if kind is not None:
            old_index, new_index = index_items(old, kind), index_items(new, kind)
            if old_index is not None and new_index is not None:
                _compare_lists(old_index, new_index, path, dotted, merge_keys, out)
                return
    if type(old) is not type(new) or old != new:
        if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
            _whole(old, path, dotted, merge_keys, out.removed)
            _whole(new, path, dotted, merge_keys, out.added)
            out.removed.discard(path)
            out.added.discard(path)
        out.modified.add(path)


def _compare_lists(
    old: dict[str, Any], new: dict[str, Any], path: Path, dotted: str, merge_keys: Mapping[str, str], out: Comparison
) -> None:
    for element, item in new.items():
        item_path = (*path, element)
        before = old.get(element)
        if before is None:
            _whole_item(item, item_path, dotted, merge_keys, out.added)
        elif isinstance(item, dict) and isinstance(before, dict):
            _compare_maps(before, item, item_path, dotted, merge_keys, out)
    for element, before in old.items():
        if element not in new:
            _whole_item(before, (*path, element), dotted, merge_keys, out.removed)


def _whole(value: Any, path: Path, dotted: str, merge_keys: Mapping[str, str], into: set[Path]) -> None:
    """Add ``path`` and, for maps and tracked lists, every path beneath it."""
    into.add(path)
    if isinstance(value, dict):
        for name, child in value.items():
            if child is not None:
                _whole(child, (*path, "f:" + name), _child(dotted, name), merge_keys, into)
    elif isinstance(value, list):
        kind = list_kind(merge_keys, dotted)
        index = None if kind is None else index_items(value, kind)
        for element, item in (index or {}).items():
            _whole_item(item, (*path, element), dotted, merge_keys, into)


def _whole_item(item: Any, path: Path, dotted: str, merge_keys: Mapping[str, str], into: set[Path]) -> None:
    into.add(path)
    if isinstance(item, dict):
        for name, child in item.items():
            if child is not None:
                _whole(child, (*path, "f:" + name), _child(dotted, name), merge_keys, into)


# ---- FieldsV1 encoding -----------------------------------------------------------------------


def decode(fields_v1: Any) -> FieldSet:
    """FieldsV1 (nested dicts) to a field set; tolerant of junk (ignored, never raises)."""
    out: set[Path] = set()
    if isinstance(fields_v1, dict):
        _decode(fields_v1, (), out)
    return frozenset(out)


def _decode(node: dict[str, Any], path: Path, out: set[Path]) -> None:
    for element, child in node.items():
        if element == ".":
            if path:
                out.add(path)
            continue
        child_path = (*path, element)
        if isinstance(child, dict) and child:
            _decode(child, child_path, out)
        else:
            out.add(child_path)


def _element_order(element: str) -> tuple[int, str]:
    return ({".": 0, "f": 1, "k": 2, "v": 3, "i": 4}.get(element[:1], 5), element)


def encode(paths: Iterable[Path]) -> dict[str, Any]:
    """A field set to FieldsV1: ``{}`` marks an owned leaf, ``".": {}`` an owned inner node."""
    root: dict[str, Any] = {}
    members: list[Path] = []
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        members.append(path)
    for path in members:
        node = root
        for element in path:
            node = node[element]
        if node and "." not in node:
            node["."] = {}
    return _sorted(root)


def _sorted(node: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted(node[k]) for k in sorted(node, key=_element_order)}


def path_string(path: Path) -> str:
    """Kubernetes' printed form of a path, as in conflict messages:
    ``.spec.template.spec.containers[name="nginx"].image``."""
    parts: list[str] = []
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            parts.append("." + rest)
        elif kind == "k":
            try:
                fields = json.loads(rest)
                parts.append("[" + ",".join(f"{k}={_dump(v)}" for k, v in sorted(fields.items())) + "]")
            except (ValueError, AttributeError):
                parts.append("[" + rest + "]")
        elif kind == "v":
            parts.append("[=" + rest + "]")
        else:
            parts.append("[" + rest + "]")
    return "".join(parts)


def prefixes(paths: Iterable[Path]) -> Iterator[Path]:
    """Every proper, non-empty prefix of every path (the nodes that have something beneath)."""
    for path in paths:
        for end in range(1, len(path)):
            yield path[:end]


def value_at(obj: Any, path: Path) -> Any:
    """The value at ``path`` in ``obj``, or None when absent."""
    node = obj
    for element in path:
        if element.startswith("f:") and isinstance(node, dict):
            node = node.get(element[2:])
        elif isinstance(node, list):
            index = find_item(node, element)
            node = None if index is None else node[index]
        else:
            return None
    return node


def find_item(items: list[Any], element: str) -> int | None:
    """Index of the list item ``element`` (``k:``/``v:``) names, or None."""
    for index, item in enumerate(items):
        if item_element(item, _kind_of(element, item)) == element:
            return index
    return None


def _kind_of(element: str, item: Any) -> tuple[str, ...]:
    if element.startswith("v:") or not isinstance(item, dict):
        return ()
    try:
        return tuple(json.loads(element[2:]))
    except ValueError:
        return ()
