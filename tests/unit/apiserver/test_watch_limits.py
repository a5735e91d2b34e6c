"""Watches cannot hurt the server: bounded queues, stalled connections aborted, a per-client cap.

Real sockets against the in-process server: a raw socket that sends a watch request and never reads
stands for a stalled client; aiohttp sessions stand for the well-behaved ones.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import orjson
from tests.waiting import eventually

from pykueue.api.meta.clock import SystemClock
from pykueue.apiserver import serve
from pykueue.apiserver.watch_limits import WatchLimits
from pykueue.client import GroupVersionResource, HttpClient, Informer
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import TOKEN, Api

CM_PATH = "/api/v1/namespaces/default/configmaps"
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


def configmap(name: str, size: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"v": "x" * size},
    }


async def _stalled_watch(api: Api) -> socket.socket:
    """A watch whose client never reads a byte (a small receive window, so the server's writes block)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", api.server.port))
    request = (
        f"GET {CM_PATH}?watch=true&resourceVersion=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n"
    ).encode()
    await asyncio.get_running_loop().sock_sendall(sock, request)
    return sock


async def test_a_watcher_that_stops_reading_is_closed_and_its_queue_stays_bounded(api: Api) -> None:
    tracker = api.server.watches
    tracker.limits = WatchLimits(max_pending=20, write_timeout=1.0)
    _, listed, _ = await api.request("GET", CM_PATH)
    healthy: list[dict[str, Any]] = []

    async def follow() -> None:
        path = f"{CM_PATH}?watch=true&resourceVersion={listed['metadata']['resourceVersion']}"
        async with api.session.get(api.url + path) as response:
            async for line in response.content:
                if line.strip():
                    healthy.append(orjson.loads(line))

    reader = asyncio.create_task(follow())
    await eventually(lambda: len(tracker.inboxes) == 1, within=5)
    stalled = await _stalled_watch(api)
    await eventually(lambda: len(tracker.inboxes) == 2, within=5)
    loop = asyncio.get_running_loop()
    started = loop.time()
    written = 0
    try:
        # Big objects fill the socket buffers at once; writes go on while the stalled watch is open.
        while tracker.closed_stalled + tracker.closed_slow == 0 or len(tracker.inboxes) > 1:
            assert loop.time() - started < 20, "the stalled watch was not closed"
            status, _, _ = await api.request("POST", CM_PATH, configmap(f"cm-{written}", 256 * 1024))
            assert status == 201
            written += 1
            assert all(inbox.pending() <= 20 and inbox.peak <= 20 for inbox in tracker.inboxes)
            async with api.session.get(api.url + "/healthz") as probe:
                assert probe.status == 200
        assert len(tracker.inboxes) == 1  # only the healthy watch is left
        # The healthy watch kept receiving every write, in order, while the other one stalled.
        await eventually(lambda: len(healthy) == written, within=10)
        assert [e["object"]["metadata"]["name"] for e in healthy] == [f"cm-{i}" for i in range(written)]
        # The stalled socket was closed by the server: reading drains what was buffered, then EOF.
        stalled.setblocking(True)
        stalled.settimeout(5)
        while stalled.recv(1 << 20):
            pass
    finally:
        stalled.close()
        reader.cancel()


async def test_a_watcher_that_falls_behind_sees_its_stream_end_cleanly(api: Api) -> None:
    api.server.watches.limits = WatchLimits(max_pending=5)
    _, listed, _ = await api.request("GET", CM_PATH)
    path = f"{CM_PATH}?watch=true&resourceVersion={listed['metadata']['resourceVersion']}"
    cm = api.registry.kind_for("", "v1", "configmaps")
    async with api.session.get(api.url + path) as response:
        assert response.status == 200
        for i in range(10):  # one tick: ten events queued before the watch can write any
            api.registry.create(cm, "default", configmap(f"burst-{i}"), version="v1")
        body = await asyncio.wait_for(response.read(), 10)  # the stream ends (no hang, no reset)
    assert body.strip() == b""  # no ERROR event: the client resumes from its last resourceVersion
    assert api.server.watches.closed_slow == 1


async def test_a_client_over_the_watch_cap_gets_429_too_many_requests(api: Api) -> None:
    api.server.watches.limits = WatchLimits(max_per_client=2)
    path = api.url + CM_PATH + "?watch=true"
    first = await api.session.get(path)
    second = await api.session.get(path)
    try:
        assert first.status == second.status == 200
        status, body, response = await asyncio.wait_for(api.request("GET", CM_PATH + "?watch=true"), 10)
        assert status == 429
        assert response.headers["Retry-After"] == "1"
        assert (body["kind"], body["reason"], body["code"]) == ("Status", "TooManyRequests", 429)
        assert body["details"]["retryAfterSeconds"] == 1
        status, _, _ = await api.request("GET", CM_PATH)  # lists are not watches: still served
        assert status == 200
    finally:
        first.close()
        second.close()
    await eventually(lambda: api.server.watches.open_watches("127.0.0.1") == 0, within=5)
    async with api.session.get(path) as again:  # the slots are free again once those watches end
        assert again.status == 200


async def test_an_informer_whose_watch_is_closed_for_falling_behind_relists_and_recovers() -> None:
    registry = Registry(Store(None, compaction_window=3), clock=SystemClock())
    server = await serve(registry, "127.0.0.1", 0, token=TOKEN)
    server.watches.limits = WatchLimits(max_pending=5)
    client = HttpClient(server.url, token=TOKEN)
    informer = Informer(client, CONFIGMAPS, namespace="default")
    try:
        await informer.start()
        await eventually(lambda: len(server.watches.inboxes) == 1, within=5)
        cm = registry.kind_for("", "v1", "configmaps")
        for i in range(30):  # one tick: the informer's watch overflows, and its version is compacted
            registry.create(cm, "default", configmap(f"burst-{i}"), version="v1")
        await eventually(lambda: server.watches.closed_slow == 1, within=10)
        await eventually(lambda: len(informer.list("default")) == 30, within=10)
        await client.create(CONFIGMAPS, configmap("after"))  # and the new watch delivers live events
        await eventually(lambda: informer.get("after", "default") is not None, within=10)
    finally:
        await informer.stop()
        await client.close()
        await server.close()
