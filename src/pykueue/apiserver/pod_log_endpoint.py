"""``GET /api/v1/namespaces/<ns>/pods/<name>/log``: the query as kube-apiserver reads it, and the stream.

Owned by ``apiserver/``; called by the resource handler for the ``log`` subresource. The API server
holds no logs: a node side (the embedded cluster's agents) registers a :data:`PodLogHandler`, which
gets the parsed :class:`PodLogOptions` and returns the log as an async iterator of byte chunks. It
raises (a 400 ``Status``: no such container, still waiting, no previous instance) before the first
chunk, so a request either fails whole or streams.

The options are checked as kube-apiserver checks ``PodLogOptions``: integers and booleans must parse
(400), ``tailLines`` >= 0, ``limitBytes`` > 0, ``sinceSeconds`` > 0 and at most one of ``sinceTime``
and ``sinceSeconds`` (422 ``Invalid`` with the field, kind ``PodLogOptions``). ``limitBytes`` is
applied here, on what is sent (a follow ends when it is reached). While following, the handler's
iterator yields an empty chunk when it has nothing new, so a client that went away, or a server
that stops, ends the stream within one poll.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from pykueue.api.meta.errors import BadRequest, Invalid
from pykueue.api.meta.field_errors import forbidden, invalid

__all__ = ["PodLogHandler", "PodLogOptions", "parse_log_options", "serve_pod_log"]


@dataclass(frozen=True, slots=True)
class PodLogOptions:
    """``PodLogOptions`` as parsed from the query (``sinceSeconds`` already turned into ``since``)."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since: float | None = None
    """Seconds since the epoch: lines logged before it are left out."""


PodLogHandler = Callable[[str, str, PodLogOptions], Awaitable[AsyncIterator[bytes]]]
"""``handler(namespace, name, options)`` -> the log's chunks; raises an ``ApiError`` before the first."""

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False", ""})


def _bool(query: Mapping[str, str], name: str) -> bool:
    value = query.get(name, "")
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BadRequest(f'{name}: invalid value "{value}": must be a boolean')


def _int(query: Mapping[str, str], name: str) -> int | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        number = int(value, 10)
    except ValueError:
        raise BadRequest(f'{name}: invalid value "{value}": must be an integer') from None
    if not -(2**63) <= number < 2**63:
        raise BadRequest(f'{name}: invalid value "{value}": out of range for a 64-bit integer')
    return number


def parse_log_options(query: Mapping[str, str], name: str, now: float) -> PodLogOptions:
    """The request's options, checked as kube-apiserver checks them (see the module docstring)."""
    tail_lines, limit_bytes = _int(query, "tailLines"), _int(query, "limitBytes")
    since_seconds, since_text = _int(query, "sinceSeconds"), query.get("sinceTime") or None
    since_time: float | None = None
    if since_text is not None:
        try:
            since_time = datetime.fromisoformat(since_text).astimezone(UTC).timestamp()
        except ValueError:
            raise BadRequest(f'sinceTime: invalid value "{since_text}": must be an RFC 3339 time') from None
    errors = []
    if tail_lines is not None and tail_lines < 0:
        errors.append(invalid("tailLines", tail_lines, "must be greater than or equal to 0"))
    if limit_bytes is not None and limit_bytes < 1:
        errors.append(invalid("limitBytes", limit_bytes, "must be greater than 0"))
    if since_seconds is not None and since_time is not None:
        errors.append(forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif since_seconds is not None and since_seconds < 1:
        errors.append(invalid("sinceSeconds", since_seconds, "must be greater than 0"))
    if errors:
        raise Invalid("PodLogOptions", name, errors)
    since = now - since_seconds if since_seconds is not None else since_time
    return PodLogOptions(
        container=query.get("container") or "",
        follow=_bool(query, "follow"),
        previous=_bool(query, "previous"),
        timestamps=_bool(query, "timestamps"),
        tail_lines=tail_lines,
        limit_bytes=limit_bytes,
        since=since,
    )


async def serve_pod_log(
    request: web.Request, handler: PodLogHandler, namespace: str, name: str, options: PodLogOptions, stopping: Any
) -> web.StreamResponse:
    """Stream the log as ``text/plain`` until it ends, ``limitBytes`` is reached, the client goes
    away or the server stops (``stopping`` is an ``asyncio.Event``)."""
    chunks = await handler(namespace, name, options)
    response = web.StreamResponse(headers={"Content-Type": "text/plain"})
    left = options.limit_bytes
    try:
        await response.prepare(request)
        async for chunk in chunks:
            if stopping.is_set() or request.transport is None or request.transport.is_closing():
                break
            if not chunk:
                continue  # the follower's heartbeat: nothing new
            if left is not None:
                chunk = chunk[:left]
                left -= len(chunk)
            await response.write(chunk)
            if left == 0:
                break
        with contextlib.suppress(ConnectionError):
            await response.write_eof()
    except ConnectionError:
        pass  # the client went away: nothing to answer
    finally:
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
    return response
