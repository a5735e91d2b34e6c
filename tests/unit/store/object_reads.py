"""What the store tests read off stored objects: resourceVersions and names."""

from __future__ import annotations

from typing import Any


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


def names(items: list[dict[str, Any]]) -> list[str]:
    return [i["metadata"]["name"] for i in items]
