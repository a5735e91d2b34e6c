"""One ``/metrics`` answer from a registry of our own plus the registries of other processes.

Owns :class:`MetricsEndpoint`: the Prometheus text format of its registry followed by what each
remote source (another process's metrics port: the controller process of ``pykueue up
--controllers process``) answers at that moment, so a scrape of the API server sees every metric
of the installation, fresh, in one document. The families of the sources never overlap (the
server's registry holds the ``apiserver_*`` metrics, the controllers' the ``kueue_*`` ones), so
their text can be joined as is. Also :func:`serve_metrics`, the small loopback HTTP server the
controller process of ``--controllers process`` serves its registry on, behind a bearer token
(``pykueue controller``'s port is :mod:`.secure_endpoint`).

Invariant: a scrape never fails because a source is down: that source's part is left out (and a
warning logged), the rest is served.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from pykueue.listening import start_site

__all__ = ["CONTENT_TYPE", "MetricsEndpoint", "RemoteSource", "serve_metrics"]

log = logging.getLogger(__name__)

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
"""Prometheus' text format 0.0.4, which every scraper (and ``kubectl get --raw``) reads."""
REMOTE_TIMEOUT_S = 5.0


class RemoteSource:
    """Another process's metrics: ``url()`` (None while it has none) and the bearer token it wants."""

    def __init__(self, url: Callable[[], str | None], token: str) -> None:
        self.url = url
        self.token = token


class MetricsEndpoint:
    """The text of ``registry`` plus each remote source's, for one scrape."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.sources: list[RemoteSource] = []
        self._session: aiohttp.ClientSession | None = None

    def add_source(self, source: RemoteSource) -> None:
        self.sources.append(source)

    async def render(self) -> bytes:
        # On the event loop's thread, on purpose: collectors read the scheduler engine, which only
        # that thread may touch.
        parts = [generate_latest(self.registry)]
        for source in self.sources:
            url = source.url()
            if url is None:
                continue
            try:
                parts.append(await self._fetch(url, source.token))
            except (aiohttp.ClientError, TimeoutError) as exc:
                log.warning("metrics of %s left out of this scrape: %s", url, exc or type(exc).__name__)
        return b"".join(parts)

    async def _fetch(self, url: str, token: str) -> bytes:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=REMOTE_TIMEOUT_S))
        async with self._session.get(url, headers={"Authorization": f"Bearer {token}"}) as response:
            response.raise_for_status()
            return await response.read()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def serve_metrics(registry: CollectorRegistry, host: str, port: int, *, token: str) -> tuple[web.AppRunner, int]:
    """Serve ``GET /metrics`` of ``registry`` on ``host:port`` (0: a free port) for bearer ``token``.

    Returns the runner (``await runner.cleanup()`` stops it) and the bound port."""

    async def metrics(request: web.Request) -> web.StreamResponse:
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            return web.Response(status=401, text="Unauthorized")
        return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    return runner, await start_site(runner, host, port)
