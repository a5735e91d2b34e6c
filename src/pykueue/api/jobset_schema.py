"""JobSet schema (placeholder)."""

from __future__ import annotations

from pykueue.api.kinds import JSONDict


def schema() -> JSONDict:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
