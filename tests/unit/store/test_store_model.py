"""Property test: random operation sequences against a plain-dict model of the store.

The model is a dict key -> (rv, labels) plus a counter. After every step the store's state,
its rvs and its event log must agree with the model; a restart (SQLite) must change nothing, and
a crash must keep exactly what was flushed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pykueue.api.meta.errors import AlreadyExists, Conflict, Gone, NotFound
from pykueue.store import Store
from pykueue.testing.builders.raw_specs import pod

NAMESPACES = ("", "a", "b")
NAMES = ("x", "y", "z")
LABEL_VALUES = ("1", "2")

keys = st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(NAMES))
ops = st.one_of(
    st.tuples(st.just("create"), keys, st.sampled_from(LABEL_VALUES)),
    st.tuples(st.just("update"), keys, st.sampled_from(LABEL_VALUES), st.sampled_from(["none", "right", "stale"])),
    st.tuples(st.just("delete"), keys, st.sampled_from(["none", "right", "stale"])),
    st.tuples(st.just("flush")),
    st.tuples(st.just("restart")),
    st.tuples(st.just("crash")),
)


@dataclass
class Model:
    objects: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    rv: int = 0
    events: list[tuple[str, tuple[str, str], int]] = field(default_factory=list)
    durable_rv: int = 0
    durable_objects: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)


def _expected(choice: str, current: int) -> str | None:
    return {"none": None, "right": str(current), "stale": str(current + 1000)}[choice]


def _apply(store: Store, model: Model, op: tuple[Any, ...]) -> None:
    kind = op[0]
    if kind == "create":
        _, key, label = op
        if key in model.objects:
            with pytest.raises(AlreadyExists):
                store.create("pods", pod(key[1], key[0], v=label))
            return
        created = store.create("pods", pod(key[1], key[0], v=label))
        model.rv += 1
        model.objects[key] = (model.rv, label)
        model.events.append(("ADDED", key, model.rv))
        assert created["metadata"]["resourceVersion"] == str(model.rv)
    elif kind in ("update", "delete"):
        key, choice = op[1], op[-1]
        current = model.objects.get(key)
        expected = _expected(choice, current[0] if current else 0)
        try:
            if kind == "update":
                result = store.update("pods", pod(key[1], key[0], v=op[2]), expected_rv=expected)
            else:
                result = store.delete("pods", key[0], key[1], expected_rv=expected)
        except NotFound:
            assert current is None
            return
        except Conflict:
            assert current is not None
            assert choice == "stale"
            return
        assert current is not None
        assert choice != "stale"
        model.rv += 1
        assert result["metadata"]["resourceVersion"] == str(model.rv)
        if kind == "update":
            model.objects[key] = (model.rv, op[2])
            model.events.append(("MODIFIED", key, model.rv))
        else:
            del model.objects[key]
            model.events.append(("DELETED", key, model.rv))


def _check(store: Store, model: Model, since: int, durable: bool) -> None:
    assert store.resource_version == model.rv
    listed = store.list("pods").items
    assert [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in listed] == sorted(model.objects)
    for obj in listed:
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        assert (int(obj["metadata"]["resourceVersion"]), obj["metadata"]["labels"]["v"]) == model.objects[key]
    for value in LABEL_VALUES:
        selected = store.list("pods", label_selector=f"v={value}").items
        assert len(selected) == sum(1 for _, v in model.objects.values() if v == value)
    events = store.events_since("pods", since)
    want = [e for e in model.events if e[2] > since and (durable or e[2] <= model.durable_rv)]
    assert [
        (e.type, (e.object["metadata"].get("namespace", ""), e.object["metadata"]["name"]), e.resource_version)
        for e in events
    ] == want


@settings(max_examples=60, deadline=None)
@given(st.lists(ops, max_size=40), st.booleans())
def test_store_matches_dict_model(operations: list[tuple[Any, ...]], auto_flush: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "s.db")
        store = Store(path, auto_flush=auto_flush)
        model = Model()
        since = 0  # events_since only reaches back to the last restart
        for op in operations:
            if op[0] == "flush":
                store.flush()
            elif op[0] == "restart":
                store.close()  # flushes: nothing acknowledged is lost across a restart
                store = Store(path, auto_flush=auto_flush)
                since = model.rv
            elif op[0] == "crash":  # the process dies: unflushed writes are lost, flushed ones stay
                del store  # like process exit: the file lock and connection go away
                store = Store(path, auto_flush=auto_flush)
                model.objects = dict(model.durable_objects)
                model.rv = model.durable_rv
                model.events = [e for e in model.events if e[2] <= model.rv]
                since = model.rv
            else:
                _apply(store, model, op)
            durable = auto_flush or op[0] in ("flush", "restart", "crash")
            if durable:
                model.durable_rv = model.rv
                model.durable_objects = dict(model.objects)
            _check(store, model, since, durable)
        store.close()


writes = st.one_of(
    st.tuples(st.just("create"), keys, st.sampled_from(LABEL_VALUES)),
    st.tuples(st.just("update"), keys, st.sampled_from(LABEL_VALUES), st.just("none")),
    st.tuples(st.just("delete"), keys, st.just("none")),
)


@settings(max_examples=100, deadline=None)
@given(
    st.sets(keys, min_size=3),
    st.lists(st.lists(writes, max_size=3), max_size=8),
    st.integers(min_value=1, max_value=3),
    st.sampled_from([None, "v=1", "!v"]),
)
def test_paginated_list_equals_snapshot(
    initial: set[tuple[str, str]], between: list[list[tuple[Any, ...]]], limit: int, selector: str | None
) -> None:
    """Pages fetched while writes continue concatenate to exactly the list at the first page's rv."""
    store = Store()
    model = Model()
    for key in sorted(initial):
        _apply(store, model, ("create", key, "1" if key[1] != "y" else "2"))
    want = store.list("pods", label_selector=selector).items
    page = store.list("pods", limit=limit, label_selector=selector)
    got = list(page.items)
    for batch in [*between, *([[]] * 10)]:
        if page.continue_token is None:
            break
        for op in batch:
            _apply(store, model, op)
        page = store.list("pods", limit=limit, continue_token=page.continue_token, label_selector=selector)
        assert page.resource_version == len(initial)
        got.extend(page.items)
    assert page.continue_token is None
    assert got == want


@settings(max_examples=100, deadline=None)
@given(
    st.lists(writes, min_size=1, max_size=40),
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=0, max_value=45),
    st.sampled_from([None, "", "a", "b"]),
)
def test_events_since_is_exact_or_gone_at_any_window(
    operations: list[tuple[Any, ...]], window: int, since: int, namespace: str | None
) -> None:
    """Whatever the window, a replay is either every event after ``since`` or 410 Gone, and Gone
    only when an event after ``since`` has really been compacted away."""
    store = Store(compaction_window=window)
    model = Model()
    for op in operations:
        _apply(store, model, op)
    want = [e for e in model.events if e[2] > since and (namespace is None or e[1][0] == namespace)]
    oldest_kept = max(0, model.rv - window)  # rv of the newest event already dropped
    try:
        got = store.events_since("pods", since, namespace)
    except Gone:
        assert since < oldest_kept
        return
    assert since >= oldest_kept
    assert [
        (e.type, (e.object["metadata"].get("namespace", ""), e.object["metadata"]["name"]), e.resource_version)
        for e in got
    ] == want
