"""Validation dispatch (placeholder, filled in next)."""

from __future__ import annotations

from pykueue.api.kinds import FieldError, JSONDict


def validate(group: str, kind: str, obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return []
