"""The watch limits show in ``/metrics``: watchers closed for falling behind (kube-apiserver's
``apiserver_terminated_watchers_total``), stalled connections aborted and watches refused with 429."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from pykueue.api.meta.clock import ManualClock
from pykueue.apiserver import serve
from pykueue.apiserver.watch_limits import WatchLimits, WatchTracker
from pykueue.apiserver.watch_metrics import WatchLimitCollector
from pykueue.metrics import MetricsEndpoint
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import TOKEN, Api

CM_PATH = "/api/v1/namespaces/default/configmaps"


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture
async def metered() -> AsyncIterator[Api]:
    store = Store(auto_flush=False)
    clock = ManualClock(1_800_000_000.0)
    registry = Registry(store, clock=clock)
    endpoint = MetricsEndpoint(CollectorRegistry())
    server = await serve(registry, "127.0.0.1", 0, token=TOKEN, metrics=endpoint)
    session = aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        yield Api(server, registry, store, clock, session)
    finally:
        await session.close()
        await server.close()
        await endpoint.close()
        store.close()


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


async def _scrape(api: Api) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    status, text, _ = await api.request("GET", "/metrics")
    assert status == 200
    return _samples(text.decode())


async def test_closed_slow_watchers_and_refused_watches_are_counted_in_metrics(metered: Api) -> None:
    api = metered
    before = await _scrape(api)
    assert before[("pykueue_watch_refused_total", frozenset())] == 0
    assert not [key for key in before if key[0] == "apiserver_terminated_watchers_total"]

    # A watcher that falls behind is closed, and counted per group and resource as kube-apiserver does.
    api.server.watches.limits = WatchLimits(max_pending=5)
    _, listed, _ = await api.request("GET", CM_PATH)
    path = f"{CM_PATH}?watch=true&resourceVersion={listed['metadata']['resourceVersion']}"
    cm = api.registry.kind_for("", "v1", "configmaps")
    async with api.session.get(api.url + path) as response:
        assert response.status == 200
        for i in range(10):
            api.registry.create(cm, "default", configmap(f"burst-{i}"), version="v1")
        await asyncio.wait_for(response.read(), 10)

    # A client over the watch cap gets 429, and the refusal is counted.
    api.server.watches.limits = WatchLimits(max_per_client=1)
    first = await api.session.get(api.url + CM_PATH + "?watch=true")
    try:
        status, _, _ = await api.request("GET", CM_PATH + "?watch=true")
        assert status == 429
    finally:
        first.close()

    after = await _scrape(api)
    terminated = ("apiserver_terminated_watchers_total", frozenset({"group": "", "resource": "configmaps"}.items()))
    assert after[terminated] == 1
    assert after[("pykueue_watch_refused_total", frozenset())] == 1
    rejected = [
        value
        for (name, labels), value in after.items()
        if name == "apiserver_request_total" and ("code", "429") in labels
    ]
    assert rejected == [1]


def test_stalled_writes_are_exported_per_resource() -> None:
    tracker = WatchTracker()
    tracker.note_stalled("batch", "jobs")
    tracker.note_stalled("batch", "jobs")
    tracker.note_slow("kueue.x-k8s.io", "workloads")
    registry = CollectorRegistry()
    registry.register(WatchLimitCollector(tracker))
    assert registry.get_sample_value("pykueue_watch_stalled_writes_total", {"group": "batch", "resource": "jobs"}) == 2
    assert (
        registry.get_sample_value(
            "apiserver_terminated_watchers_total", {"group": "kueue.x-k8s.io", "resource": "workloads"}
        )
        == 1
    )
    assert (tracker.closed_stalled, tracker.closed_slow) == (2, 1)
