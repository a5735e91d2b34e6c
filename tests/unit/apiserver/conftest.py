"""Fixtures: a real API server on a free 127.0.0.1 port (real sockets, real HTTP), and a client."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest

from pykueue.api.meta.clock import ManualClock
from pykueue.apiserver import Server, serve
from pykueue.registry import Registry
from pykueue.store import Store

TOKEN = "test-token"


@dataclass
class Api:
    """A running server plus an authenticated session, with small request helpers."""

    server: Server
    registry: Registry
    store: Store
    clock: ManualClock
    session: aiohttp.ClientSession

    @property
    def url(self) -> str:
        return self.server.url

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any, aiohttp.ClientResponse]:
        payload = raw if raw is not None else (orjson.dumps(body) if body is not None else None)
        data = io.BytesIO(payload) if payload is not None and len(payload) > 1024 * 1024 else payload
        all_headers = {"Content-Type": content_type, **(headers or {})}
        async with self.session.request(method, self.url + path, data=data, headers=all_headers) as response:
            text = await response.read()
            parsed = orjson.loads(text) if text and response.content_type.startswith("application/json") else text
            return response.status, parsed, response


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    store = Store(auto_flush=False)
    clock = ManualClock(1_800_000_000.0)
    registry = Registry(store, clock=clock)
    server = await serve(registry, "127.0.0.1", 0, token=TOKEN, bookmark_interval=0.2)
    session = aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        yield Api(server, registry, store, clock, session)
    finally:
        await session.close()
        await server.close()
        store.close()


def cluster_queue(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
                }
            ],
            **spec,
        },
    }


CQ_PATH = "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
