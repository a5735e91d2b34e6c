"""``start_site``: every server of pykueue binds port 0 and announces the port the kernel chose."""

from __future__ import annotations

import socket

import aiohttp
from aiohttp import web

from pykueue.listening import start_site


async def test_port_zero_reports_the_bound_port_and_serves_on_it() -> None:
    async def hello(_: web.Request) -> web.Response:
        return web.Response(text="hello")

    app = web.Application()
    app.router.add_get("/", hello)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        port = await start_site(runner, "127.0.0.1", 0)
        assert port != 0
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/") as response:
            assert await response.text() == "hello"
    finally:
        await runner.cleanup()


async def test_a_given_port_is_the_one_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        wanted = probe.getsockname()[1]
    runner = web.AppRunner(web.Application(), access_log=None)
    await runner.setup()
    try:
        assert await start_site(runner, "127.0.0.1", wanted) == wanted
    finally:
        await runner.cleanup()
