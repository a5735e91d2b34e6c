"""The cluster-mode metrics port: ``/metrics`` over HTTPS, behind the API server's authentication and RBAC.

Owned by ``metrics/``; ``pykueue controller`` serves it (:func:`serve_secure_metrics`) as Kueue's
controller-manager serves its metrics port through controller-runtime's secure serving: TLS always,
and every request to ``/metrics`` first authenticated and authorised with the API server
(:class:`~pykueue.metrics.delegated_auth.DelegatedAuth`):

- no ``Authorization: Bearer`` header, or a token the API server does not know: **401** ``Unauthorized``;
- a known user the API server does not allow the lowercased method on the path (a ``get`` of
  ``/metrics`` needs the ClusterRole ``pykueue-metrics-reader`` or any rule granting the non-resource
  URL): **403** ``Authorization denied for user <name>``;
- the API server does not answer the review: **503** (controller-runtime answers 500; nothing about
  the request was wrong, and the next scrape retries);
- otherwise the Prometheus text of the registry; a method other than GET/HEAD is 405 even when allowed.

``auth=None`` serves without authentication, which :func:`unauthenticated_bind_problem` allows only
on an explicit loopback address (Kueue's ``--metrics-authentication=false``); TLS stays on. Any
other path is a 404 without any review, as controller-runtime's mux answers it.
"""

from __future__ import annotations

import ipaddress
import logging
import ssl

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest

from pykueue.listening import start_site

from .delegated_auth import DelegatedAuth, ReviewUnavailable
from .exposition import CONTENT_TYPE

__all__ = ["METRICS_PATH", "secure_metrics_app", "serve_secure_metrics", "unauthenticated_bind_problem"]

log = logging.getLogger(__name__)

METRICS_PATH = "/metrics"


def _text(status: int, message: str) -> web.Response:
    return web.Response(status=status, text=message + "\n", content_type="text/plain")


def unauthenticated_bind_problem(host: str) -> str | None:
    """Why metrics may not be served without authentication on ``host`` (None: an explicit loopback IP)."""
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return None
    shown = host or "(every address)"
    return (
        f"--metrics-authentication=false requires metrics.bindAddress to be an explicit loopback IP and port "
        f"(for example 127.0.0.1:8443 or [::1]:8443), got host {shown}"
    )


def secure_metrics_app(registry: CollectorRegistry, auth: DelegatedAuth | None) -> web.Application:
    """``/metrics`` of ``registry``, each request reviewed by ``auth`` (None: not reviewed)."""

    async def metrics(request: web.Request) -> web.StreamResponse:
        if auth is not None:
            scheme, _, token = request.headers.get("Authorization", "").partition(" ")
            token = token.strip()
            try:
                identity = await auth.authenticate(token) if scheme.lower() == "bearer" and token else None
                if identity is None:
                    return _text(401, "Unauthorized")
                allowed, reason = await auth.authorize(identity, request.method.lower(), request.path)
            except ReviewUnavailable as exc:
                log.warning("metrics request not served: %s", exc)
                return _text(503, "the API server did not answer the authentication or authorization review")
            if not allowed:
                log.debug("metrics denied for %s: %s", identity.username, reason)
                return _text(403, f"Authorization denied for user {identity.username}")
        if request.method not in ("GET", "HEAD"):
            return _text(405, "Method Not Allowed")
        return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE})

    app = web.Application()
    app.router.add_route("*", METRICS_PATH, metrics)
    return app


async def serve_secure_metrics(
    registry: CollectorRegistry, host: str, port: int, *, ssl_context: ssl.SSLContext, auth: DelegatedAuth | None
) -> tuple[web.AppRunner, int]:
    """Serve :func:`secure_metrics_app` over TLS on ``host:port`` (0: a free port); the runner and the bound port."""
    runner = web.AppRunner(secure_metrics_app(registry, auth), access_log=None)
    await runner.setup()
    return runner, await start_site(runner, host, port, ssl_context=ssl_context)
