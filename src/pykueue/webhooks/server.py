"""The HTTPS server of Kueue's webhooks: AdmissionReview at each webhook's path, ConversionReview at ``/convert``.

Owned by ``webhooks/``; started by ``pykueue controller`` on every replica (leader or not: an API
server may call any of them). Each path of :mod:`pykueue.webhooks.catalogue` answers ``POST`` with
a JSON ``AdmissionReview`` through :class:`~pykueue.webhooks.review.ReviewHandler`; ``/convert``
answers ``ConversionReview`` for Kueue's CRDs. TLS only (the API server verifies the certificate
against the ``caBundle`` injected into the configurations), TLS 1.2 at least.

Fails closed: a body that is not JSON, or not a review, is a 400 with a one-line reason; an unknown
path 404; a wrong method 405; a body over :data:`MAX_BODY` 413. Never a traceback.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson
from aiohttp import web

from pykueue.listening import start_site
from pykueue.webhooks.catalogue import CONVERT_PATH, Webhook
from pykueue.webhooks.review import BadReview, ReviewHandler, convert_review

__all__ = ["MAX_BODY", "serve_webhooks", "server_ssl_context"]

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024 * 1024
"""Largest review body accepted (an object is at most ~1.5 MiB in etcd; a review holds two)."""


def server_ssl_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(str(cert_file), str(key_file))
    return context


def _bad(message: str, status: int = 400) -> web.Response:
    return web.Response(status=status, text=message + "\n", content_type="text/plain")


async def _body(request: web.Request) -> object:
    media = request.content_type
    if media != "application/json":
        raise BadReview(f"Content-Type must be application/json, got {media!r}")
    raw = await request.read()
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadReview(f"the body is not JSON: {exc}") from None


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _admission_route(handler: ReviewHandler, webhook: Webhook) -> _Handler:
    async def serve(request: web.Request) -> web.StreamResponse:
        try:
            answer = handler.review(webhook, await _body(request))
        except BadReview as exc:
            return _bad(f"{webhook.name}: {exc}")
        return web.Response(body=orjson.dumps(answer), content_type="application/json")

    return serve


async def _convert(request: web.Request) -> web.StreamResponse:
    try:
        answer = convert_review(await _body(request))
    except BadReview as exc:
        return _bad(f"conversion: {exc}")
    return web.Response(body=orjson.dumps(answer), content_type="application/json")


def webhook_app(handler: ReviewHandler, webhooks: list[Webhook]) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    for webhook in webhooks:
        app.router.add_post(webhook.path, _admission_route(handler, webhook))
    app.router.add_post(CONVERT_PATH, _convert)
    return app


async def serve_webhooks(
    handler: ReviewHandler,
    webhooks: list[Webhook],
    *,
    host: str,
    port: int,
    cert_file: Path,
    key_file: Path,
    ssl_context: ssl.SSLContext | None = None,
) -> tuple[web.AppRunner, int]:
    """Serve on ``host:port`` (0: a free port) over TLS; returns the runner and the bound port.

    ``ssl_context`` (default: one made from the two files) is the one every handshake uses: loading a
    renewed certificate into it (``load_cert_chain``) serves the new certificate from the next one on."""
    runner = web.AppRunner(webhook_app(handler, webhooks), access_log=None)
    await runner.setup()
    context = ssl_context if ssl_context is not None else server_ssl_context(cert_file, key_file)
    bound = await start_site(runner, host, port, ssl_context=context)
    log.info("webhooks served at https://%s:%d (%d paths and %s)", host, bound, len(webhooks), CONVERT_PATH)
    return runner, bound
