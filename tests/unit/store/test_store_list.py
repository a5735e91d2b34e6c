"""Lists: order, namespaces, selectors, and pagination consistent across concurrent writes."""

from __future__ import annotations

import base64

import orjson
import pytest

from pykueue.api.meta.errors import BadRequest, Gone
from pykueue.store import Store
from pykueue.testing.builders.raw_specs import pod

from .object_reads import names


def _fill(store: Store) -> None:
    for ns, name in [("b", "z"), ("a", "y"), ("b", "a"), ("a", "x"), ("c", "m"), ("", "cluster")]:
        store.create("pods", pod(name, ns))


def test_list_is_ordered_by_namespace_then_name(store: Store) -> None:
    _fill(store)
    items = store.list("pods").items
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [
        ("", "cluster"),
        ("a", "x"),
        ("a", "y"),
        ("b", "a"),
        ("b", "z"),
        ("c", "m"),
    ]


def test_list_namespace_filter(store: Store) -> None:
    _fill(store)
    store.create("pods", pod("q", "a-b"))  # "a-b" sorts right after "a": must not leak into "a"
    assert names(store.list("pods", "a").items) == ["x", "y"]
    assert names(store.list("pods", "").items) == ["cluster"]
    assert names(store.list("pods", "nope").items) == []
    assert store.list("other").items == []


def test_list_resource_version_is_store_rv_at_list_time(store: Store) -> None:
    _fill(store)
    store.create("secrets", pod("s"))
    assert store.list("pods").resource_version == 7
    assert store.list("empty").resource_version == 7


def test_list_with_selectors(store: Store) -> None:
    store.create("pods", pod("a", "ns", app="web"))
    store.create("pods", pod("b", "ns", app="db"))
    store.create("pods", pod("c", "other", app="web"))
    body = pod("d", "ns")
    body["status"] = {"phase": "Running"}
    store.create("pods", body)
    assert names(store.list("pods", label_selector="app=web").items) == ["a", "c"]
    assert names(store.list("pods", "ns", label_selector="app").items) == ["a", "b"]
    assert names(store.list("pods", field_selector="metadata.namespace!=ns").items) == ["c"]
    assert names(store.list("pods", field_selector="metadata.name=b").items) == ["b"]
    assert names(store.list("pods", field_selector="status.phase=Running").items) == ["d"]
    assert names(store.list("pods", label_selector="!app", field_selector="metadata.name=d").items) == ["d"]
    with pytest.raises(BadRequest, match=r"field label not supported: status\.phase"):
        store.list("pods", field_selector="status.phase=Running", selectable_fields=())
    with pytest.raises(BadRequest, match="unable to parse requirement"):
        store.list("pods", label_selector="app in web")


def _pages(store: Store, limit: int, **kw: str) -> list[list[str]]:
    pages, token = [], None
    while True:
        page = store.list("pods", limit=limit, continue_token=token, **kw)
        pages.append(names(page.items))
        token = page.continue_token
        if token is None:
            return pages


def test_pagination_walks_everything_once(store: Store) -> None:
    for i in range(7):
        store.create("pods", pod(f"p{i}"))
    assert _pages(store, 3) == [["p0", "p1", "p2"], ["p3", "p4", "p5"], ["p6"]]
    assert _pages(store, 7) == [[f"p{i}" for i in range(7)]]
    assert _pages(store, 0) == [[f"p{i}" for i in range(7)]]


def test_remaining_item_count_only_without_selectors(store: Store) -> None:
    for i in range(5):
        store.create("pods", pod(f"p{i}", app="x"))
    first = store.list("pods", limit=2)
    assert first.remaining_item_count == 3
    second = store.list("pods", limit=2, continue_token=first.continue_token)
    assert second.remaining_item_count == 1
    assert store.list("pods", limit=2, continue_token=second.continue_token).remaining_item_count is None
    selected = store.list("pods", limit=2, label_selector="app=x")
    assert selected.continue_token is not None
    assert selected.remaining_item_count is None


def test_pagination_with_selector_fills_pages(store: Store) -> None:
    for i in range(10):
        store.create("pods", pod(f"p{i}", even="yes" if i % 2 == 0 else "no"))
    assert _pages(store, 2, label_selector="even=yes") == [["p0", "p2"], ["p4", "p6"], ["p8"]]


def test_continue_is_a_consistent_snapshot_across_concurrent_writes(store: Store) -> None:
    for i in range(6):
        store.create("pods", pod(f"p{i}", v="old"))
    first = store.list("pods", limit=2)
    snapshot_rv = first.resource_version
    # Concurrent writes after the first page: delete a later item, add one, modify one twice.
    store.delete("pods", "default", "p3")
    store.create("pods", pod("p35"))
    store.update("pods", pod("p4", v="new"), expected_rv=None)
    store.update("pods", pod("p4", v="newer"), expected_rv=None)
    store.delete("pods", "default", "p1")  # already served: must not matter
    second = store.list("pods", limit=3, continue_token=first.continue_token)
    assert second.resource_version == snapshot_rv
    assert names(second.items) == ["p2", "p3", "p4"]
    assert second.items[2]["metadata"]["labels"] == {"v": "old"}
    assert second.items[1]["metadata"]["resourceVersion"] == "4"
    assert second.remaining_item_count == 1
    third = store.list("pods", limit=3, continue_token=second.continue_token)
    assert names(third.items) == ["p5"]
    assert third.continue_token is None
    # A fresh list sees the new state.
    assert names(store.list("pods").items) == ["p0", "p2", "p35", "p4", "p5"]


def test_continue_snapshot_applies_selectors_to_old_bodies(store: Store) -> None:
    for i in range(4):
        store.create("pods", pod(f"p{i}", app="web"))
    first = store.list("pods", limit=1, label_selector="app=web")
    store.update("pods", pod("p2", app="db"), expected_rv=None)
    store.update("pods", pod("p3", app="db"), expected_rv=None)
    rest = store.list("pods", limit=10, label_selector="app=web", continue_token=first.continue_token)
    assert names(rest.items) == ["p1", "p2", "p3"]


def test_continue_token_from_compacted_snapshot_is_gone() -> None:
    store = Store(compaction_window=3)
    for i in range(4):
        store.create("pods", pod(f"p{i}"))
    first = store.list("pods", limit=1)
    for i in range(3):
        store.update("pods", pod("p0", n=str(i)), expected_rv=None)
    assert store.list("pods", limit=1, continue_token=first.continue_token).items  # still in window
    store.update("pods", pod("p0"), expected_rv=None)
    with pytest.raises(Gone) as err:
        store.list("pods", limit=1, continue_token=first.continue_token)
    assert err.value.message.startswith(
        "The provided continue parameter is too old to display a consistent list result."
    )
    assert err.value.to_status()["code"] == 410
    assert err.value.to_status()["reason"] == "Expired"


def _token(body: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(body)).decode()


@pytest.mark.parametrize(
    "token",
    [
        "!!!not base64",
        base64.urlsafe_b64encode(b"not json").decode(),
        _token([1, 2]),
        _token({"v": "other/v1", "rv": 1, "start": "a/b\x00"}),
        _token({"v": "meta.k8s.io/v1", "rv": "1", "start": "a/b\x00"}),
        _token({"v": "meta.k8s.io/v1", "rv": 1, "start": ""}),
        _token({"v": "meta.k8s.io/v1", "rv": 1, "start": "nokey"}),
        _token({"v": "meta.k8s.io/v1", "rv": 99, "start": "a/b\x00"}),
    ],
)
def test_bad_continue_token_is_bad_request(store: Store, token: str) -> None:
    store.create("pods", pod("a"))
    with pytest.raises(BadRequest, match=r"^invalid continue token: continue key is not valid"):
        store.list("pods", limit=1, continue_token=token)


def test_continue_token_with_rv_minus_one_lists_current_state(store: Store) -> None:
    for name in ["a", "b", "c"]:
        store.create("pods", pod(name))
    store.delete("pods", "default", "b")
    page = store.list("pods", continue_token=_token({"v": "meta.k8s.io/v1", "rv": -1, "start": "default/a\x00"}))
    assert names(page.items) == ["c"]
    assert page.resource_version == store.resource_version


def _raw_equals_decoded(store: Store, **kw: object) -> None:
    decoded = store.list("pods", **kw)  # type: ignore[arg-type]
    raw = store.list_raw("pods", **kw)  # type: ignore[arg-type]
    assert [orjson.loads(b) for b in raw.items] == decoded.items
    assert (raw.resource_version, raw.continue_token, raw.remaining_item_count) == (
        decoded.resource_version,
        decoded.continue_token,
        decoded.remaining_item_count,
    )


def test_list_raw_is_list_without_decoding(store: Store) -> None:
    _fill(store)
    store.create("pods", pod("w", "a", app="web"))
    body = pod("r", "a")
    body["status"] = {"phase": "Running"}
    store.create("pods", body)
    _raw_equals_decoded(store)
    _raw_equals_decoded(store, namespace="a")
    _raw_equals_decoded(store, label_selector="app=web")
    _raw_equals_decoded(store, field_selector="status.phase=Running")
    _raw_equals_decoded(store, field_selector="metadata.name=x")
    _raw_equals_decoded(store, limit=2)
    first = store.list("pods", limit=2)
    store.delete("pods", "a", "x")
    store.update("pods", pod("y", "a", v="new"), expected_rv=None)
    _raw_equals_decoded(store, limit=3, continue_token=first.continue_token)
    assert all(isinstance(b, bytes) for b in store.list_raw("pods").items)
