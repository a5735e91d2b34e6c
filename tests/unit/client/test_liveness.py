"""Client liveness: keepalive on every connection, a read timeout on watches, full-jitter waits."""

from __future__ import annotations

import asyncio
import socket

import aiohttp
import pytest
from aiohttp import web

from pykueue.client import GroupVersionResource, HttpClient
from pykueue.client import http as http_module
from pykueue.client.http import keepalive_socket
from pykueue.client.informer import full_jitter


def test_connections_notice_a_vanished_peer_within_30_seconds() -> None:
    info = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("127.0.0.1", 0))
    with keepalive_socket(info) as sock:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        idle = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE)
        interval = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL)
        probes = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT)
        assert idle + interval * probes <= 30
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) <= 30_000


def test_full_jitter_stays_within_the_bound() -> None:
    waits = [full_jitter(2.0) for _ in range(1000)]
    assert all(0.0 <= w <= 2.0 for w in waits)
    assert min(waits) < 0.5
    assert max(waits) > 1.5  # spread over the whole range, not a fixed wait


async def test_a_silent_watch_is_dropped_by_the_read_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that holds the watch open but sends nothing (hung, or a dead peer behind a proxy)."""

    async def silent_watch(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await asyncio.Event().wait()  # never another byte
        return response

    app = web.Application()
    app.router.add_get("/api/v1/namespaces", silent_watch)
    runner = web.AppRunner(app, shutdown_timeout=0.1)  # the handler never returns by itself
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    monkeypatch.setattr(http_module, "_WATCH_TIMEOUT", aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=0.3))
    client = HttpClient(f"http://127.0.0.1:{port}")

    async def drain() -> None:
        async with asyncio.timeout(30):  # only stops a hung test (with a plain TimeoutError)
            async for _ in client.watch(GroupVersionResource("", "v1", "namespaces")):
                pass

    try:
        with pytest.raises(aiohttp.ServerTimeoutError):
            await drain()
    finally:
        await client.close()
        await runner.cleanup()


def test_watch_read_timeout_outlasts_kube_apiservers_bookmarks() -> None:
    assert http_module._WATCH_TIMEOUT.sock_read == http_module.WATCH_READ_TIMEOUT_S
    assert 60 < http_module.WATCH_READ_TIMEOUT_S <= 120
