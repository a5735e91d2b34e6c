"""Deep copies of decoded JSON values, with a fallback for what orjson cannot encode.

Two strict twins remain, ``registry.admission.clone`` and ``client.local._copy``: they raise on such
values instead. Bodies never carry them there: a JSON body's big integers decode as floats, and
``registry.decode`` converts a YAML body to plain JSON values first, as Kubernetes does.

An orjson round trip runs at C speed (~6x faster than ``copy.deepcopy`` on a Workload), which
matters on the write path (defaulting, patching and status edits each copy the object);
``copy.deepcopy`` covers what orjson cannot encode (integers beyond 64 bits, non-string keys,
non-JSON values in bad input).
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

__all__ = ["json_copy"]


def json_copy(value: Any) -> Any:
    """A deep copy of ``value`` that shares no mutable container with it."""
    try:
        return orjson.loads(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(value)
