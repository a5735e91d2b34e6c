"""Start listening with an aiohttp runner and learn the port: what every server of pykueue does.

The API server, the visibility backend, the webhook server, the metrics endpoints, the controller's
probes and the HTTP benchmark's echo server all bind ``host:port`` where ``port`` may be 0 (a free
port) and then announce the port the kernel chose. aiohttp reports it only through
``runner.addresses``; one function reads it for all of them.
"""

from __future__ import annotations

import ssl

from aiohttp import web

__all__ = ["start_site"]


async def start_site(runner: web.AppRunner, host: str, port: int, *, ssl_context: ssl.SSLContext | None = None) -> int:
    """Listen on ``host:port`` with ``runner`` (set up already), over TLS if ``ssl_context``; the bound port."""
    await web.TCPSite(runner, host, port, ssl_context=ssl_context).start()
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return port
