"""Kueue schemas (placeholder)."""

from __future__ import annotations

from pykueue.api.kinds import JSONDict


def schema(kind: str, version: str) -> JSONDict:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
