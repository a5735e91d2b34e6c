"""Deep copies of decoded JSON values: the one copy helper every layer uses.

:func:`json_copy` falls back to ``copy.deepcopy`` for what orjson cannot encode; its strict twin
:func:`json_copy_strict` (the registry's admission chain and the in-process client) raises on such
values instead. Bodies never carry them there: a JSON body's big integers decode as floats, and
``registry.decode`` converts a YAML body to plain JSON values first, as Kubernetes does.

An orjson round trip runs at C speed (~6x faster than ``copy.deepcopy`` on a Workload), which
matters on the write path (defaulting, patching and status edits each copy the object);
``copy.deepcopy`` covers what orjson cannot encode (integers beyond 64 bits, non-string keys,
non-JSON values in bad input).
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import orjson

__all__ = ["json_copy", "json_copy_strict"]

_T = TypeVar("_T")


def json_copy(value: _T) -> _T:
    """A deep copy of ``value`` that shares no mutable container with it."""
    try:
        copied: _T = orjson.loads(orjson.dumps(value))
        return copied
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(value)


def json_copy_strict(value: Any) -> Any:
    """A deep copy of a plain JSON value; raises ``TypeError`` on what JSON cannot carry."""
    return orjson.loads(orjson.dumps(value))
