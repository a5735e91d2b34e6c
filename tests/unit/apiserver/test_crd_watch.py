"""Watching CustomResourceDefinitions (kopf and ``kubectl get crd -w`` do): an event stream, never a List."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import aiohttp
import orjson

from pykueue.api.meta.clock import SystemClock
from pykueue.apiserver import serve
from pykueue.apiserver.certs import ensure_certificates
from pykueue.registry import Registry
from pykueue.store import Store

PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


async def test_crd_watch_streams_events_and_honours_timeout(tmp_path: Path) -> None:
    tls = ensure_certificates(tmp_path, "127.0.0.1")
    server = await serve(
        Registry(Store(None), clock=SystemClock()),
        "127.0.0.1",
        0,
        token="t",
        tls_cert=str(tls.cert),
        tls_key=str(tls.key),
        bookmark_interval=0.2,
    )
    context = ssl.create_default_context(cafile=str(tls.ca_cert))
    try:
        async with aiohttp.ClientSession(
            headers={"Authorization": "Bearer t"}, connector=aiohttp.TCPConnector(ssl=context)
        ) as session:
            async with session.get(server.url + PATH) as resp:
                listing = await resp.json()
            names = {c["metadata"]["name"] for c in listing["items"]}
            assert "clusterqueues.kueue.x-k8s.io" in names

            query = "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&timeoutSeconds=1"
            async with session.get(server.url + PATH + query) as resp:
                body = await asyncio.wait_for(resp.read(), 10)
            events = [orjson.loads(line) for line in body.splitlines() if line]
            added = [e for e in events if e["type"] == "ADDED"]
            assert {e["object"]["metadata"]["name"] for e in added} == names
            bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
            assert bookmarks[0]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
            assert events.index(bookmarks[0]) == len(added)

            resumed = f"?watch=1&resourceVersion={listing['metadata']['resourceVersion']}&timeoutSeconds=1"
            async with session.get(server.url + PATH + resumed) as resp:
                assert resp.status == 200
                assert await asyncio.wait_for(resp.read(), 10) == b""  # nothing changed since that version

            async with session.get(server.url + "/apis/apiextensions.k8s.io/v1") as resp:
                resources = (await resp.json())["resources"]
            assert "watch" in next(r for r in resources if r["name"] == "customresourcedefinitions")["verbs"]
    finally:
        await server.close()
