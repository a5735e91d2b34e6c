"""Fixtures for the client contract tests: a real registry, and each Client implementation over it.

``client`` is parametrized: ``local`` calls the registry in process; ``http`` goes through the real
embedded API server (``pykueue.apiserver.serve``) on a free loopback port; ``batching`` too, with
its writes sent through the server's batch endpoint. Nothing here skips: a broken import fails the suite.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest

from pykueue.api.meta.clock import SystemClock
from pykueue.apiserver import serve
from pykueue.client import BatchingClient, Client, HttpClient, LocalClient
from pykueue.registry.resource_registry import Registry
from pykueue.store import Store


def make_registry(*, compaction_window: int = 100_000) -> Registry:
    return Registry(Store(None, compaction_window=compaction_window), clock=SystemClock())


async def start_server(registry: Registry, **options: Any) -> tuple[Any, str, str]:
    token = secrets.token_urlsafe(16)
    server = await serve(registry, "127.0.0.1", 0, token=token, **options)
    return server, f"http://127.0.0.1:{server.port}", token


@contextlib.asynccontextmanager
async def open_client(kind: str, registry: Registry, **server_options: Any) -> AsyncIterator[Client]:
    """``kind`` "local", "http" (the real API server on a free port) or "batching" (the same, writes
    sent in batches)."""
    if kind == "local":
        yield LocalClient(registry)
        return
    server, url, token = await start_server(registry, **server_options)
    http = HttpClient(url, token=token)
    client: Client = BatchingClient(http) if kind == "batching" else http
    try:
        yield client
    finally:
        await client.close()
        await server.close()


@pytest.fixture
def registry() -> Registry:
    return make_registry()


@pytest.fixture(params=["local", "http", "batching"])
async def client(request: pytest.FixtureRequest, registry: Registry) -> AsyncIterator[Client]:
    async with open_client(request.param, registry) as client:
        yield client
