"""``BatchingClient``: the HTTP :class:`~pykueue.client.protocol.Client`, with writes sent in batches.

Owned by ``client/``; used by the controller process of ``pykueue up --controllers process``,
against pykueue's own API server only (``POST /pykueue/batch``, :mod:`pykueue.apiserver.batch`;
a Kubernetes API server has no such endpoint). Reads and watches go to the wrapped
:class:`~pykueue.client.http.HttpClient` as they are. Every write made during one event-loop tick
(a scheduling cycle's admissions, the event recorder's flush, ...) leaves as one request, so the
server pays its per-request cost once per tick instead of once per write.

Invariants: each caller gets its own write's answer or error (the same ``pykueue.api.meta.errors``
classes as ``HttpClient``); writes of one batch are applied in the order they were made, so a task
that awaits each write sees them in order; a failed request fails every write it carried.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson

from pykueue.api.meta.errors import ApiError, from_status
from pykueue.api.meta.json_types import JSONDict
from pykueue.client.group_version_resource import GroupVersionResource
from pykueue.client.http import HttpClient, error_from_response
from pykueue.client.protocol import Client, Items, Patch, WatchEvent

__all__ = ["BatchingClient"]

BATCH_PATH = "/pykueue/batch"
MAX_BATCH = 250
"""Writes per request: a bigger tick is split (the requests then run side by side)."""

Queued = list[tuple[JSONDict, "asyncio.Future[JSONDict]"]]
"""Writes waiting for (or riding in) one request, each with its caller's future (aliased because
``BatchingClient.list`` shadows the builtin in class scope)."""


class BatchingClient:
    def __init__(self, http: HttpClient) -> None:
        self.http = http
        self.field_manager = http.field_manager
        self._queue: Queued = []
        self._sending: set[asyncio.Task[None]] = set()
        self.requests = 0
        """Batch requests sent (tests and benchmarks read it)."""

    @property
    def default_namespace(self) -> str:
        return self.http.default_namespace

    # -- reads go straight through -------------------------------------------------------------

    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> dict[str, Any]:
        return await self.http.get(res, name, namespace)

    async def list(
        self, res: GroupVersionResource, namespace: str = "", *, label_selector: str = "", field_selector: str = ""
    ) -> tuple[Items, str]:
        return await self.http.list(res, namespace, label_selector=label_selector, field_selector=field_selector)

    def watch(
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
        return self.http.watch(
            res,
            namespace,
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
            allow_bookmarks=allow_bookmarks,
            timeout_seconds=timeout_seconds,
        )

    async def close(self) -> None:
        if self._sending:
            await asyncio.wait(list(self._sending), timeout=5)
        await self.http.close()

    # -- writes are queued for the tick's batch ------------------------------------------------

    async def create(self, res: GroupVersionResource, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        namespace = namespace or (obj.get("metadata") or {}).get("namespace") or ""
        return await self._write({"op": "create", **_res(res), "namespace": namespace, "body": obj})

    async def update(self, res: GroupVersionResource, obj: dict[str, Any], *, subresource: str = "") -> dict[str, Any]:
        return await self._write({"op": "update", **_res(res), "subresource": subresource, "body": obj})

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
        return await self._write(
            {
                "op": "patch",
                **_res(res),
                "name": name,
                "namespace": namespace,
                "subresource": subresource,
                "body": patch,
                "patchType": patch_type,
                "fieldManager": field_manager,
                "force": force,
            }
        )

    async def delete(
        self, res: GroupVersionResource, name: str, namespace: str = "", *, propagation: str = "Background"
    ) -> None:
        await self._write(
            {"op": "delete", **_res(res), "name": name, "namespace": namespace, "propagation": propagation}
        )

    def _write(self, item: JSONDict) -> asyncio.Future[JSONDict]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[JSONDict] = loop.create_future()
        if not self._queue:
            loop.call_soon(self._flush)
        self._queue.append((item, future))
        return future

    def _flush(self) -> None:
        queued, self._queue = self._queue, []
        for start in range(0, len(queued), MAX_BATCH):
            task = asyncio.get_running_loop().create_task(
                self._send(queued[start : start + MAX_BATCH]), name="batching-client-send"
            )
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, batch: Queued) -> None:
        self.requests += 1
        try:
            results = await self._post([item for item, _ in batch])
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as err:
            failure = err if isinstance(err, ApiError) else ApiError(f"batch request failed: {err}")
            for _, future in batch:
                if not future.done():
                    future.set_exception(failure)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if future.done():
                continue
            status = result.get("status")
            if isinstance(status, dict):
                future.set_exception(from_status(status, int(status.get("code") or 500)))
            else:
                future.set_result(result.get("object") or {})

    async def _post(self, items: Items) -> Items:
        http = self.http
        async with http.session().post(
            http.config.server + BATCH_PATH,
            data=orjson.dumps({"fieldManager": self.field_manager, "items": items}),
            headers={"Content-Type": "application/json"},
            timeout=http.request_timeout,
        ) as resp:
            raw = await resp.read()
            if resp.status >= 400:
                raise error_from_response(resp.status, raw)
        answer: Any = orjson.loads(raw)
        results: Any = answer.get("results") if isinstance(answer, dict) else None
        if (
            not isinstance(results, list)
            or len(results) != len(items)
            or not all(isinstance(result, dict) for result in results)
        ):
            raise ApiError(
                f"the batch answer holds {len(results) if isinstance(results, list) else 'no'} "
                f"results for {len(items)} writes"
            )
        return results


def _res(res: GroupVersionResource) -> JSONDict:
    return {"group": res.group, "version": res.version, "plural": res.plural}


def _conforms(client: BatchingClient) -> Client:
    """Never called: mypy proves here that BatchingClient implements the Client protocol."""
    return client
