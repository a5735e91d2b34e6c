"""The JSON types of decoded Kubernetes objects, defined once for all of pykueue.

A decoded object is a ``dict`` with string keys and JSON values; every layer names it
:data:`JSONDict`, and any decoded value :data:`JSONValue` (type aliases: annotating with them
costs nothing at run time).
"""

from __future__ import annotations

from typing import Any

__all__ = ["JSONDict", "JSONValue"]

JSONDict = dict[str, Any]
"""A decoded JSON object (a Kubernetes object, or any part of one that is a map)."""

JSONValue = Any
"""Any decoded JSON value (dict, list, str, int, float, bool, None)."""
