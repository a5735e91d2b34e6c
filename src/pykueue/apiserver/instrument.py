"""The API server's ``/metrics`` route, its request metrics and its access log.

Owns: the middleware that counts and times every request in kube-apiserver's
``apiserver_request_total`` / ``apiserver_request_duration_seconds`` (labels from
:func:`pykueue.metrics.request_labels`), the ``GET /metrics`` handler (Prometheus text format,
behind the bearer token like every non-probe path, so ``kubectl get --raw /metrics`` works), and
the access log format of ``pykueue up --access-log``.

Who calls it: :func:`pykueue.apiserver.app.create_app` when it is given a
:class:`~pykueue.metrics.MetricsEndpoint`; without one no middleware is installed and
``/metrics`` stays a 404.
Invariant: a request is counted once, after its answer is known (its status code); a request the
client abandons (a watch closed by the client) is not counted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from pykueue.metrics import CONTENT_TYPE, ApiServerMetrics, MetricsEndpoint, request_labels

__all__ = ["ACCESS_LOGGER", "ACCESS_LOG_FORMAT", "instrument_middleware", "metrics_handler"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ACCESS_LOGGER = "pykueue.apiserver.access"
ACCESS_LOG_FORMAT = '%a "%r" %s %b %Tf "%{User-Agent}i"'
"""Client address, request line, status, body bytes, seconds taken, user agent."""


def instrument_middleware(metrics: ApiServerMetrics) -> Middleware:
    perf = time.perf_counter

    @web.middleware
    async def instrument(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = perf()
        code = 500
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        except asyncio.CancelledError:
            code = 0  # the client went away: no answer to count
            raise
        finally:
            if code:
                labels = request_labels(
                    request.method, request.path, request.query, request.headers.get("Content-Type", "")
                )
                metrics.observe(labels, "dryRun" in request.query, code, perf() - started)

    return instrument


def metrics_handler(endpoint: MetricsEndpoint) -> Handler:
    async def metrics(request: web.Request) -> web.StreamResponse:
        return web.Response(body=await endpoint.render(), headers={"Content-Type": CONTENT_TYPE})

    return metrics
