"""BatchingClient and the server's batch endpoint: one request per tick, one answer per write.

The contract tests run every Client case through BatchingClient too; these pin down what only
batching has: writes made in one tick share a request, a failing write fails alone and in its
place, and the endpoint answers bad batches and missing credentials the Kubernetes way.
"""

from __future__ import annotations

import asyncio

import aiohttp
import orjson

from pykueue.api.meta.errors import AlreadyExists, NotFound
from pykueue.client import BatchingClient, GroupVersionResource, HttpClient

from .conftest import make_registry, start_server

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


def _cm(name: str, value: str = "v") -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"k": value},
    }


async def test_one_tick_of_writes_is_one_request_and_each_gets_its_own_answer() -> None:
    server, url, token = await start_server(make_registry())
    client = BatchingClient(HttpClient(url, token=token))
    try:
        await client.create(CONFIGMAPS, _cm("taken"))
        before = client.requests
        results = await asyncio.gather(
            *(client.create(CONFIGMAPS, _cm(f"cm-{i}", str(i))) for i in range(20)),
            client.create(CONFIGMAPS, _cm("taken")),
            client.patch(CONFIGMAPS, "cm-3", {"data": {"k": "patched"}}, namespace="default"),
            client.delete(CONFIGMAPS, "missing", "default"),
            return_exceptions=True,
        )
        assert client.requests - before == 1
        created = results[:20]
        assert [c["data"]["k"] for c in created] == [str(i) for i in range(20)]  # type: ignore[index]
        assert isinstance(results[20], AlreadyExists)
        assert results[21]["data"] == {"k": "patched"}  # type: ignore[index]  # after its create, in order
        assert isinstance(results[22], NotFound)
        stored = await client.get(CONFIGMAPS, "cm-3", "default")
        assert stored["data"] == {"k": "patched"}
    finally:
        await client.close()
        await server.close()


async def test_the_endpoint_refuses_bad_batches_and_strangers() -> None:
    server, url, token = await start_server(make_registry())
    try:
        async with aiohttp.ClientSession() as session:
            auth = {"Authorization": f"Bearer {token}"}
            async with session.post(f"{url}/pykueue/batch", data=b'{"items": {}}', headers=auth) as resp:
                assert resp.status == 400
                status = orjson.loads(await resp.read())
                assert status["kind"] == "Status"
                assert "'items'" in status["message"]
            item = {"op": "explode", "group": "", "version": "v1", "plural": "configmaps"}
            async with session.post(f"{url}/pykueue/batch", data=orjson.dumps({"items": [item]}), headers=auth) as resp:
                assert resp.status == 200  # a bad item is that item's answer, not the batch's
                answer = orjson.loads(await resp.read())
                assert answer["results"][0]["status"]["code"] == 400
                assert "unknown batch op 'explode'" in answer["results"][0]["status"]["message"]
            async with session.post(f"{url}/pykueue/batch", data=b'{"items": []}') as resp:
                assert resp.status == 401
    finally:
        await server.close()
