"""Watch streams over real HTTP: initial state, resume, 410, bookmarks, watch-list, selectors, timeouts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
from tests.waiting import eventually

from pykueue.api.meta.clock import ManualClock
from pykueue.apiserver import serve
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import CQ_PATH, TOKEN, Api, cluster_queue

CM_PATH = "/api/v1/namespaces/default/configmaps"


async def _events(session: aiohttp.ClientSession, url: str) -> AsyncIterator[dict[str, Any]]:
    async with session.get(url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == "application/json"
        async for line in response.content:
            if line.strip():
                yield orjson.loads(line)


async def _collect(session: aiohttp.ClientSession, url: str, count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    async def run() -> None:
        async for event in _events(session, url):
            out.append(event)
            if len(out) == count:
                return

    await asyncio.wait_for(run(), 10)
    return out


async def test_watch_sends_initial_state_then_changes(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("a"))
    before = len(api.store._subscribers)
    task = asyncio.create_task(_collect(api.session, api.url + CQ_PATH + "?watch=true", 3))
    await eventually(lambda: len(api.store._subscribers) > before, what="the watch subscribed")
    await api.request(
        "PATCH", f"{CQ_PATH}/a", {"metadata": {"labels": {"x": "y"}}}, content_type="application/merge-patch+json"
    )
    await api.request("DELETE", f"{CQ_PATH}/a")
    events = await task
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("DELETED", "a"),
    ]
    assert events[1]["object"]["metadata"]["labels"] == {"x": "y"}


async def test_watch_resumes_from_resource_version_in_requested_version(api: Api) -> None:
    _, created, _ = await api.request("POST", CQ_PATH, cluster_queue("a"))
    rv = created["metadata"]["resourceVersion"]
    await api.request(
        "PATCH", f"{CQ_PATH}/a", {"spec": {"cohortName": "team"}}, content_type="application/merge-patch+json"
    )
    url = api.url + f"/apis/kueue.x-k8s.io/v1beta1/clusterqueues?watch=1&resourceVersion={rv}"
    events = await _collect(api.session, url, 1)
    assert events[0]["type"] == "MODIFIED"
    assert events[0]["object"]["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert events[0]["object"]["spec"]["cohort"] == "team"


async def test_compacted_resource_version_is_410_error_event() -> None:
    store = Store(compaction_window=2, auto_flush=False)
    registry = Registry(store, clock=ManualClock())
    server = await serve(registry, "127.0.0.1", 0, token=TOKEN)
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            for i in range(6):
                async with session.post(server.url + CM_PATH, json={"metadata": {"name": f"c{i}"}}) as response:
                    assert response.status == 201
            events = [e async for e in _events(session, server.url + CM_PATH + "?watch=true&resourceVersion=1")]
        assert len(events) == 1
        assert events[0]["type"] == "ERROR"
        status = events[0]["object"]
        assert status["kind"] == "Status"
        assert status["code"] == 410
        assert status["reason"] == "Expired"
    finally:
        await server.close()
        store.close()


async def test_bookmarks_and_watch_list(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("a"))
    url = (
        api.url + CQ_PATH + "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
        "&resourceVersionMatch=NotOlderThan"
    )
    events = await _collect(api.session, url, 3)
    assert events[0]["type"] == "ADDED"
    end = events[1]
    assert end["type"] == "BOOKMARK"
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert end["object"]["kind"] == "ClusterQueue"
    assert int(end["object"]["metadata"]["resourceVersion"]) >= int(events[0]["object"]["metadata"]["resourceVersion"])
    assert events[2]["type"] == "BOOKMARK"  # periodic (bookmark_interval=0.2 in the fixture)
    assert "annotations" not in events[2]["object"]["metadata"]


async def test_label_selector_translates_moves_into_added_and_deleted(api: Api) -> None:
    await api.request("POST", CM_PATH, {"metadata": {"name": "a", "labels": {"app": "x"}}})
    url = api.url + CM_PATH + "?watch=true&labelSelector=app%3Dx"
    before = len(api.store._subscribers)
    task = asyncio.create_task(_collect(api.session, url, 3))
    await eventually(lambda: len(api.store._subscribers) > before, what="the watch subscribed")
    await api.request("POST", CM_PATH, {"metadata": {"name": "other", "labels": {"app": "y"}}})
    await api.request(
        "PATCH", f"{CM_PATH}/a", {"metadata": {"labels": {"app": "z"}}}, content_type="application/merge-patch+json"
    )
    await api.request(
        "PATCH", f"{CM_PATH}/other", {"metadata": {"labels": {"app": "x"}}}, content_type="application/merge-patch+json"
    )
    events = await task
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("DELETED", "a"),
        ("ADDED", "other"),
    ]


async def test_watch_single_object_and_timeout(api: Api) -> None:
    await api.request("POST", CM_PATH, {"metadata": {"name": "a"}})
    await api.request("POST", CM_PATH, {"metadata": {"name": "b"}})
    url = api.url + CM_PATH + "?watch=true&fieldSelector=metadata.name%3Db&timeoutSeconds=1"
    events = [e async for e in _events(api.session, url)]  # ends by itself after 1s
    assert [e["object"]["metadata"]["name"] for e in events] == ["b"]


async def test_watch_as_table(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("a"))
    url = api.url + CQ_PATH + "?watch=true"
    async with api.session.get(url, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}) as response:
        line = await asyncio.wait_for(response.content.readline(), 5)
    event = orjson.loads(line)
    assert event["type"] == "ADDED"
    assert event["object"]["kind"] == "Table"
    assert event["object"]["rows"][0]["cells"][0] == "a"


async def test_disconnect_releases_the_subscription(api: Api) -> None:
    subscribers = api.store._subscribers  # the store's own list: no other way to observe a leak
    before = len(subscribers)
    async with api.session.get(api.url + CM_PATH + "?watch=true") as response:
        assert response.status == 200
        await eventually(lambda: len(subscribers) == before + 1, what="the watch subscribed")
    await eventually(lambda: len(subscribers) == before, what="the closed watch unsubscribed")


async def test_bad_selector_is_400(api: Api) -> None:
    status, error, _ = await api.request("GET", CM_PATH + "?watch=true&labelSelector=a%20in%20(")
    assert status == 400
    assert error["kind"] == "Status"


async def test_resumed_selector_watch_reports_leaving_and_entering(api: Api) -> None:
    _, mover, _ = await api.request("POST", CM_PATH, {"metadata": {"name": "mover", "labels": {"pick": "yes"}}})
    await api.request("POST", CM_PATH, {"metadata": {"name": "other", "labels": {"pick": "no"}}})
    rv = mover["metadata"]["resourceVersion"]
    url = api.url + CM_PATH + f"?watch=true&resourceVersion={rv}&labelSelector=pick%3Dyes"
    task = asyncio.create_task(_collect(api.session, url, 2))  # from a resourceVersion: nothing is missed
    await api.request(
        "PATCH",
        f"{CM_PATH}/other",
        {"metadata": {"annotations": {"a": "b"}}},
        content_type="application/merge-patch+json",
    )  # never matched: not reported
    await api.request(
        "PATCH",
        f"{CM_PATH}/mover",
        {"metadata": {"labels": {"pick": "no"}}},
        content_type="application/merge-patch+json",
    )
    await api.request(
        "PATCH",
        f"{CM_PATH}/mover",
        {"metadata": {"labels": {"pick": "yes"}}},
        content_type="application/merge-patch+json",
    )
    events = await task
    assert [(e["type"], e["object"]["metadata"]["labels"]["pick"]) for e in events] == [
        ("DELETED", "no"),
        ("ADDED", "yes"),
    ]


async def test_watch_from_a_future_resource_version_is_504(api: Api) -> None:
    future = api.store.resource_version + 100
    status, error, _ = await api.request("GET", CM_PATH + f"?watch=true&resourceVersion={future}")
    assert status == 504
    assert error["reason"] == "Timeout"
    assert error["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
