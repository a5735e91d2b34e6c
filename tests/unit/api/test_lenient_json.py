"""The lenient JSON readers that validation uses on objects whose shape nothing has checked yet."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.lenient_json import dict_or_empty, hashable_key, list_or_empty


def test_a_map_or_a_list_is_returned_itself() -> None:
    spec: dict[str, Any] = {"a": 1}
    items: list[Any] = [1, 2]
    assert dict_or_empty(spec) is spec
    assert list_or_empty(items) is items


@pytest.mark.parametrize("bad", [None, "x", 3, [1], {"a": 1}])
def test_a_wrong_shape_reads_as_empty(bad: Any) -> None:
    if not isinstance(bad, dict):
        assert dict_or_empty(bad) == {}
    if not isinstance(bad, list):
        assert list_or_empty(bad) == []


def test_a_fresh_empty_map_each_time_so_writes_never_leak() -> None:
    first = dict_or_empty(None)
    first["x"] = 1
    assert dict_or_empty(None) == {}


@pytest.mark.parametrize("scalar", ["cpu", 1, 1.5, True, None])
def test_scalars_are_their_own_key(scalar: Any) -> None:
    assert hashable_key(scalar) is scalar


def test_a_list_or_map_used_as_a_key_becomes_a_stable_hashable_stand_in() -> None:
    keys = {hashable_key(["a"]), hashable_key(["a"]), hashable_key({"n": 1})}
    assert keys == {"['a']", "{'n': 1}"}
