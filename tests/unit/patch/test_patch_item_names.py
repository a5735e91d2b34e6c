"""FieldsV1 names keyed list items and set items by the JSON of their keys (``k:{"type":"Ready"}``).

``fieldpaths._dump`` writes that JSON with orjson for the values keys hold (strings, 64-bit
integers, booleans, null, flat maps of them) and with ``json.dumps`` otherwise; either way the text
must be exactly Go's compact, key-sorted JSON, or an entry written before and one written after
would name the same item differently (ownership would be lost or duplicated).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pykueue.registry.patch.fieldpaths import _dump, item_element


def _reference(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [
        "Ready",
        "",
        'quote " backslash \\ slash /',
        "ü € 😀 \u2028 \u2029 \x7f",
        0,
        -(2**63),
        2**64 - 1,
        2**64,  # past orjson's range: json.dumps
        -(2**63) - 1,
        True,
        False,
        None,
        1.5,  # floats: json.dumps
        1e16,
        {"type": "Ready"},
        {"name": "c", "protocol": "TCP", "containerPort": 80},
        {"b": 1, "a": "x"},
        {"nested": {"a": 1}},  # not flat: json.dumps
        [1, 2],
    ],
)
def test_item_names_are_the_reference_json(value: Any) -> None:
    assert _dump(value) == _reference(value)


def test_every_control_and_bmp_character_is_escaped_as_the_reference_does() -> None:
    for code in range(0x3000):
        text = chr(code)
        assert _dump(text) == _reference(text), hex(code)
        assert _dump({"k": text}) == _reference({"k": text}), hex(code)


def test_a_condition_is_named_by_its_type() -> None:
    assert item_element({"type": "Finished", "status": "True"}, ("type",)) == 'k:{"type":"Finished"}'
    assert item_element("a", ()) == 'v:"a"'
