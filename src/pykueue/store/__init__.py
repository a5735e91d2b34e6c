"""Versioned object store: resourceVersions, optimistic concurrency, watch log, SQLite.

The public surface is what ``docs/contracts.md`` ("store/") describes; everything else in this
package is private.
"""

from pykueue.store.selectors import (
    FieldSelector,
    LabelSelector,
    field_value,
    parse_field_selector,
    parse_label_selector,
)
from pykueue.store.sqlite import DURABILITY, StoreFileError
from pykueue.store.store import Store
from pykueue.store.types import EventType, ListResult, RawListResult, WatchEvent

__all__ = [
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
