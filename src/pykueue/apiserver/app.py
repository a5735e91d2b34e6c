"""The aiohttp application and its runner: routes, authentication, errors, start/stop.

Owned by ``apiserver/``; ``pykueue up`` (cli/) calls :func:`serve`, tests call :func:`create_app`
or :func:`serve`. Routing: ``/version``, ``/healthz``, ``/readyz[/<check>]`` (:mod:`.readiness`),
``/livez`` (open), discovery
(``/api``, ``/apis``, ``/apis/<g>``, ``/api/v1``, ``/apis/<g>/<v>``), ``/openapi/v2``,
``/openapi/v3[/...]``, the read-only CRD listing, every kind's REST paths (:mod:`.resource_handlers`),
Kueue's visibility API once a backend is set (:mod:`.visibility`), the identity and access
reviews (``TokenReview``, ``SelfSubjectReview``, ``SubjectAccessReview``,
``SelfSubjectAccessReview``, ``SelfSubjectRulesReview`` creates: :mod:`.access_reviews`), pykueue's own write batches
for its controller process (:mod:`.batch`), and ``/metrics`` when given a metrics endpoint
(:mod:`.instrument`).

Invariants: every error leaves as a Kubernetes ``Status`` (never a stack trace); every request
except the health/version probes needs ``Authorization: Bearer <token>``, and there is no app
without a token (an empty one is refused at assembly, never taken to mean "no authentication");
the store is flushed once per loop tick and writes answer only after it (:mod:`.commit`).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from pykueue.api.meta.clock import format_time
from pykueue.api.meta.errors import ApiError, MethodNotAllowed, NotAcceptable, NotFound, Unauthorized
from pykueue.api.schema.structural import compile_rules
from pykueue.listening import start_site
from pykueue.metrics import ApiServerMetrics, MetricsEndpoint
from pykueue.registry import Registry
from pykueue.registry.suspend import RequestContext, UserInfo, set_request

from . import access_reviews, discovery, visibility
from .audit import ADMIN, USER_KEY, AuditLog, audit_middleware
from .batch import BATCH_PATH, BatchHandler
from .commit import GroupCommitter
from .http import (
    AGGREGATED_V2,
    accepts_aggregated,
    error_response,
    json_response,
)
from .instrument import ACCESS_LOG_FORMAT, ACCESS_LOGGER, instrument_middleware, metrics_handler
from .openapi import OpenAPI
from .readiness import ReadinessCheck, ReadinessChecks
from .resource_handlers import PodLogHandler, ResourceHandler, handle_resource
from .tls_options import TLSOptions
from .watch_limits import WatchTracker
from .watch_metrics import WatchLimitCollector
from .webhook_client import WebhookClient

__all__ = ["KUBERNETES_VERSION", "Server", "create_app", "serve", "warm_up"]

log = logging.getLogger(__name__)

KUBERNETES_VERSION = ("1", "32", "v1.32.0-pykueue")
_OPEN_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version"})
_OPEN_PREFIXES = ("/readyz/",)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_STATE: web.AppKey[_State] = web.AppKey("pykueue_state")


class _State:
    def __init__(self, registry: Registry, token: str, bookmark_interval: float, users: dict[str, UserInfo]) -> None:
        self.registry = registry
        self.token = token
        self.users = users
        """Further bearer tokens and who they authenticate (``--token-auth-file``)."""
        self.stopping = asyncio.Event()
        self.bookmark_interval = bookmark_interval
        self.committer: GroupCommitter | None = None
        self.remove_listener: Callable[[], None] | None = None
        self.resources = ResourceHandler(registry, self.durable, self.stopping, bookmark_interval)
        self._openapi: OpenAPI | None = None
        self.visibility: visibility.Backend | None = None
        self._openapi_generation = -1
        self.started = format_time(registry.clock.now())
        self.readiness = ReadinessChecks()
        self.readiness.add("shutdown", lambda: "the server is stopping" if self.stopping.is_set() else None)

    def authenticate(self, token: str) -> UserInfo | None:
        """Who ``token`` authenticates as (None: nobody): the kubeconfig's admin token, then the
        ``--token-auth-file`` users. Used for every request and for TokenReviews."""
        if hmac.compare_digest(token.encode(), self.token.encode()):
            return ADMIN
        return self.users.get(token) if self.users else None

    async def durable(self) -> None:
        if self.committer is not None:
            await self.committer.durable()

    @property
    def openapi(self) -> OpenAPI:
        if self._openapi is None or self._openapi_generation != self.registry.kinds_generation:
            self._openapi_generation = self.registry.kinds_generation
            object_meta: dict[str, Any] | None = None
            pods = self.registry.kind_by_resource("pods")
            if pods is not None:
                try:
                    object_meta = pods.schema[pods.storage_version]["properties"]["metadata"]
                except (KeyError, TypeError):
                    object_meta = None
            self._openapi = OpenAPI(
                self.registry.kinds(), object_meta, access_reviews.openapi_documents(object_meta or {"type": "object"})
            )
        return self._openapi


def _state(request: web.Request) -> _State:
    return request.app[_STATE]


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        return error_response(err)
    except web.HTTPException as exc:
        if exc.status == 404:
            return error_response(NotFound("the server could not find the requested resource"))
        if exc.status == 405:
            return error_response(MethodNotAllowed("the server does not allow this method on the requested resource"))
        raise
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception:
        log.exception("internal error serving %s %s", request.method, request.path)
        return error_response(ApiError("Internal error occurred: unexpected server error (see the pykueue log)"))


@web.middleware
async def _auth(request: web.Request, handler: Handler) -> web.StreamResponse:
    state = _state(request)
    if request.path not in _OPEN_PATHS and not request.path.startswith(_OPEN_PREFIXES):
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        given = given.strip()
        user = state.authenticate(given) if scheme.lower() == "bearer" else None
        if user is None:
            return error_response(Unauthorized("Unauthorized"))
        request[USER_KEY] = user
        set_request(RequestContext(user=user))
    return await handler(request)


# ---------------------------------------------------------------------- probes and discovery


async def _version(request: web.Request) -> web.StreamResponse:
    major, minor, git = KUBERNETES_VERSION
    return json_response(
        {
            "major": major,
            "minor": minor,
            "gitVersion": git,
            "gitCommit": "pykueue",
            "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "go1.23.0",
            "compiler": "gc",
            "platform": "linux/amd64",
        }
    )


async def _ok(request: web.Request) -> web.StreamResponse:
    return web.Response(text="ok", content_type="text/plain")


def _discovery_response(request: web.Request, *, legacy: bool, plain: dict[str, Any]) -> web.StreamResponse:
    state = _state(request)
    registry = state.registry
    if accepts_aggregated(request.headers.get("Accept", "")):
        body = discovery.aggregated(registry.kinds(), legacy=legacy)
        if not legacy:
            body = access_reviews.add_to_aggregated(body)
        if not legacy and state.visibility is not None:
            body = visibility.add_to_aggregated(body)
        response = json_response(body, content_type=AGGREGATED_V2)
        response.headers["Vary"] = "Accept"
        return response
    return json_response(plain)


async def _api(request: web.Request) -> web.StreamResponse:
    return _discovery_response(request, legacy=True, plain=discovery.api_versions())


async def _apis(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    plain = access_reviews.add_to_group_list(discovery.api_group_list(state.registry.kinds()))
    if state.visibility is not None:
        plain = visibility.add_to_group_list(plain)
    return _discovery_response(request, legacy=False, plain=plain)


async def _api_group(request: web.Request) -> web.StreamResponse:
    group = request.match_info["group"]
    if group in access_reviews.GROUPS:
        return json_response(access_reviews.api_group(group))
    versions = discovery.group_versions(_state(request).registry.kinds()).get(group)
    if not group or not versions:
        raise NotFound("the server could not find the requested resource")
    return json_response(discovery.api_group(group, versions))


def _resource_list(request: web.Request, group: str, version: str) -> web.StreamResponse:
    versions = discovery.group_versions(_state(request).registry.kinds()).get(group) or []
    if version not in versions:
        raise NotFound("the server could not find the requested resource")
    return json_response(discovery.resource_list(_state(request).registry.kinds(), group, version))


async def _core_v1(request: web.Request) -> web.StreamResponse:
    return _resource_list(request, "", "v1")


async def _group_version(request: web.Request) -> web.StreamResponse:
    group, version = request.match_info["group"], request.match_info["version"]
    if group in access_reviews.GROUPS:
        if version != access_reviews.VERSION:
            raise NotFound("the server could not find the requested resource")
        return json_response(access_reviews.resource_list(group))
    return _resource_list(request, group, version)


async def _visibility_group(request: web.Request) -> web.StreamResponse:
    if _state(request).visibility is None:
        raise NotFound("the server could not find the requested resource")
    return json_response(visibility.api_group())


async def _visibility_version(request: web.Request) -> web.StreamResponse:
    version = request.match_info["version"]
    if _state(request).visibility is None or version not in visibility.VERSIONS:
        raise NotFound("the server could not find the requested resource")
    return json_response(visibility.resource_list(version))


async def _visibility_resources(request: web.Request) -> web.StreamResponse:
    return await visibility.serve_request(
        _state(request).visibility, request, request.match_info["version"], _segments(request.match_info["tail"])
    )


# ---------------------------------------------------------------------- OpenAPI


async def _openapi_v2(request: web.Request) -> web.StreamResponse:
    accept = request.headers.get("Accept", "")
    if accept and "json" not in accept and "*/*" not in accept:
        raise NotAcceptable("only application/json is served for /openapi/v2")
    openapi = _state(request).openapi
    document = await asyncio.to_thread(lambda: openapi.v2_document)
    return web.Response(body=document, headers={"Content-Type": "application/json"})


# The documents are built on first use in a worker thread: building them all takes about a second,
# which must not stall watch streams and writes on the event loop.


async def _openapi_v3_root(request: web.Request) -> web.StreamResponse:
    return json_response(await asyncio.to_thread(_state(request).openapi.v3_root))


async def _openapi_v3(request: web.Request) -> web.StreamResponse:
    document = await asyncio.to_thread(_state(request).openapi.v3_document, request.match_info["tail"])
    if document is None:
        raise NotFound("the server could not find the requested resource")
    headers = {"Content-Type": "application/json"}
    if request.query.get("hash"):
        headers["Cache-Control"] = "public, immutable"
        headers["Expires"] = "Thu, 01 Jan 2099 00:00:00 GMT"
    return web.Response(body=document, headers=headers)


# ---------------------------------------------------------------------- resources


def _segments(tail: str) -> list[str]:
    return tail.strip("/").split("/") if tail.strip("/") else []


async def _core_resources(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    return await handle_resource(state.resources, request, "", "v1", _segments(request.match_info["tail"]))


async def _group_resources(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    group, version = request.match_info["group"], request.match_info["version"]
    segments = _segments(request.match_info["tail"])
    return await handle_resource(state.resources, request, group, version, segments)


# ---------------------------------------------------------------------- assembly


def create_app(
    registry: Registry,
    *,
    token: str,
    bookmark_interval: float = 5.0,
    metrics: MetricsEndpoint | None = None,
    users: dict[str, UserInfo] | None = None,
    audit_log: AuditLog | None = None,
) -> web.Application:
    """The API server as an aiohttp app (no socket): routes, auth, group commit; with ``metrics``
    also ``GET /metrics`` and kube-apiserver's request metrics on ``metrics.registry``; ``users``:
    further bearer tokens (``--token-auth-file``); ``audit_log``: one audit event per request.
    It calls the admission webhooks of the stored webhook configurations (:mod:`.webhook_client`).

    Fails closed: an empty token raises instead of serving without authentication.
    """
    if not token or not token.strip():
        raise ValueError("refusing to serve the API without a bearer token")
    middlewares: list[Middleware] = [_errors, _auth]
    if audit_log is not None:
        middlewares.insert(0, audit_middleware(audit_log))
    if metrics is not None:
        middlewares.insert(0, instrument_middleware(ApiServerMetrics(metrics.registry)))
    app = web.Application(middlewares=middlewares, client_max_size=8 * 1024 * 1024)
    state = _State(registry, token, bookmark_interval, dict(users or {}))
    app[_STATE] = state
    app.router.add_get("/version", _version)
    for probe in ("/healthz", "/livez"):
        app.router.add_get(probe, _ok)
    app.router.add_get("/readyz", state.readiness.handle)
    app.router.add_get("/readyz/{check}", state.readiness.handle)
    app.router.add_get("/api", _api)
    app.router.add_get("/api/", _api)
    app.router.add_get("/apis", _apis)
    app.router.add_get("/apis/", _apis)
    app.router.add_get("/api/v1", _core_v1)
    app.router.add_get("/api/v1/", _core_v1)
    app.router.add_get("/openapi/v2", _openapi_v2)
    app.router.add_get("/openapi/v3", _openapi_v3_root)
    app.router.add_get("/openapi/v3/{tail:.+}", _openapi_v3)
    app.router.add_route("*", "/api/v1/{tail:.+}", _core_resources)
    vis = f"/apis/{visibility.GROUP}"
    app.router.add_get(vis, _visibility_group)
    app.router.add_get(vis + "/{version}", _visibility_version)
    app.router.add_get(vis + "/{version}/", _visibility_version)
    app.router.add_route("*", vis + "/{version}/{tail:.+}", _visibility_resources)
    access_reviews.review_routes(app, state.authenticate, lambda: format_time(registry.clock.now()))
    app.router.add_get("/apis/{group}", _api_group)
    app.router.add_get("/apis/{group}/{version}", _group_version)
    app.router.add_get("/apis/{group}/{version}/", _group_version)
    app.router.add_route("*", "/apis/{group}/{version}/{tail:.+}", _group_resources)
    app.router.add_post(BATCH_PATH, BatchHandler(registry, state.durable).handle)
    if metrics is not None:
        app.router.add_get("/metrics", metrics_handler(metrics))
        metrics.registry.register(WatchLimitCollector(state.resources.watches))

    webhooks = WebhookClient(
        lambda resource, namespace, name: registry.store.get(resource, namespace, name),
        lambda resource, namespace: registry.store.list(resource, namespace).items,
    )

    async def on_startup(app: web.Application) -> None:
        state.committer = GroupCommitter(registry.store, asyncio.get_running_loop())
        state.remove_listener = registry.add_write_listener(state.committer.on_write)
        webhooks.bind(asyncio.get_running_loop())
        registry.set_webhook_caller(webhooks)

    async def on_shutdown(app: web.Application) -> None:
        state.stopping.set()

    async def on_cleanup(app: web.Application) -> None:
        registry.set_webhook_caller(None)
        await webhooks.close()
        if audit_log is not None:
            audit_log.close()
        if state.remove_listener is not None:
            state.remove_listener()
        if state.committer is not None:
            state.committer.close()

    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.on_cleanup.append(on_cleanup)
    return app


def set_pod_log_handler(app: web.Application, handler: PodLogHandler | None) -> None:
    app[_STATE].resources.pod_log = handler


def set_visibility_backend(app: web.Application, backend: visibility.Backend | None) -> None:
    app[_STATE].visibility = backend


def warm_up(registry: Registry) -> None:
    """Build every kind's schemas and compile their CEL rules (~0.5 s of CPU, once per process).

    Otherwise the first request for each kind builds them on the event loop and every request in
    flight waits about a second. :func:`serve` runs this in a worker thread before it listens.
    """
    for kind in registry.kinds():
        for version in kind.versions:
            try:
                compile_rules(kind.schema[version])
            except Exception:  # a broken schema is reported by the requests that use it
                log.exception("building the schema of %s/%s failed", kind.resource_key, version)


MAX_HEADER_BYTES = 1024 * 1024
"""The longest request line (URL with its query: label selectors) or header served: Go's net/http
default, which kube-apiserver keeps (aiohttp's own is 8 KiB)."""


class Server:
    """A running API server: ``.port``, ``.url``, ``set_pod_log_handler()``, ``await close()``."""

    def __init__(self, runner: web.AppRunner, app: web.Application, host: str, port: int, tls: bool) -> None:
        self._runner = runner
        self.app = app
        self.host = host
        self.port = port
        self.url = f"{'https' if tls else 'http'}://{host if ':' not in host else f'[{host}]'}:{port}"

    @property
    def watches(self) -> WatchTracker:
        """The open watches, their limits and how many were closed for falling behind or stalling."""
        return self.app[_STATE].resources.watches

    def set_pod_log_handler(self, handler: PodLogHandler | None) -> None:
        """Serve ``GET pods/<name>/log`` with ``handler(namespace, name, container)`` (404 until set)."""
        set_pod_log_handler(self.app, handler)

    def set_visibility_backend(self, backend: visibility.Backend | None) -> None:
        """Serve ``visibility.kueue.x-k8s.io`` from ``backend`` (404 and not in discovery until set)."""
        set_visibility_backend(self.app, backend)

    def add_readiness_check(self, name: str, check: ReadinessCheck) -> None:
        """``/readyz`` fails while ``check()`` returns a reason (see :mod:`.readiness`)."""
        self.app[_STATE].readiness.add(name, check)

    async def close(self) -> None:
        await self._runner.cleanup()


async def serve(
    registry: Registry,
    host: str,
    port: int,
    *,
    token: str,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    bookmark_interval: float = 5.0,
    tls_options: TLSOptions | None = None,
    metrics: MetricsEndpoint | None = None,
    access_log: bool = False,
    users: dict[str, UserInfo] | None = None,
    audit_log: AuditLog | None = None,
) -> Server:
    """Listen on ``host:port`` (0 = a free port), with TLS when a cert and key are given
    (restricted by ``tls_options``: the Configuration's ``tls`` section); ``access_log``: one line per
    request on the ``pykueue.apiserver.access`` logger."""
    app = create_app(
        registry, token=token, bookmark_interval=bookmark_interval, metrics=metrics, users=users, audit_log=audit_log
    )
    await asyncio.to_thread(warm_up, registry)
    runner = web.AppRunner(
        app,
        shutdown_timeout=2.0,
        access_log=logging.getLogger(ACCESS_LOGGER) if access_log else None,
        access_log_format=ACCESS_LOG_FORMAT,
        max_line_size=MAX_HEADER_BYTES,
        max_field_size=MAX_HEADER_BYTES,
    )
    await runner.setup()
    context: ssl.SSLContext | None = None
    if tls_cert and tls_key:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(tls_cert, tls_key)
        if tls_options is not None:
            tls_options.apply(context)
    bound = await start_site(runner, host, port, ssl_context=context)
    return Server(runner, app, host, bound, context is not None)
