"""REST handlers for every served kind: ``/api/v1/...`` and ``/apis/<g>/<v>/...``.

Owned by ``apiserver/``. Parses the resource path (namespaced or cluster-scoped collection, object,
subresource, legacy ``/watch/`` prefix), maps the HTTP verb and query parameters onto the
:class:`~pykueue.registry.Registry`, and renders the result as JSON or as a ``meta.k8s.io`` Table.
No API semantics live here: every rule is the registry's.

Invariant: a write is answered only after it is durable (``GroupCommitter.durable()``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import web

from pykueue.api.meta.errors import BadRequest, MethodNotAllowed, NotFound
from pykueue.api.meta.kind_info import KindInfo
from pykueue.registry import Registry
from pykueue.registry.scale import get_scale, patch_scale, update_scale
from pykueue.registry.suspend import current_request, run_suspendable, set_request

from .http import (
    accepts_partial_metadata,
    accepts_table,
    field_validation,
    json_response,
    partial_metadata,
    raw_json_response,
    table_content_type,
)
from .pod_log_endpoint import PodLogHandler, parse_log_options, serve_pod_log
from .request_bodies import read_delete_options, read_object, read_patch
from .tables import table
from .watch import WatchOptions, WatchTracker, serve_watch

__all__ = ["PodLogHandler", "Target", "handle_resource", "resolve"]

_T = TypeVar("_T")
_PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
_PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


@dataclass(frozen=True, slots=True)
class Target:
    kind: KindInfo
    version: str
    namespace: str | None
    """None: every namespace (or a cluster-scoped kind)."""
    name: str
    subresource: str
    watch_path: bool


def resolve(registry: Registry, group: str, version: str, segments: list[str]) -> Target:
    """Map the path after ``/api/v1`` or ``/apis/<g>/<v>`` onto a kind, namespace, name, subresource."""
    watch_path = False
    if segments and segments[0] == "watch":
        watch_path = True
        segments = segments[1:]
    namespace: str | None = None
    if len(segments) >= 3 and segments[0] == "namespaces":
        candidate = registry.kind_by_plural(group, segments[2])
        if candidate is not None and candidate.namespaced:
            namespace = segments[1]
            segments = segments[2:]
    if not segments or len(segments) > 3 or not all(segments):
        raise NotFound("the server could not find the requested resource")
    kind = registry.kind_for(group, version, segments[0])
    name = segments[1] if len(segments) > 1 else ""
    subresource = segments[2] if len(segments) > 2 else ""
    if subresource and subresource not in kind.subresources:
        raise NotFound("the server could not find the requested resource")
    if namespace is not None and not kind.namespaced:
        raise NotFound("the server could not find the requested resource")
    if name and kind.namespaced and namespace is None:
        raise NotFound("the server could not find the requested resource")
    return Target(kind, version, namespace, name, subresource, watch_path)


def _flag(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1", "yes")


def _dry_run(query: Any) -> bool:
    values = query.getall("dryRun", [])
    for value in values:
        if value != "All":
            raise BadRequest(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return bool(values)


def _int(query: Any, key: str) -> int | None:
    raw = query.get(key)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"invalid value for {key}: {raw!r}") from None


def _field_manager(request: web.Request) -> str:
    given = request.query.get("fieldManager")
    if given:
        if len(given) > 128:
            raise BadRequest("fieldManager: Too long: must have at most 128 bytes")
        return given
    agent = request.headers.get("User-Agent", "")
    return agent.split("/", 1)[0] or "unknown"


class ResourceHandler:
    """Bound to one app: the registry, the group committer, the pod log hook, table clock."""

    def __init__(
        self, registry: Registry, durable: Callable[[], Awaitable[None]], stopping: Any, bookmark_interval: float
    ) -> None:
        self.registry = registry
        self.durable = durable
        self.stopping = stopping
        self.bookmark_interval = bookmark_interval
        self.watches = WatchTracker()
        self.pod_log: PodLogHandler | None = None

    def now(self) -> float:
        return self.registry.clock.now()

    async def handle(self, request: web.Request, target: Target) -> web.StreamResponse:
        method = request.method
        kind = target.kind
        context = current_request()
        context.version = target.version
        set_request(context)
        warnings: list[str] = context.warnings  # admission webhooks add theirs
        deprecation = kind.deprecated_versions.get(target.version)
        if deprecation:
            warnings.append(deprecation)
        if target.subresource == "scale":
            return await self._scale(request, target, warnings)
        if method == "GET":
            return await self._get(request, target, warnings)
        if method == "POST" and not target.name:
            return await self._create(request, target, warnings)
        if method == "PUT" and target.name:
            return await self._update(request, target, warnings)
        if method == "PATCH" and target.name:
            return await self._patch(request, target, warnings)
        if method == "DELETE":
            return await self._delete(request, target, warnings)
        raise MethodNotAllowed(f"the server does not allow this method on the requested resource ({method})")

    # ------------------------------------------------------------------ reads

    async def _get(self, request: web.Request, target: Target, warnings: list[str]) -> web.StreamResponse:
        # Reads wait for this tick's pending writes to be flushed: a client never sees a
        # resourceVersion that a crash could hand out again.
        await self.durable()
        query = request.query
        kind, version = target.kind, target.version
        if target.subresource == "log":
            return await self._log(request, target)
        table_version = accepts_table(request.headers.get("Accept", ""))
        include_object = query.get("includeObject") or "Metadata"
        if target.watch_path or _flag(query.get("watch")):
            field_selector = query.get("fieldSelector") or None
            if target.name:
                by_name = f"metadata.name={target.name}"
                field_selector = f"{field_selector},{by_name}" if field_selector else by_name
            timeout = _int(query, "timeoutSeconds")
            options = WatchOptions(
                kind=kind,
                version=version,
                namespace=target.namespace,
                label_selector=query.get("labelSelector") or None,
                field_selector=field_selector,
                resource_version=query.get("resourceVersion") or "",
                allow_bookmarks=_flag(query.get("allowWatchBookmarks")),
                send_initial_events=_flag(query.get("sendInitialEvents")),
                timeout_seconds=float(timeout) if timeout else None,
                table_version=table_version,
                include_object=include_object,
                bookmark_interval=self.bookmark_interval,
                partial_metadata=accepts_partial_metadata(request.headers.get("Accept", "")),
            )
            return await serve_watch(request, self.registry, options, self.stopping, self.now, self.watches)
        partial = accepts_partial_metadata(request.headers.get("Accept", ""))
        if target.name:
            obj = await self._run(
                target, lambda: self.registry.get(kind, target.namespace or "", target.name, version=version)
            )
            if partial and not table_version:
                return json_response(partial_metadata(obj), content_type=_PARTIAL, warnings=warnings)
            if table_version:
                body = table(
                    kind,
                    version,
                    [obj],
                    now=self.now(),
                    list_meta={"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                    include_object=include_object,
                    table_version=table_version,
                )
                return json_response(body, content_type=table_content_type(table_version), warnings=warnings)
            return json_response(obj, warnings=warnings)
        if not table_version and not partial:
            encoded = await self._run(
                target,
                lambda: self.registry.list_json(
                    kind,
                    target.namespace,
                    version=version,
                    label_selector=query.get("labelSelector") or None,
                    field_selector=query.get("fieldSelector") or None,
                    limit=_int(query, "limit"),
                    continue_token=query.get("continue") or None,
                ),
            )
            if encoded is not None:
                return raw_json_response(encoded, warnings=warnings)
        listed = await self._run(
            target,
            lambda: self.registry.list(
                kind,
                target.namespace,
                version=version,
                label_selector=query.get("labelSelector") or None,
                field_selector=query.get("fieldSelector") or None,
                limit=_int(query, "limit"),
                continue_token=query.get("continue") or None,
            ),
        )
        if table_version:
            body = table(
                kind,
                version,
                listed["items"],
                now=self.now(),
                list_meta=listed["metadata"],
                include_object=include_object,
                table_version=table_version,
            )
            return json_response(body, content_type=table_content_type(table_version), warnings=warnings)
        if partial:
            body = {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": listed["metadata"],
                "items": [partial_metadata(o) for o in listed["items"]],
            }
            return json_response(body, content_type=_PARTIAL_LIST, warnings=warnings)
        return json_response(listed, warnings=warnings)

    async def _log(self, request: web.Request, target: Target) -> web.StreamResponse:
        """``pods/<name>/log``: the registered node side streams it (:mod:`.pod_log_endpoint`)."""
        self.registry.get(target.kind, target.namespace or "", target.name, version=target.version)
        if self.pod_log is None:
            raise NotFound(f"the server could not find the requested resource ( pods/log {target.name})")
        options = parse_log_options(request.query, target.name, self.now())
        return await serve_pod_log(request, self.pod_log, target.namespace or "", target.name, options, self.stopping)

    async def _scale(self, request: web.Request, target: Target, warnings: list[str]) -> web.StreamResponse:
        """``<object>/scale``: an autoscaling/v1 Scale (see :mod:`pykueue.registry.scale`)."""
        kind, namespace, name, method = target.kind, target.namespace or "", target.name, request.method
        if method == "GET":
            await self.durable()
            return json_response(get_scale(self.registry, kind, namespace, name), warnings=warnings)
        if method == "PUT":
            body = await read_object(request)
            scale = await self._run(
                target,
                lambda: update_scale(
                    self.registry,
                    kind,
                    namespace,
                    name,
                    body,
                    dry_run=_dry_run(request.query),
                    field_manager=_field_manager(request),
                ),
            )
        elif method == "PATCH":
            data, content_type = await read_patch(request)
            scale = await self._run(
                target,
                lambda: patch_scale(
                    self.registry,
                    kind,
                    namespace,
                    name,
                    data,
                    content_type,
                    dry_run=_dry_run(request.query),
                    field_manager=_field_manager(request),
                ),
            )
        else:
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        await self.durable()
        return json_response(scale, warnings=warnings)

    # ------------------------------------------------------------------ writes

    async def _run(self, target: Target, call: Callable[[], _T]) -> _T:
        """Run a registry call; where it may meet a webhook (admission, or a CRD's conversion), in a
        greenlet that waits for the webhook's answer without blocking the event loop
        (:mod:`pykueue.registry.suspend`)."""
        if self.registry.may_call_webhooks and self.registry.may_wait(target.kind, target.version):
            return await run_suspendable(call)
        return call()

    async def _create(self, request: web.Request, target: Target, warnings: list[str]) -> web.StreamResponse:
        if target.subresource:
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        body = await read_object(request)
        query = request.query
        dry_run = _dry_run(query)
        obj, more = await self._run(
            target,
            lambda: self.registry.create(
                target.kind,
                target.namespace or "",
                body,
                version=target.version,
                dry_run=dry_run,
                field_validation=field_validation(query),
                field_manager=_field_manager(request),
                owned=True,
            ),
        )
        await self.durable()
        return json_response(obj, status=201, warnings=warnings + more)

    async def _update(self, request: web.Request, target: Target, warnings: list[str]) -> web.StreamResponse:
        body = await read_object(request)
        query = request.query
        obj, more = await self._run(
            target,
            lambda: self.registry.update(
                target.kind,
                target.namespace or "",
                target.name,
                body,
                version=target.version,
                subresource=target.subresource or None,
                dry_run=_dry_run(query),
                field_validation=field_validation(query),
                field_manager=_field_manager(request),
                owned=True,
            ),
        )
        await self.durable()
        return json_response(obj, warnings=warnings + more)

    async def _patch(self, request: web.Request, target: Target, warnings: list[str]) -> web.StreamResponse:
        data, content_type = await read_patch(request)
        query = request.query
        is_apply = content_type.split(";", 1)[0].strip().lower() == "application/apply-patch+yaml"
        manager = query.get("fieldManager") if is_apply else _field_manager(request)
        obj, more = await self._run(
            target,
            lambda: self.registry.patch(
                target.kind,
                target.namespace or "",
                target.name,
                data,
                content_type,
                version=target.version,
                subresource=target.subresource or None,
                dry_run=_dry_run(query),
                field_manager=manager,
                force=_flag(query.get("force")),
                field_validation=field_validation(query),
            ),
        )
        await self.durable()
        return json_response(obj, warnings=warnings + more)

    async def _delete(self, request: web.Request, target: Target, warnings: list[str]) -> web.StreamResponse:
        query = request.query
        options = await read_delete_options(request)
        propagation = query.get("propagationPolicy") or options.get("propagationPolicy")
        orphan = query.get("orphanDependents") or options.get("orphanDependents")
        if propagation is None and orphan is not None:
            propagation = "Orphan" if str(orphan).lower() == "true" else "Background"
        dry_run = _dry_run(query) or bool(options.get("dryRun"))
        if target.name:
            result = await self._run(
                target,
                lambda: self.registry.delete(
                    target.kind,
                    target.namespace or "",
                    target.name,
                    version=target.version,
                    propagation=propagation or "Background",
                    dry_run=dry_run,
                    preconditions=options.get("preconditions"),
                ),
            )
            await self.durable()
            deleting = bool((result.get("metadata") or {}).get("deletionTimestamp")) and bool(
                (result.get("metadata") or {}).get("finalizers")
            )
            return json_response(result, status=202 if deleting else 200, warnings=warnings)
        listed = await self._run(
            target,
            lambda: self.registry.delete_collection(
                target.kind,
                target.namespace,
                version=target.version,
                label_selector=query.get("labelSelector") or None,
                field_selector=query.get("fieldSelector") or None,
                propagation=propagation or "Background",
                dry_run=dry_run,
            ),
        )
        await self.durable()
        return json_response(listed, warnings=warnings)


async def handle_resource(
    handler: ResourceHandler, request: web.Request, group: str, version: str, segments: list[str]
) -> web.StreamResponse:
    target = resolve(handler.registry, group, version, segments)
    return await handler.handle(request, target)
