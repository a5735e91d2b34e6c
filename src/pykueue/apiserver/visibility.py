"""Kueue's pending-workloads visibility API, ``visibility.kueue.x-k8s.io`` v1beta2 and v1beta1.

Owned by ``apiserver/``. Serves, under the API server's own paths as Kueue's aggregated API
server does behind kube-apiserver::

    GET /apis/visibility.kueue.x-k8s.io/<v>/clusterqueues/<cq>/pendingworkloads[?limit=&offset=]
    GET /apis/visibility.kueue.x-k8s.io/<v>/namespaces/<ns>/localqueues/<lq>/pendingworkloads

each answering a ``PendingWorkloadsSummary``. The positions come from the scheduler engine's own
queues (:meth:`pykueue.scheduler.Scheduler.pending_workloads`), never from a second model: a
:class:`EngineBackend` reads the engine in the same process; with ``--controllers process`` the
engine lives in the controller process, which serves the same routes on a loopback port of its own
(:func:`backend_app`), and the API server forwards to it (:class:`RemoteBackend`) the way
kube-apiserver forwards to an APIService. Discovery lists the group only while a backend is set.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import aiohttp
from aiohttp import web

from pykueue.api.meta.errors import ApiError, BadRequest, MethodNotAllowed, NotFound, Unauthorized, from_status
from pykueue.api.meta.json_types import JSONDict
from pykueue.listening import start_site

from .discovery import storage_version_hash
from .http import error_response, json_response

if TYPE_CHECKING:
    from pykueue.scheduler import Scheduler
    from pykueue.scheduler.types import PendingInfo

__all__ = [
    "GROUP",
    "VERSIONS",
    "Backend",
    "EngineBackend",
    "PendingQuery",
    "RemoteBackend",
    "backend_app",
    "serve_backend",
    "serve_request",
    "summary",
]

GROUP = "visibility.kueue.x-k8s.io"
VERSIONS = ("v1beta2", "v1beta1")
DEFAULT_LIMIT = 1000
"""Kueue's default page size for pending workloads."""
UNAVAILABLE = "the server is currently unable to handle the request"


class ServiceUnavailable(ApiError):
    """The backend behind an aggregated group does not answer (kube-apiserver's 503)."""

    code = 503
    reason = "ServiceUnavailable"


@dataclass(frozen=True, slots=True)
class PendingQuery:
    """One request: the pending workloads of a ClusterQueue (``namespace`` empty) or of a LocalQueue."""

    version: str
    queue: str
    namespace: str = ""
    limit: int = DEFAULT_LIMIT
    offset: int = 0

    @property
    def path(self) -> str:
        base = f"/apis/{GROUP}/{self.version}"
        if self.namespace:
            return f"{base}/namespaces/{self.namespace}/localqueues/{self.queue}/pendingworkloads"
        return f"{base}/clusterqueues/{self.queue}/pendingworkloads"


class Backend(Protocol):
    async def pending(self, query: PendingQuery) -> JSONDict:
        """The ``PendingWorkloadsSummary``; raises ``ApiError`` (NotFound for an unknown queue)."""
        ...


def _item(p: PendingInfo) -> JSONDict:
    meta: JSONDict = {"name": p.name, "namespace": p.namespace, "creationTimestamp": p.creation_timestamp or None}
    if p.owner_references:
        meta["ownerReferences"] = [dict(ref) for ref in p.owner_references]
    return {
        "metadata": meta,
        "priority": p.priority,
        "localQueueName": p.local_queue,
        "positionInClusterQueue": p.position_in_cluster_queue,
        "positionInLocalQueue": p.position_in_local_queue,
    }


def summary(page: list[PendingInfo], query: PendingQuery) -> JSONDict:
    """A page of pending workloads (the engine already applied ``offset``/``limit`` and the
    LocalQueue) as a ``PendingWorkloadsSummary``."""
    return {
        "kind": "PendingWorkloadsSummary",
        "apiVersion": f"{GROUP}/{query.version}",
        "metadata": {"creationTimestamp": None},
        "items": [_item(p) for p in page],
    }


class EngineBackend:
    """Answers from a scheduler engine running on the same event loop (reads only)."""

    def __init__(self, engine: Scheduler) -> None:
        self._engine = engine

    async def pending(self, query: PendingQuery) -> JSONDict:
        return self.answer(query)

    def answer(self, query: PendingQuery) -> JSONDict:
        engine = self._engine
        if query.namespace:
            lq = engine.queues.local_queues.get((query.namespace, query.queue))
            if lq is None:
                raise NotFound.object("localqueues", query.queue, GROUP)
            page = engine.pending_workloads(lq.cq_name, query.offset, query.limit, lq.key)
        elif query.queue not in engine.cache.cqs:
            raise NotFound.object("clusterqueues", query.queue, GROUP)
        else:
            page = engine.pending_workloads(query.queue, query.offset, query.limit)
        return summary(page, query)


class RemoteBackend:
    """Forwards to the visibility server of the controller process (``--controllers process``).

    ``address`` is asked on every request: the controller process gets a new port when it is
    restarted. None (not running yet, or restarting) answers 503 like an unavailable APIService.
    """

    def __init__(self, address: Callable[[], tuple[str, str] | None], timeout: float = 30.0) -> None:
        self._address = address
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None

    async def pending(self, query: PendingQuery) -> JSONDict:
        found = self._address()
        if found is None:
            raise ServiceUnavailable(UNAVAILABLE)
        url, token = found
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        params = {"limit": str(query.limit), "offset": str(query.offset)}
        try:
            async with self._session.get(
                url + query.path, params=params, headers={"Authorization": f"Bearer {token}"}
            ) as response:
                body = await response.json(content_type=None)
                status = response.status
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise ServiceUnavailable(f"{UNAVAILABLE} ({type(exc).__name__})") from exc
        if status in (401, 403):  # our own credentials to the backend failed: not the caller's fault
            raise ServiceUnavailable(f"{UNAVAILABLE} (the visibility backend refused the server's token)")
        if status != 200:
            raise from_status(body if isinstance(body, dict) else {}, status)
        if not isinstance(body, dict):
            raise ServiceUnavailable(UNAVAILABLE)
        return body

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


# ---------------------------------------------------------------------- parsing a request


def _int_param(request: web.Request, name: str, default: int, minimum: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"invalid {name} {raw!r}: must be an integer") from None
    if value < minimum:
        raise BadRequest(f"invalid {name} {value}: must be at least {minimum}")
    return value


def parse_query(request: web.Request, version: str, segments: list[str]) -> PendingQuery:
    """``segments`` are the path after ``/apis/<group>/<version>/``; raises NotFound for any other path."""
    if version not in VERSIONS:
        raise NotFound("the server could not find the requested resource")
    limit = _int_param(request, "limit", DEFAULT_LIMIT, 1)
    offset = _int_param(request, "offset", 0, 0)
    if len(segments) == 3 and segments[0] == "clusterqueues" and segments[2] == "pendingworkloads":
        return PendingQuery(version, segments[1], "", limit, offset)
    if (
        len(segments) == 5
        and segments[0] == "namespaces"
        and segments[2] == "localqueues"
        and segments[4] == "pendingworkloads"
    ):
        return PendingQuery(version, segments[3], segments[1], limit, offset)
    raise NotFound("the server could not find the requested resource")


async def serve_request(
    backend: Backend | None, request: web.Request, version: str, segments: list[str]
) -> web.StreamResponse:
    if backend is None:
        raise NotFound("the server could not find the requested resource")
    if request.method != "GET":
        raise MethodNotAllowed("the server does not allow this method on the requested resource")
    return json_response(await backend.pending(parse_query(request, version, segments)))


# ---------------------------------------------------------------------- discovery


def _resources(version: str) -> list[JSONDict]:
    return [
        {
            "name": "clusterqueues",
            "singularName": "clusterqueue",
            "namespaced": False,
            "kind": "ClusterQueue",
            "verbs": ["get"],
            "storageVersionHash": storage_version_hash(GROUP, version, "ClusterQueue"),
        },
        {
            "name": "clusterqueues/pendingworkloads",
            "singularName": "",
            "namespaced": False,
            "kind": "PendingWorkloadsSummary",
            "verbs": ["get"],
        },
        {
            "name": "localqueues",
            "singularName": "localqueue",
            "namespaced": True,
            "kind": "LocalQueue",
            "verbs": ["get"],
            "storageVersionHash": storage_version_hash(GROUP, version, "LocalQueue"),
        },
        {
            "name": "localqueues/pendingworkloads",
            "singularName": "",
            "namespaced": True,
            "kind": "PendingWorkloadsSummary",
            "verbs": ["get"],
        },
    ]


def resource_list(version: str) -> JSONDict:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{GROUP}/{version}",
        "resources": _resources(version),
    }


def api_group() -> JSONDict:
    entries = [{"groupVersion": f"{GROUP}/{v}", "version": v} for v in VERSIONS]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": entries, "preferredVersion": entries[0]}


def add_to_group_list(body: JSONDict) -> JSONDict:
    """``/apis`` (APIGroupList): the group goes last, as an aggregated group ranks after CRD groups,
    so ``kubectl get clusterqueues`` keeps resolving to ``kueue.x-k8s.io``."""
    body["groups"] = [*body.get("groups", []), api_group()]
    return body


def add_to_aggregated(body: JSONDict) -> JSONDict:
    """``/apis`` (APIGroupDiscoveryList, kubectl's first request)."""
    versions = []
    for version in VERSIONS:
        resources = []
        for kind, plural, singular, scope in (
            ("ClusterQueue", "clusterqueues", "clusterqueue", "Cluster"),
            ("LocalQueue", "localqueues", "localqueue", "Namespaced"),
        ):
            resources.append(
                {
                    "resource": plural,
                    "singularResource": singular,
                    "scope": scope,
                    "verbs": ["get"],
                    "responseKind": {"group": GROUP, "version": version, "kind": kind},
                    "subresources": [
                        {
                            "subresource": "pendingworkloads",
                            "verbs": ["get"],
                            "responseKind": {"group": GROUP, "version": version, "kind": "PendingWorkloadsSummary"},
                        }
                    ],
                }
            )
        versions.append({"version": version, "resources": resources, "freshness": "Current"})
    body["items"] = [
        *body.get("items", []),
        {"metadata": {"name": GROUP, "creationTimestamp": None}, "versions": versions},
    ]
    return body


# ---------------------------------------------------------------------- the controller process's server


def backend_app(backend: Backend, token: str) -> web.Application:
    """The visibility routes alone, behind ``token``: what the controller process serves on loopback."""

    async def handle(request: web.Request) -> web.StreamResponse:
        given = request.headers.get("Authorization", "").partition(" ")[2].strip()
        try:
            if not hmac.compare_digest(given.encode(), token.encode()):
                raise Unauthorized("Unauthorized")
            segments = request.match_info["tail"].strip("/").split("/")
            return await serve_request(backend, request, request.match_info["version"], segments)
        except ApiError as err:
            return error_response(err)

    app = web.Application()
    app.router.add_route("*", f"/apis/{GROUP}/{{version}}/{{tail:.+}}", handle)
    return app


async def serve_backend(backend: Backend, token: str, host: str = "127.0.0.1") -> tuple[web.AppRunner, str]:
    """Listen on a free loopback port; returns the runner (``await runner.cleanup()``) and the URL."""
    runner = web.AppRunner(backend_app(backend, token), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    port = await start_site(runner, host, 0)
    return runner, f"http://{host}:{port}"
