"""``HttpClient``: the :class:`~pykueue.client.protocol.Client` over HTTP, for any API server.

Owned by ``client/``; used by ``pykueue controller`` against real clusters and by CI against the
embedded server. One aiohttp session (one connection pool) per client; bodies are JSON (orjson).
Invariant: every non-2xx answer becomes the :mod:`pykueue.api.meta.errors` exception its ``Status``
body names, so callers handle the same errors as with :class:`~pykueue.client.local.LocalClient`.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson

from pykueue.api.meta.errors import ApiError, BadRequest, Gone, from_status
from pykueue.client.connection import in_cluster_config, load_kubeconfig
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.kubeconfig import ConnectionConfig
from pykueue.client.protocol import PATCH_CONTENT_TYPES, Client, Items, Patch, WatchEvent
from pykueue.client.ratelimit import TokenBucket

__all__ = ["HttpClient", "error_from_response"]

log = logging.getLogger(__name__)

LIST_PAGE_SIZE = 500
"""Objects per list page (kubectl's chunk size): big lists never become one giant response."""

_STRICT = {"fieldValidation": "Strict"}
"""Writes ask for strict field validation, as LocalClient gets from the registry: a typo in a field
name is an error, not a silently dropped field (kube-apiserver's HTTP default is Warn)."""
_REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=60, sock_connect=10)
WATCH_READ_TIMEOUT_S = 90.0
"""A watch that receives nothing (not even a bookmark) for this long is dropped and resumed: a server
that still holds the connection but stopped sending. kube-apiserver sends a bookmark about every minute
to a client that allows them; pykueue's server every few seconds."""
_WATCH_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=WATCH_READ_TIMEOUT_S)
KEEPALIVE_IDLE_S, KEEPALIVE_INTERVAL_S, KEEPALIVE_PROBES = 10, 5, 4
"""TCP keepalive of every connection: a peer that vanished (a half-open connection: the server's
machine or network gone, no FIN) fails the connection after 10 + 5 x 4 = 30 s of silence, idle watches
included; TCP_USER_TIMEOUT does the same for data left unacknowledged that long."""


def keepalive_socket(addr_info: Any) -> socket.socket:
    """aiohttp's ``socket_factory``: a TCP socket with the keepalive settings above."""
    family, type_, proto, _, _ = addr_info
    sock = socket.socket(family=family, type=type_, proto=proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for option, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_IDLE_S),
        ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL_S),
        ("TCP_KEEPCNT", KEEPALIVE_PROBES),
        ("TCP_USER_TIMEOUT", 1000 * (KEEPALIVE_IDLE_S + KEEPALIVE_INTERVAL_S * KEEPALIVE_PROBES)),
    ):
        if hasattr(socket, option):  # Linux has them all; elsewhere the OS defaults stay
            sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)
    return sock


def with_type_meta(
    items: list[dict[str, Any]], list_obj: dict[str, Any], res: GroupVersionResource
) -> list[dict[str, Any]]:
    """Give list items their ``apiVersion``/``kind`` (Kubernetes omits them inside lists)."""
    kind = str(list_obj.get("kind") or "")
    kind = kind[:-4] if kind.endswith("List") else kind
    for item in items:
        item.setdefault("apiVersion", res.api_version)
        if kind:
            item.setdefault("kind", kind)
    return items


class HttpClient:
    """Talks to ``server`` with a bearer token; ``ca``/``insecure`` control TLS verification."""

    def __init__(
        self,
        server: str | ConnectionConfig,
        *,
        token: str = "",
        ca: bytes | None = None,
        insecure: bool = False,
        field_manager: str = "pykueue",
        user_agent: str = "pykueue",
        qps: float = 0.0,
        burst: int = 0,
    ) -> None:
        if isinstance(server, ConnectionConfig):
            self.config = server
        else:
            self.config = ConnectionConfig(server=server.rstrip("/"), token=token, ca_data=ca, insecure=insecure)
        self.field_manager = field_manager
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        if self.config.token:
            self._headers["Authorization"] = f"Bearer {self.config.token}"
        self._ssl = self.config.ssl_context()
        self._session: aiohttp.ClientSession | None = None
        self.request_timeout = _REQUEST_TIMEOUT
        self._limiter = TokenBucket(qps, max(burst, 1)) if qps > 0 else None
        """Client-side QPS/burst for requests (not for watches), as client-go's; None: unlimited."""

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike[str] | None = None, *, context: str = "", field_manager: str = "pykueue"
    ) -> HttpClient:
        return cls(load_kubeconfig(path, context=context), field_manager=field_manager)

    @classmethod
    def in_cluster(cls, *, field_manager: str = "pykueue") -> HttpClient:
        return cls(in_cluster_config(), field_manager=field_manager)

    @property
    def default_namespace(self) -> str:
        return self.config.namespace

    def session(self) -> aiohttp.ClientSession:
        """The client's aiohttp session (one connection pool), for requests outside the protocol."""
        return self._client_session()

    def _client_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # Every informer holds one connection for its watch: leave ample room for requests.
            connector = aiohttp.TCPConnector(limit=256, ssl=self._ssl, socket_factory=keepalive_socket)
            self._session = aiohttp.ClientSession(
                headers=self._headers, connector=connector, json_serialize=lambda o: orjson.dumps(o).decode()
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- plumbing -------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> dict[str, Any]:
        data = None if body is None else orjson.dumps(body)
        headers = {"Content-Type": content_type} if data is not None else None
        if self.config.auth is not None:
            headers = {**(headers or {}), "Authorization": self.config.auth()}
        if self._limiter is not None:
            await self._limiter.acquire()
        async with self._client_session().request(
            method, self.config.server + path, params=params, data=data, headers=headers, timeout=_REQUEST_TIMEOUT
        ) as resp:
            raw = await resp.read()
            if resp.status >= 400:
                raise _error(resp.status, raw)
            if not raw:
                return {}
            try:
                decoded = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise ApiError(f"{method} {path}: the server answered with non-JSON: {raw[:200]!r}") from exc
            if not isinstance(decoded, dict):
                raise ApiError(f"{method} {path}: expected a JSON object, got {type(decoded).__name__}")
            return decoded

    # -- the Client protocol --------------------------------------------------------------------

    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> dict[str, Any]:
        return await self._request("GET", res.path(namespace, name))

    async def list(
        self, res: GroupVersionResource, namespace: str = "", *, label_selector: str = "", field_selector: str = ""
    ) -> tuple[Items, str]:
        params = _selectors(label_selector, field_selector)
        params["limit"] = str(LIST_PAGE_SIZE)
        items: Items = []
        version = ""
        while True:
            body = await self._request("GET", res.path(namespace), params=params)
            items.extend(with_type_meta(list(body.get("items") or []), body, res))
            meta = body.get("metadata") or {}
            # Every page is consistent with the first one's resourceVersion (kube's list snapshot).
            version = version or str(meta.get("resourceVersion") or "")
            if not meta.get("continue"):
                return items, version
            params["continue"] = str(meta["continue"])

    async def create(self, res: GroupVersionResource, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        namespace = namespace or (obj.get("metadata") or {}).get("namespace") or ""
        return await self._request("POST", res.path(namespace), params=dict(_STRICT), body=obj)

    async def update(self, res: GroupVersionResource, obj: dict[str, Any], *, subresource: str = "") -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        if not meta.get("name"):
            raise BadRequest("update: the object has no metadata.name")
        path = res.path(meta.get("namespace") or "", meta["name"], subresource)
        return await self._request("PUT", path, params=dict(_STRICT), body=obj)

    async def patch(
        self,
        res: GroupVersionResource,
        name: str,
        patch: Patch,
        *,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool = False,
    ) -> dict[str, Any]:
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise BadRequest(f"unknown patch type {patch_type!r}: use one of {sorted(PATCH_CONTENT_TYPES)}")
        params: dict[str, str] = dict(_STRICT)
        if patch_type == "apply":
            params["fieldManager"] = field_manager or self.field_manager
            if force:
                params["force"] = "true"
        elif field_manager:
            params["fieldManager"] = field_manager
        return await self._request(
            "PATCH", res.path(namespace, name, subresource), params=params, body=patch, content_type=content_type
        )

    async def delete(
        self, res: GroupVersionResource, name: str, namespace: str = "", *, propagation: str = "Background"
    ) -> None:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        await self._request("DELETE", res.path(namespace, name), body=body)

    async def watch(
        self,
        res: GroupVersionResource,
        namespace: str = "",
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        allow_bookmarks: bool = False,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        params = _selectors(label_selector, field_selector)
        params["watch"] = "true"
        if resource_version:
            params["resourceVersion"] = resource_version
        if allow_bookmarks:
            params["allowWatchBookmarks"] = "true"
        if timeout_seconds is not None:
            params["timeoutSeconds"] = str(timeout_seconds)
        session = self._client_session()
        headers = {"Authorization": self.config.auth()} if self.config.auth is not None else None
        async with session.get(
            self.config.server + res.path(namespace), params=params, headers=headers, timeout=_WATCH_TIMEOUT
        ) as resp:
            if resp.status >= 400:
                raise _error(resp.status, await resp.read())
            buffer = b""
            async for chunk in resp.content.iter_any():
                # One split per chunk: slicing the rest off after each line copied a chunk of n lines
                # n times over (the server sends a tick's events as one chunk).
                lines = (buffer + chunk).split(b"\n")
                buffer = lines.pop()
                for line in lines:
                    event = _decode_event(line, res)
                    if event is not None and (allow_bookmarks or event[0] != "BOOKMARK"):
                        yield event
            if buffer.strip():
                event = _decode_event(buffer, res)
                if event is not None and (allow_bookmarks or event[0] != "BOOKMARK"):
                    yield event


def _selectors(label_selector: str, field_selector: str) -> dict[str, str]:
    params: dict[str, str] = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params


def _decode_event(line: bytes, res: GroupVersionResource) -> WatchEvent | None:
    """One watch line -> ``(type, object)``; an ERROR event raises the error its Status names."""
    if not line.strip():
        return None
    event = orjson.loads(line)
    kind = str(event.get("type") or "")
    obj = event.get("object") or {}
    if kind == "ERROR":
        code = int(obj.get("code") or 500)
        if code == 410:
            raise Gone(str(obj.get("message") or "too old resource version"), details=obj.get("details"))
        raise from_status(obj, code)
    if kind != "BOOKMARK":
        obj.setdefault("apiVersion", res.api_version)
    return kind, obj


def error_from_response(status: int, raw: bytes) -> ApiError:
    """The ``pykueue.api.meta.errors`` exception an error answer's ``Status`` body names."""
    return _error(status, raw)


def _error(status: int, raw: bytes) -> ApiError:
    try:
        body = orjson.loads(raw) if raw else {}
    except orjson.JSONDecodeError:
        body = {}
    if isinstance(body, dict) and body.get("kind") == "Status":
        return from_status(body, status)
    text = raw[:300].decode(errors="replace") if raw else f"HTTP {status}"
    return from_status({"code": status, "message": text}, status)


def _conforms(client: HttpClient) -> Client:
    """Never called: mypy proves here that HttpClient implements the Client protocol."""
    return client
