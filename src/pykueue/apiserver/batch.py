"""``POST /pykueue/batch``: many writes in one request, for pykueue's own controller process.

Owned by ``apiserver/``; the only caller is :class:`pykueue.client.batching.BatchingClient`, which
``pykueue up --controllers process`` gives the controllers it runs in a child process. Kubernetes
has no batch API: a controller there pays one HTTP/2 stream per write, which Go multiplexes for
next to nothing. Here one aiohttp request costs ~0.1-0.2 ms of the server's one core before the
write starts (measured: a third of its time when the controllers wrote over plain HTTPS), so the
controller process sends a tick's writes together.

Invariants: each item takes exactly the path an in-process controller's write takes (a
:class:`~pykueue.client.local.LocalClient` over the same registry: decoding, defaulting,
validation, admission hooks, field managers), in order; one item's error is that item's answer,
never the batch's; the answer is sent after the writes are durable, like any write's.

Body: ``{"fieldManager": str, "items": [{"op": "create"|"update"|"patch"|"delete", "group",
"version", "plural", "namespace", "name", "subresource", "body", "patchType", "fieldManager",
"force", "propagation"}]}``; answer: ``{"results": [{"object": {...}} | {"status": <Status>}]}``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import orjson
from aiohttp import web

from pykueue.api.meta.errors import ApiError, BadRequest
from pykueue.api.meta.json_types import JSONDict
from pykueue.client.batching import BATCH_PATH
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.local import LocalClient
from pykueue.registry import Registry
from pykueue.registry.bodies import decode_json

from .http import raw_json_response, read_body

__all__ = ["BATCH_PATH", "MAX_ITEMS", "BatchHandler"]

MAX_ITEMS = 1000
"""More items than this in one request is a 400 (the client sends at most a few hundred)."""
BATCH_BODY_LIMIT = 8 * 1024 * 1024
"""A batch body larger than this is a 413 (strict JSON, nested at most ``bodies.MAX_DEPTH`` deep)."""


class BatchHandler:
    def __init__(self, registry: Registry, durable: Callable[[], Awaitable[None]]) -> None:
        self._registry = registry
        self._durable = durable
        self._clients: dict[str, LocalClient] = {}

    def _client(self, field_manager: str) -> LocalClient:
        client = self._clients.get(field_manager)
        if client is None:
            client = self._clients[field_manager] = LocalClient(self._registry, field_manager=field_manager)
        return client

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = decode_json(await read_body(request, limit=BATCH_BODY_LIMIT))
        items = body.get("items") if isinstance(body, dict) else None
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise BadRequest("a batch is an object with a list of write objects under 'items'")
        if len(items) > MAX_ITEMS:
            raise BadRequest(f"a batch holds at most {MAX_ITEMS} writes, got {len(items)}")
        client = self._client(str(body.get("fieldManager") or "pykueue"))
        results: list[JSONDict] = []
        for item in items:
            try:
                results.append({"object": await _write(client, item)})
            except ApiError as err:
                results.append({"status": err.to_status()})
        await self._durable()
        return raw_json_response(orjson.dumps({"results": results}))


async def _write(client: LocalClient, item: JSONDict) -> JSONDict:
    try:
        res = GroupVersionResource(str(item["group"]), str(item["version"]), str(item["plural"]))
        op = item["op"]
    except KeyError as err:
        raise BadRequest(f"a batch item needs {err.args[0]!r}") from None
    namespace = str(item.get("namespace") or "")
    subresource = str(item.get("subresource") or "")
    if op == "create":
        return await client.create(res, _object(item), namespace)
    if op == "update":
        return await client.update(res, _object(item), subresource=subresource)
    if op == "patch":
        patch = item.get("body")
        if not isinstance(patch, (dict, list)):
            raise BadRequest("a patch item's body must be an object or a list")
        return await client.patch(
            res,
            _name(item),
            patch,
            namespace=namespace,
            patch_type=str(item.get("patchType") or "merge"),
            subresource=subresource,
            field_manager=str(item.get("fieldManager") or ""),
            force=bool(item.get("force")),
        )
    if op == "delete":
        await client.delete(res, _name(item), namespace, propagation=str(item.get("propagation") or "Background"))
        return {}
    raise BadRequest(f"unknown batch op {op!r}: use create, update, patch or delete")


def _object(item: JSONDict) -> JSONDict:
    obj = item.get("body")
    if not isinstance(obj, dict):
        raise BadRequest("a create or update item's body must be an object")
    return obj


def _name(item: JSONDict) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise BadRequest("a patch or delete item needs a name")
    return name
