"""Request bodies of the REST handlers, read by their ``Content-Type`` as kube-apiserver reads them.

Owned by ``apiserver/``; :mod:`.resources` calls these for creates, updates, patches and deletes.
Which decoder a body gets is decided here from its media type alone, never by trying one parser
after another: ``application/json`` (or no ``Content-Type``) -> strict JSON, ``application/yaml``
-> YAML, ``application/vnd.kubernetes.protobuf`` -> protobuf (built-in kinds), anything else a 415
naming the accepted types (the decoders and their limits are :mod:`pykueue.registry.bodies`). The
size cap (3 MiB -> 413) is :func:`.http.read_body`'s.

A YAML body is the one costly to parse (~0.4 s per MiB): one larger than :data:`_THREAD_AT` is
decoded in a worker thread, so the event loop keeps answering (``/healthz``, watches) meanwhile; an
apply patch decoded that way goes on to the registry re-encoded as JSON, which it reads at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from pykueue.api.meta.json_types import JSONDict
from pykueue.registry.bodies import JSON, YAML, YAML_TYPES, decode_bytes, decode_object, media_type, unsupported

from .http import read_body
from .protobuf import PROTOBUF, decode_delete_options, decode_protobuf

__all__ = ["read_delete_options", "read_object", "read_patch"]

_OBJECT_TYPES = (JSON, YAML, PROTOBUF)
_THREAD_AT = 64 * 1024
"""YAML bodies larger than this (bytes) are decoded off the event loop."""


def _media(request: web.Request) -> str:
    return media_type(request.headers.get("Content-Type", ""))


async def read_object(request: web.Request) -> JSONDict:
    """A create/update body as an object (400 malformed, 413 too large, 415 unknown media type)."""
    media = _media(request)
    if media not in _OBJECT_TYPES:
        raise unsupported(_OBJECT_TYPES)
    data = await read_body(request)
    if media == PROTOBUF:
        return decode_protobuf(data)
    if media == YAML and len(data) > _THREAD_AT:
        return await asyncio.to_thread(decode_object, data, media)
    return decode_object(data, media)


async def read_delete_options(request: web.Request) -> JSONDict:
    """A delete's optional ``DeleteOptions`` body ({} when there is none)."""
    if not request.can_read_body:
        return {}
    data = await read_body(request, allow_empty=True)
    if not data.strip():
        return {}
    media = _media(request)
    if media == PROTOBUF:
        return decode_delete_options(data)
    if media not in _OBJECT_TYPES:
        raise unsupported(_OBJECT_TYPES)
    return decode_object(data, media)


async def read_patch(request: web.Request) -> tuple[bytes, str]:
    """A patch body and its ``Content-Type``; the patch type itself is checked by the registry."""
    content_type = request.headers.get("Content-Type", "")
    data = await read_body(request)
    if media_type(content_type) in YAML_TYPES and len(data) > _THREAD_AT:
        value: Any = await asyncio.to_thread(decode_bytes, data, media_type(content_type))
        data = orjson.dumps(value)
    return data, content_type
