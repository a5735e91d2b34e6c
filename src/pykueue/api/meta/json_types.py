"""The JSON types of decoded Kubernetes objects, defined once for all of pykueue.

A decoded object is a ``dict`` with string keys and JSON values; every layer names it
:data:`JSONDict` (a type alias, so annotating with it costs nothing at run time).
"""

from __future__ import annotations

from typing import Any

__all__ = ["JSONDict"]

JSONDict = dict[str, Any]
