"""The store package's chosen public surface (docs/contracts.md, "store/")."""

from __future__ import annotations

import inspect

import pykueue.store
from pykueue.store import Store


def test_public_exports_are_pinned() -> None:
    assert sorted(pykueue.store.__all__) == [
        "DURABILITY",
        "EventType",
        "FieldSelector",
        "LabelSelector",
        "ListResult",
        "RawListResult",
        "Store",
        "StoreFileError",
        "WatchEvent",
        "field_value",
        "parse_field_selector",
        "parse_label_selector",
    ]
    for name in pykueue.store.__all__:
        assert getattr(pykueue.store, name) is not None


def test_store_signature_matches_the_contract() -> None:
    params = inspect.signature(Store.__init__).parameters
    assert list(params) == ["self", "path", "compaction_window", "auto_flush", "durability"]
    assert params["compaction_window"].default == 100_000
    assert params["auto_flush"].default is True
    assert params["durability"].default == "fsync"
    listing = inspect.signature(Store.list).parameters
    assert list(listing) == [
        "self",
        "resource",
        "namespace",
        "label_selector",
        "field_selector",
        "limit",
        "continue_token",
        "selectable_fields",
    ]
    assert list(inspect.signature(Store.list_raw).parameters) == list(listing)
    assert inspect.signature(Store.update).parameters["expected_rv"].kind is inspect.Parameter.KEYWORD_ONLY
