"""Defaulting (placeholder, filled in next)."""

from __future__ import annotations

import copy

from pykueue.api.kinds import JSONDict


def default(group: str, kind: str, obj: JSONDict) -> JSONDict:
    return copy.deepcopy(obj)
