"""The key index: lazily sorted keys with tombstones must always read as sorted(objects)."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pykueue.store.index import Entry, ResourceIndex, gc_paused

ENTRY: Entry = (1, b"{}")
keys = st.tuples(st.sampled_from(["", "a", "b", "a-b"]), st.sampled_from(["x", "y", "z", "w"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), keys, st.booleans()), max_size=60))
def test_keys_read_sorted_after_any_put_remove_sequence(ops: list[tuple[bool, tuple[str, str], bool]]) -> None:
    index = ResourceIndex()
    for put, key, read in ops:
        if put:
            index.put(key, ENTRY, {})
        elif key in index.objects:
            index.remove(key)
        if read:  # reading sorts and purges midway; later writes must keep it right
            assert index.keys == sorted(index.objects)
    assert index.keys == sorted(index.objects)
    for ns in ["", "a", "a-b", "zz"]:
        lo, hi = index.namespace_range(ns)
        assert index.keys[lo:hi] == sorted(k for k in index.objects if k[0] == ns)


def test_churn_without_reads_keeps_the_key_list_bounded() -> None:
    index = ResourceIndex()
    for i in range(10_000):
        index.put(("ns", f"pod-{i}"), ENTRY, {"app": "x"})
        index.remove(("ns", f"pod-{i}"))
    index.put(("ns", "last"), ENTRY, {})
    assert len(index._keys) <= 2100  # purged as tombstones pile up, not only when read
    assert index.keys == [("ns", "last")]
    assert index.labels == {}


def test_gc_paused_restores_the_collector_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match="boom"), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # an application that turned it off keeps it off
    finally:
        gc.enable()
