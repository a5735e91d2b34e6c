"""The watch log and subscribers: events_since, compaction (410 Gone), order, after-flush delivery."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pykueue.api.meta.errors import Gone
from pykueue.store import Store, WatchEvent
from pykueue.testing.builders.raw_specs import bare_cluster_queue as cq
from pykueue.testing.builders.raw_specs import pod

CQ = "clusterqueues.kueue.x-k8s.io"


def _summary(events: list[WatchEvent]) -> list[tuple[str, str, int]]:
    return [(e.type, e.object["metadata"]["name"], e.resource_version) for e in events]


def test_events_since_filters_resource_namespace_and_rv(store: Store) -> None:
    store.create("pods", pod("a", "ns1"))  # 1
    store.create(CQ, cq("q"))  # 2
    store.create("pods", pod("b", "ns2"))  # 3
    store.update("pods", pod("a", "ns1", x="1"), expected_rv=None)  # 4
    store.delete("pods", "ns2", "b")  # 5
    assert _summary(store.events_since("pods", 0)) == [
        ("ADDED", "a", 1),
        ("ADDED", "b", 3),
        ("MODIFIED", "a", 4),
        ("DELETED", "b", 5),
    ]
    assert _summary(store.events_since("pods", 3)) == [("MODIFIED", "a", 4), ("DELETED", "b", 5)]
    assert _summary(store.events_since("pods", 0, "ns2")) == [("ADDED", "b", 3), ("DELETED", "b", 5)]
    assert _summary(store.events_since(CQ, 0, "")) == [("ADDED", "q", 2)]
    assert store.events_since("pods", 5) == []
    assert store.events_since("pods", 50) == []


def test_event_object_is_the_stored_object_with_its_rv(store: Store) -> None:
    store.create("pods", pod("a", x="1"))
    deleted = store.delete("pods", "default", "a")
    events = store.events_since("pods", 0)
    assert events[1].object == deleted
    assert events[1].object["metadata"]["resourceVersion"] == "2"
    assert events[0].object["metadata"]["labels"] == {"x": "1"}
    events[0].object["metadata"]["labels"]["x"] = "mutated"
    assert store.events_since("pods", 0)[0].object["metadata"]["labels"] == {"x": "1"}


def test_compacted_rv_is_gone_with_kube_message() -> None:
    store = Store(compaction_window=3)
    for i in range(5):
        store.create("pods", pod(f"p{i}"))
    assert [e.resource_version for e in store.events_since("pods", 2)] == [3, 4, 5]
    with pytest.raises(Gone) as err:
        store.events_since("pods", 1)
    assert err.value.message == "too old resource version: 1 (2)"
    assert err.value.to_status()["code"] == 410
    assert err.value.to_status()["reason"] == "Expired"


def test_window_counts_all_resources() -> None:
    store = Store(compaction_window=2)
    store.create("pods", pod("a"))
    store.create(CQ, cq("q1"))
    store.create(CQ, cq("q2"))
    with pytest.raises(Gone):
        store.events_since("pods", 0)
    assert store.events_since("pods", 1) == []


def test_long_run_keeps_exactly_the_window() -> None:
    store = Store(compaction_window=100)
    for i in range(10_000):
        store.create("pods", pod(f"p{i}"))
    assert len(store.events_since("pods", 9_900)) == 100
    with pytest.raises(Gone):
        store.events_since("pods", 9_899)


def test_subscribers_get_every_event_in_rv_order(store: Store) -> None:
    seen: list[WatchEvent] = []
    store.subscribe(seen.append)
    store.create("pods", pod("a"))
    store.create(CQ, cq("q"))
    store.update("pods", pod("a"), expected_rv="1")
    store.delete(CQ, "", "q")
    assert [(e.type, e.resource, e.resource_version) for e in seen] == [
        ("ADDED", "pods", 1),
        ("ADDED", CQ, 2),
        ("MODIFIED", "pods", 3),
        ("DELETED", CQ, 4),
    ]
    assert seen[2].object == store.get("pods", "default", "a")


def test_unsubscribe_stops_delivery(store: Store) -> None:
    seen: list[WatchEvent] = []
    unsubscribe = store.subscribe(seen.append)
    store.create("pods", pod("a"))
    unsubscribe()
    unsubscribe()  # idempotent
    store.create("pods", pod("b"))
    assert len(seen) == 1


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_without_auto_flush_events_wait_for_flush(tmp_path: Path, backend: str) -> None:
    store = Store(None if backend == "memory" else str(tmp_path / "s.db"), auto_flush=False)
    seen: list[int] = []
    store.subscribe(lambda e: seen.append(e.resource_version))
    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    assert store.get("pods", "default", "a")["metadata"]["resourceVersion"] == "1"  # visible in memory
    assert seen == []
    assert store.events_since("pods", 0) == []  # watches only see durable changes
    store.flush()
    assert seen == [1, 2]
    assert [e.resource_version for e in store.events_since("pods", 0)] == [1, 2]
    store.flush()
    assert seen == [1, 2]
    store.close()


def test_events_are_dispatched_only_after_commit(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = Store(path, auto_flush=False)
    durable_when_notified: list[bool] = []

    def check(event: WatchEvent) -> None:
        with Store(path) as reader:  # a second connection sees only committed data
            names = [o["metadata"]["name"] for o in reader.list("pods").items]
        durable_when_notified.append(event.object["metadata"]["name"] in names)

    store.subscribe(check)
    store.create("pods", pod("a"))
    store.flush()
    assert durable_when_notified == [True]
    store.close()


def test_failing_subscriber_does_not_break_store_or_others(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[int] = []

    def boom(event: WatchEvent) -> None:
        raise ValueError("subscriber bug")

    store.subscribe(boom)
    store.subscribe(lambda e: seen.append(e.resource_version))
    with caplog.at_level(logging.ERROR, logger="pykueue.store.store"):
        store.create("pods", pod("a"))
        store.create("pods", pod("b"))
    assert seen == [1, 2]
    assert store.get("pods", "default", "b")["metadata"]["resourceVersion"] == "2"
    assert "store subscriber" in caplog.text
    assert "subscriber bug" in caplog.text


def test_subscriber_that_writes_keeps_rv_order(store: Store) -> None:
    seen: list[int] = []

    def react(event: WatchEvent) -> None:
        seen.append(event.resource_version)
        if event.type == "ADDED" and event.resource == "pods":
            store.create("events", pod(event.object["metadata"]["name"] + "-event"))

    store.subscribe(react)
    store.create("pods", pod("a"))
    store.create("pods", pod("b"))
    assert seen == [1, 2, 3, 4]
    assert store.resource_version == 4


def test_flush_dispatches_batches_in_order(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "s.db"), auto_flush=False)
    seen: list[tuple[str, int]] = []
    store.subscribe(lambda e: seen.append((e.type, e.resource_version)))
    store.create("pods", pod("a"))
    store.update("pods", pod("a"), expected_rv="1")
    store.delete("pods", "default", "a")
    store.flush()
    assert seen == [("ADDED", 1), ("MODIFIED", 2), ("DELETED", 3)]
    store.close()


def test_events_carry_key_and_labels_so_a_label_selector_needs_no_decode() -> None:
    store = Store(None)
    seen: list[WatchEvent] = []
    store.subscribe(seen.append)
    store.create("configmaps", {"metadata": {"name": "a", "namespace": "ns", "labels": {"app": "x", "b": "1"}}})
    current = store.get("configmaps", "ns", "a")
    current["metadata"]["labels"] = {"app": "y"}
    store.update("configmaps", current, expected_rv=None)
    store.delete("configmaps", "ns", "a")
    store.create("configmaps", {"metadata": {"name": "bare", "namespace": "ns"}})
    assert [(e.type, e.key, e.labels) for e in seen] == [
        ("ADDED", ("ns", "a"), {"app": "x", "b": "1"}),
        ("MODIFIED", ("ns", "a"), {"app": "y"}),
        ("DELETED", ("ns", "a"), {"app": "y"}),
        ("ADDED", ("ns", "bare"), {}),
    ]
    assert all(e._object is None for e in seen)  # read without decoding the objects
    assert seen[0].object["metadata"]["labels"] == {"app": "x", "b": "1"}
