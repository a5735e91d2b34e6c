"""Lenient readers for decoded JSON that may be malformed: the value at hand, or a harmless stand-in.

Validation and defaulting walk objects before anything has checked their shape, so a field that
should be a map may hold a list, a string or nothing. These helpers let that code read on without
type checks at every step and leave the reporting of the bad shape to the rule that owns the field.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.json_types import JSONDict

__all__ = ["dict_or_empty", "hashable_key", "list_or_empty"]


def dict_or_empty(value: Any) -> JSONDict:
    """``value`` if it is a map, else a new empty one (writes to it are thrown away)."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> list[Any]:
    """``value`` if it is a list, else a new empty one."""
    return value if isinstance(value, list) else []


def hashable_key(value: Any) -> Any:
    """A hashable stand-in for a JSON value used as a key (bad input may put a list or map there)."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
