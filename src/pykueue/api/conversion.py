"""Conversion (placeholder, filled in next)."""

from __future__ import annotations

import copy

from pykueue.api.kinds import JSONDict


def convert(group: str, kind: str, obj: JSONDict, to_version: str) -> JSONDict:
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"{group}/{to_version}" if group else to_version
    return out
