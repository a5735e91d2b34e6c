"""Core schemas (placeholder)."""

from __future__ import annotations

from pykueue.api.kinds import JSONDict


def schema(group: str, version: str, kind: str) -> JSONDict:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
