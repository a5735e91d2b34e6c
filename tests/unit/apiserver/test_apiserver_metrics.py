"""The API server's ``/metrics``: kube-apiserver's request metrics, the token, and joined remote sources."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.parser import text_string_to_metric_families

from pykueue.api.meta.clock import ManualClock
from pykueue.apiserver import serve
from pykueue.metrics import MetricsEndpoint, RemoteSource, request_labels, serve_metrics
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import CQ_PATH, TOKEN, Api, cluster_queue


@pytest.mark.parametrize(
    ("method", "path", "query", "content_type", "expected"),
    [
        ("GET", "/api/v1/namespaces/default/pods", {}, "", ("LIST", "", "v1", "pods", "", "namespace")),
        ("GET", "/api/v1/pods", {}, "", ("LIST", "", "v1", "pods", "", "cluster")),
        ("GET", "/api/v1/pods", {"watch": "true"}, "", ("WATCH", "", "v1", "pods", "", "cluster")),
        ("GET", "/api/v1/namespaces/ns/pods/p/log", {}, "", ("GET", "", "v1", "pods", "log", "resource")),
        ("GET", "/api/v1/namespaces/default", {}, "", ("GET", "", "v1", "namespaces", "", "resource")),
        ("PUT", "/api/v1/namespaces/gone/finalize", {}, "", ("PUT", "", "v1", "namespaces", "finalize", "resource")),
        ("POST", "/apis/batch/v1/namespaces/ns/jobs", {}, "", ("POST", "batch", "v1", "jobs", "", "resource")),
        (
            "PATCH",
            "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status",
            {},
            "application/merge-patch+json",
            ("PATCH", "kueue.x-k8s.io", "v1beta2", "workloads", "status", "resource"),
        ),
        (
            "PATCH",
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq",
            {},
            "application/apply-patch+yaml",
            ("APPLY", "kueue.x-k8s.io", "v1beta2", "clusterqueues", "", "resource"),
        ),
        (
            "DELETE",
            "/apis/batch/v1/namespaces/ns/jobs",
            {},
            "",
            ("DELETECOLLECTION", "batch", "v1", "jobs", "", "namespace"),
        ),
        ("DELETE", "/apis/batch/v1/namespaces/ns/jobs/j", {}, "", ("DELETE", "batch", "v1", "jobs", "", "resource")),
        ("GET", "/apis/kueue.x-k8s.io/v1beta2", {}, "", ("GET", "", "", "", "", "")),
        ("GET", "/version", {}, "", ("GET", "", "", "", "", "")),
        ("POST", "/pykueue/batch", {}, "", ("POST", "", "", "", "", "")),
    ],
)
def test_request_labels_read_a_request_as_kube_apiserver_does(
    method: str, path: str, query: dict[str, str], content_type: str, expected: tuple[str, ...]
) -> None:
    assert request_labels(method, path, query, content_type) == expected


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


@pytest.fixture
async def metered() -> AsyncIterator[tuple[Api, MetricsEndpoint]]:
    store = Store(auto_flush=False)
    clock = ManualClock(1_800_000_000.0)
    registry = Registry(store, clock=clock)
    endpoint = MetricsEndpoint(CollectorRegistry())
    server = await serve(registry, "127.0.0.1", 0, token=TOKEN, metrics=endpoint)
    session = aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        yield Api(server, registry, store, clock, session), endpoint
    finally:
        await session.close()
        await server.close()
        await endpoint.close()
        store.close()


async def test_requests_are_counted_with_kube_apiserver_labels(metered: tuple[Api, MetricsEndpoint]) -> None:
    api, _ = metered
    status, _, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    assert status == 201
    status, _, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    assert status == 409
    status, _, _ = await api.request("GET", CQ_PATH + "/missing")
    assert status == 404
    status, _, _ = await api.request("POST", CQ_PATH + "?dryRun=All", cluster_queue("dry"))
    assert status == 201
    status, text, response = await api.request("GET", "/metrics")
    assert status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = _samples(text.decode())
    base = {
        "group": "kueue.x-k8s.io",
        "version": "v1beta2",
        "resource": "clusterqueues",
        "subresource": "",
        "component": "apiserver",
        "scope": "resource",
    }

    def total(**labels: str) -> float | None:
        return samples.get(("apiserver_request_total", frozenset({**base, **labels}.items())))

    assert total(verb="POST", dry_run="", code="201") == 1
    assert total(verb="POST", dry_run="", code="409") == 1
    assert total(verb="GET", dry_run="", code="404") == 1
    assert total(verb="POST", dry_run="All", code="201") == 1
    duration = samples.get(
        ("apiserver_request_duration_seconds_count", frozenset({**base, "verb": "POST", "dry_run": ""}.items()))
    )
    assert duration == 2
    # kube-apiserver's buckets, from 5 ms to 60 s
    assert (
        "apiserver_request_duration_seconds_bucket",
        frozenset({**base, "verb": "POST", "dry_run": "", "le": "0.005"}.items()),
    ) in samples
    assert (
        "apiserver_request_duration_seconds_bucket",
        frozenset({**base, "verb": "POST", "dry_run": "", "le": "60.0"}.items()),
    ) in samples


async def test_metrics_need_the_token(metered: tuple[Api, MetricsEndpoint]) -> None:
    api, _ = metered
    async with aiohttp.ClientSession() as anonymous, anonymous.get(api.url + "/metrics") as response:
        assert response.status == 401
        body = await response.json()
    assert body["kind"] == "Status"
    assert body["reason"] == "Unauthorized"


async def test_without_an_endpoint_there_is_no_metrics_route(api: Api) -> None:
    status, body, _ = await api.request("GET", "/metrics")
    assert status == 404
    assert body["reason"] == "NotFound"


async def test_a_remote_registry_is_joined_and_a_dead_one_left_out(metered: tuple[Api, MetricsEndpoint]) -> None:
    api, endpoint = metered
    await api.request("GET", "/version")  # one request of the server's own to count
    child = CollectorRegistry()
    Counter("kueue_admitted_workloads_total", "test", ("cluster_queue",), registry=child).labels("cq").inc(3)
    runner, port = await serve_metrics(child, "127.0.0.1", 0, token="child-token")
    url: str | None = f"http://127.0.0.1:{port}/metrics"
    endpoint.add_source(RemoteSource(lambda: url, "child-token"))
    try:
        async with aiohttp.ClientSession() as anonymous, anonymous.get(url or "") as response:
            assert response.status == 401  # the child's port wants the token too
        _, text, _ = await api.request("GET", "/metrics")
        samples = _samples(text.decode())
        assert samples[("kueue_admitted_workloads_total", frozenset({("cluster_queue", "cq")}))] == 3
        assert any(name == "apiserver_request_total" for name, _ in samples)
    finally:
        await runner.cleanup()
    status, text, _ = await api.request("GET", "/metrics")  # the child is gone: the rest is still served
    assert status == 200
    samples = _samples(text.decode())
    assert not any(name.startswith("kueue_") for name, _ in samples)
    assert any(name == "apiserver_request_total" for name, _ in samples)
    url = None  # no child running (between restarts): nothing is fetched
    status, _, _ = await api.request("GET", "/metrics")
    assert status == 200
