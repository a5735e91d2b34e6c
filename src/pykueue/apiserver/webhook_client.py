"""The HTTPS calls the API server makes to admission and conversion webhooks.

Owned by ``apiserver/``; handed to the registry (``Registry.set_webhook_caller``), which decides
whom to call and what the answer means (:mod:`pykueue.registry.webhook_dispatch`). A webhook's
``clientConfig`` is either a ``url`` (called as given) or a ``service`` ``{namespace, name, path,
port: 443}``. kube-apiserver reaches a service through the cluster network; this server resolves it
through the Service's port (``targetPort``) and its Endpoints or EndpointSlices to a *loopback*
address only, so webhook traffic never leaves the machine; a service without a loopback endpoint
fails the call. TLS is verified against ``caBundle`` (the system roots without one), with the
service's DNS name ``<name>.<namespace>.svc`` as the server name, as kube does. Failures are worded
as kube-apiserver words them (``failed to call webhook: Post "…?timeout=10s": context deadline
exceeded``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ipaddress
import ssl
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from pykueue.api.meta.errors import NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.registry.webhook_dispatch import CallFailed

__all__ = ["WebhookClient"]

Lookup = Callable[[str, str, str], JSONDict]
"""(resource key, namespace, name) -> the stored object, or ``NotFound``."""
Lister = Callable[[str, str], list[JSONDict]]
"""(resource key, namespace) -> the stored objects."""


def _loopback(address: Any) -> bool:
    try:
        return ipaddress.ip_address(str(address)).is_loopback
    except ValueError:
        return False


_UNKNOWN_AUTHORITY = frozenset({7, 18, 19, 20, 21})
"""OpenSSL's verify codes for a chain that does not end in a trusted CA (7: a CA of the same name
but another key), all of which Go reports as an unknown authority."""
_HOSTNAME_MISMATCH = 62


def _x509_reason(error: Exception) -> str:
    """OpenSSL's verification failure in the words of Go's crypto/x509, which kube-apiserver reports."""
    code = getattr(error, "verify_code", None)
    if code in _UNKNOWN_AUTHORITY:
        return "certificate signed by unknown authority"
    if code == _HOSTNAME_MISMATCH:
        return "certificate is not valid for the requested name"
    return str(getattr(error, "verify_message", "") or error)


class WebhookClient:
    """Calls webhooks over HTTPS; one connection pool per event loop it is used on."""

    def __init__(self, lookup: Lookup, lister: Lister) -> None:
        self._lookup = lookup
        self._lister = lister
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Keep a connection pool for calls made on ``loop`` (the server's)."""
        self._loop = loop

    def _pool(self) -> aiohttp.ClientSession | None:
        """The pooled session on the server's loop; None elsewhere (a write made outside the server's
        loop, by in-process controllers, calls from a private loop with a session of its own)."""
        if self._loop is None or asyncio.get_running_loop() is not self._loop:
            return None
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __call__(self, client_config: JSONDict, review: JSONDict, timeout_seconds: float) -> JSONDict:
        timeout = timeout_seconds
        url, connect_to, server_name = self._target(client_config)
        shown = f"{url}{'&' if '?' in url else '?'}timeout={int(timeout)}s"
        context = self._context(client_config.get("caBundle"))
        session = self._pool() or aiohttp.ClientSession()
        try:
            async with session.post(
                connect_to + f"{'&' if '?' in connect_to else '?'}timeout={int(timeout)}s",
                data=orjson.dumps(review),
                ssl=context,
                server_hostname=server_name,
                headers={
                    "Content-Type": "application/json",
                    "Accept": "application/json",
                    "User-Agent": "kube-apiserver-admission",
                },
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                body = await response.read()
                if response.status != 200:
                    text = body.decode(errors="replace").strip()[:200]
                    raise CallFailed(
                        f'failed to call webhook: an error on the server ("{text}") has prevented '
                        f"the request from succeeding (code {response.status})"
                    )
        except TimeoutError:
            raise CallFailed(f'failed to call webhook: Post "{shown}": context deadline exceeded') from None
        except aiohttp.ClientConnectorCertificateError as exc:
            raise CallFailed(
                f'failed to call webhook: Post "{shown}": tls: failed to verify certificate: '
                f"x509: {_x509_reason(exc.certificate_error)}"
            ) from None
        except aiohttp.ClientConnectorError as exc:
            reason = "connection refused" if isinstance(exc.os_error, ConnectionRefusedError) else str(exc.os_error)
            raise CallFailed(
                f'failed to call webhook: Post "{shown}": dial tcp {exc.host}:{exc.port}: connect: {reason}'
            ) from None
        except aiohttp.ClientError as exc:
            raise CallFailed(f'failed to call webhook: Post "{shown}": {exc}') from None
        finally:
            if session is not self._session:
                await session.close()
        try:
            answer = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise CallFailed("received invalid webhook response: the body is not JSON") from None
        if not isinstance(answer, dict):
            raise CallFailed("received invalid webhook response: the body is not an object")
        return answer

    def _context(self, ca_bundle: Any) -> ssl.SSLContext:
        key = ca_bundle if isinstance(ca_bundle, str) else ""
        context = self._contexts.get(key)
        if context is None:
            if key:
                try:
                    pem = base64.b64decode(key, validate=True).decode()
                    context = ssl.create_default_context(cadata=pem)
                except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError) as exc:
                    raise CallFailed(f"failed to call webhook: bad caBundle: {exc}") from None
            else:
                context = ssl.create_default_context()
            if len(self._contexts) > 256:
                self._contexts.clear()
            self._contexts[key] = context
        return context

    def _target(self, client_config: JSONDict) -> tuple[str, str, str | None]:
        """(the URL as kube shows it, the URL to connect to, the TLS server name to expect)."""
        url = client_config.get("url")
        if isinstance(url, str) and url:
            return url, url, None
        service = client_config.get("service")
        if not isinstance(service, dict) or not service.get("name") or not service.get("namespace"):
            raise CallFailed("failed to call webhook: clientConfig has neither url nor service")
        namespace, name = str(service["namespace"]), str(service["name"])
        given = service.get("port")
        port = given if isinstance(given, int) else 443
        path = str(service.get("path") or "")
        host = f"{name}.{namespace}.svc"
        shown = f"https://{host}:{port}{path}"
        address, target_port = self._resolve(namespace, name, port)
        literal = f"[{address}]" if ":" in address else address
        return shown, f"https://{literal}:{target_port}{path}", host

    def _resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        """A loopback address and port serving ``port`` of the Service, or ``CallFailed``."""
        try:
            svc = self._lookup("services", namespace, name)
        except NotFound:
            raise CallFailed(f'failed to call webhook: service "{name}" not found') from None
        ports = [p for p in (svc.get("spec") or {}).get("ports") or () if isinstance(p, dict)]
        entry = next((p for p in ports if p.get("port") == port), None)
        if entry is None:
            raise CallFailed(f'failed to call webhook: service "{namespace}/{name}" has no port {port}')
        port_name = entry.get("name") or ""
        target = entry.get("targetPort", port)
        for address, ports_by_name in self._endpoints(namespace, name):
            if not _loopback(address):
                continue
            resolved = ports_by_name.get(port_name)
            if resolved is None and isinstance(target, int):
                resolved = target
            if resolved is None and len(ports_by_name) == 1:
                resolved = next(iter(ports_by_name.values()))
            if resolved is not None:
                return str(address), resolved
        raise CallFailed(
            f'failed to call webhook: service "{namespace}/{name}" has no endpoint on a loopback '
            "address (this server sends webhook traffic only to this machine)"
        )

    def _endpoints(self, namespace: str, name: str) -> list[tuple[str, dict[str, int]]]:
        found: list[tuple[str, dict[str, int]]] = []
        for piece in self._lister("endpointslices.discovery.k8s.io", namespace):
            labels = (piece.get("metadata") or {}).get("labels") or {}
            if labels.get("kubernetes.io/service-name") != name:
                continue
            ports = {
                str(p.get("name") or ""): p["port"]
                for p in piece.get("ports") or ()
                if isinstance(p, dict) and isinstance(p.get("port"), int)
            }
            for endpoint in piece.get("endpoints") or ():
                if isinstance(endpoint, dict) and (endpoint.get("conditions") or {}).get("ready") is not False:
                    found.extend((a, ports) for a in endpoint.get("addresses") or ())
        try:
            endpoints = self._lookup("endpoints", namespace, name)
        except NotFound:
            return found
        for subset in endpoints.get("subsets") or ():
            if not isinstance(subset, dict):
                continue
            ports = {
                str(p.get("name") or ""): p["port"]
                for p in subset.get("ports") or ()
                if isinstance(p, dict) and isinstance(p.get("port"), int)
            }
            found.extend((str(a.get("ip")), ports) for a in subset.get("addresses") or () if isinstance(a, dict))
        return found
