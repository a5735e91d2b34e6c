"""Schema defaults reach nested properties; subtrees without defaults are skipped, not broken."""

from __future__ import annotations

from typing import Any

from pykueue.api.defaulting import _has_defaults, apply_schema_defaults

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plain": {"type": "object", "properties": {"a": {"type": "string"}}},
        "sets": {"type": "array", "items": {"type": "object", "properties": {
            "inner": {"type": "object", "properties": {"mode": {"type": "string", "default": "Auto"}}},
        }}},
        "byName": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"n": {"type": "integer", "default": 1}}}},
    },
}


def test_nested_defaults_apply_through_lists_and_maps() -> None:
    value: dict[str, Any] = {"plain": {}, "sets": [{"inner": {}}, {}], "byName": {"x": {}, "y": {"n": 5}}}
    apply_schema_defaults(_SCHEMA, value)
    assert value == {"plain": {}, "sets": [{"inner": {"mode": "Auto"}}, {}],
                     "byName": {"x": {"n": 1}, "y": {"n": 5}}}


def test_only_subtrees_with_defaults_are_walked() -> None:
    properties = _SCHEMA["properties"]
    assert _has_defaults(_SCHEMA)
    assert not _has_defaults(properties["plain"])
    assert _has_defaults(properties["sets"])
    assert _has_defaults(properties["byName"])
    # A schema built later at a recycled address is judged afresh (the memo holds its node).
    for _ in range(100):
        assert not _has_defaults({"type": "object", "properties": {"a": {"type": "string"}}})
        assert _has_defaults({"type": "object", "properties": {"a": {"type": "string", "default": "x"}}})
