"""Informer: list+watch cache, handlers, indices, resume, and re-list after 410 Gone (both clients)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.waiting import eventually, stays_true

from pykueue.client import Client, GroupVersionResource, Informer, LocalClient

from .conftest import make_registry, open_client

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


def cm(name: str, value: str = "1", labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"v": value}}


async def test_start_lists_into_the_cache_and_handlers_follow_changes(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("pre"))
    informer = Informer(client, CONFIGMAPS, namespace="default")
    events: list[tuple[str, str, str | None]] = []
    informer.add_handler(
        lambda kind, obj, old: events.append((kind, obj["metadata"]["name"], old["data"]["v"] if old else None))
    )
    await informer.start()
    try:
        assert informer.synced
        assert informer.get("pre", "default") is not None
        assert events == [("ADDED", "pre", None)]
        await client.patch(CONFIGMAPS, "pre", {"data": {"v": "2"}}, namespace="default")
        await client.create(CONFIGMAPS, cm("new"))
        await client.delete(CONFIGMAPS, "pre", "default")
        await eventually(lambda: len(events) == 4)
        assert events[1:] == [("MODIFIED", "pre", "1"), ("ADDED", "new", None), ("DELETED", "pre", None)]
        assert informer.get("pre", "default") is None
        assert [o["metadata"]["name"] for o in informer.list("default")] == ["new"]
        assert informer.list("elsewhere") == []
    finally:
        await informer.stop()


async def test_label_selector_scopes_the_cache(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("in", labels={"app": "x"}))
    await client.create(CONFIGMAPS, cm("out", labels={"app": "y"}))
    informer = Informer(client, CONFIGMAPS, label_selector="app=x")
    await informer.start()
    try:
        assert [o["metadata"]["name"] for o in informer.list()] == ["in"]
    finally:
        await informer.stop()


async def test_index_tracks_adds_updates_and_deletes(client: Client) -> None:
    informer = Informer(client, CONFIGMAPS, namespace="default")
    informer.add_index("by-value", lambda o: [o["data"]["v"]])
    await informer.start()
    try:
        await client.create(CONFIGMAPS, cm("a", "red"))
        await client.create(CONFIGMAPS, cm("b", "red"))
        await eventually(lambda: len(informer.by_index("by-value", "red")) == 2)
        await client.patch(CONFIGMAPS, "a", {"data": {"v": "blue"}}, namespace="default")
        await eventually(lambda: len(informer.by_index("by-value", "blue")) == 1)
        assert [o["metadata"]["name"] for o in informer.by_index("by-value", "red")] == ["b"]
        await client.delete(CONFIGMAPS, "b", "default")
        await eventually(lambda: informer.by_index("by-value", "red") == [])
    finally:
        await informer.stop()


async def test_handler_added_after_start_sees_the_cache_as_added(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("late"))
    informer = Informer(client, CONFIGMAPS, namespace="default")
    await informer.start()
    try:
        seen: list[str] = []
        informer.add_handler(lambda kind, obj, old: seen.append(f"{kind} {obj['metadata']['name']}"))
        assert seen == ["ADDED late"]
    finally:
        await informer.stop()


async def test_a_failing_handler_does_not_stop_the_others(client: Client) -> None:
    informer = Informer(client, CONFIGMAPS, namespace="default")
    seen: list[str] = []

    def broken(kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        raise RuntimeError("handler bug")

    informer.add_handler(broken)
    informer.add_handler(lambda kind, obj, old: seen.append(obj["metadata"]["name"]))
    await informer.start()
    try:
        await client.create(CONFIGMAPS, cm("x"))
        await eventually(lambda: seen == ["x"])
    finally:
        await informer.stop()


@pytest.mark.parametrize("kind", ["local", "http"])
async def test_relist_after_gone_synthesizes_missed_changes(kind: str) -> None:
    registry = make_registry(compaction_window=3)
    async with open_client(kind, registry) as client:
        await client.create(CONFIGMAPS, cm("kept"))
        await client.create(CONFIGMAPS, cm("removed"))
        informer = Informer(client, CONFIGMAPS, namespace="default")
        events: list[tuple[str, str]] = []
        informer.add_handler(lambda k, obj, old: events.append((k, obj["metadata"]["name"])))
        await informer.start()
        await informer.stop()  # "disconnected": changes below are missed, then compacted away
        events.clear()
        await client.patch(CONFIGMAPS, "kept", {"data": {"v": "2"}}, namespace="default")
        await client.delete(CONFIGMAPS, "removed", "default")
        for i in range(6):
            await client.create(CONFIGMAPS, cm(f"filler{i}"))
        informer._task = None
        informer._task = asyncio.create_task(informer._run())
        try:
            await eventually(lambda: ("DELETED", "removed") in events and ("MODIFIED", "kept") in events)
            await eventually(lambda: len(informer.list()) == 7)
            assert informer.get("removed", "default") is None
            assert informer.get("kept", "default")["data"]["v"] == "2"
        finally:
            await informer.stop()


async def test_watch_resumes_from_the_last_seen_version_without_duplicates(client: Client) -> None:
    informer = Informer(client, CONFIGMAPS, namespace="default")
    events: list[tuple[str, str]] = []
    informer.add_handler(lambda k, obj, old: events.append((k, obj["metadata"]["name"])))
    await informer.start()
    await client.create(CONFIGMAPS, cm("one"))
    await eventually(lambda: events == [("ADDED", "one")])
    await informer.stop()
    await client.create(CONFIGMAPS, cm("two"))
    informer._task = asyncio.create_task(informer._run())  # reconnect from the remembered version
    try:
        await eventually(lambda: len(events) == 2)
        await stays_true(lambda: events == [("ADDED", "one"), ("ADDED", "two")], settle=0.1, what="no replay")
    finally:
        await informer.stop()


async def test_http_informer_survives_an_api_server_restart() -> None:
    from pykueue.client import HttpClient

    from .conftest import start_server

    registry = make_registry()
    server, url, token = await start_server(registry)
    port = server.port
    client = HttpClient(url, token=token)
    informer = Informer(client, CONFIGMAPS, namespace="default")
    await informer.start()
    try:
        await server.close()  # the watch connection drops
        await LocalClient(registry).create(CONFIGMAPS, cm("while-down"))
        from pykueue.apiserver import serve

        server = await serve(registry, "127.0.0.1", port, token=token)
        await eventually(lambda: informer.get("while-down", "default") is not None, within=30)
    finally:
        await informer.stop()
        await client.close()
        await server.close()


async def test_label_informer_drops_objects_that_leave_the_selection(client: Client) -> None:
    await client.create(CONFIGMAPS, cm("leaver", labels={"app": "x"}))
    informer = Informer(client, CONFIGMAPS, namespace="default", label_selector="app=x")
    events: list[str] = []
    informer.add_handler(lambda k, obj, old: events.append(k))
    await informer.start()
    try:
        await client.patch(CONFIGMAPS, "leaver", {"metadata": {"labels": {"app": "y"}}}, namespace="default")
        await eventually(lambda: informer.get("leaver", "default") is None, within=5)
        assert events == ["ADDED", "DELETED"]
    finally:
        await informer.stop()


async def test_local_watch_delivers_a_queued_burst_without_one_loop_turn_per_event() -> None:
    """A busy event loop (the scheduler's cycles) must not throttle an in-process watch to one event
    per loop iteration: that once left the scheduler's Workload cache seconds behind the store."""
    client = LocalClient(make_registry())
    informer = Informer(client, CONFIGMAPS, namespace="default")
    await informer.start()
    try:
        await client.create(CONFIGMAPS, cm("first"))
        await eventually(lambda: informer.get("first", "default") is not None)  # the watch is live
        for i in range(300):  # one synchronous burst: all 300 events are queued before the watch runs
            await client.create(CONFIGMAPS, cm(f"burst-{i}"))
        turns = 0
        while len(informer.list()) < 301 and turns < 1000:
            await asyncio.sleep(0)  # one loop iteration, as a competing busy coroutine would take
            turns += 1
        assert len(informer.list()) == 301
        assert turns < 30, f"the watch needed {turns} loop iterations for 300 queued events"
    finally:
        await informer.stop()
