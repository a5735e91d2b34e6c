"""The visibility group on the API server: absent (404, not in discovery) until a backend is set;
served in process from an engine; forwarded to a separate visibility server (the controller
process's) behind its token, with 503 while that server is down."""

from __future__ import annotations

from pykueue.apiserver.visibility import EngineBackend, RemoteBackend, serve_backend
from pykueue.testing.builders.scheduler_shortcuts import CQ, T0, flavor, local_queue, make_scheduler, workload

from .conftest import Api

PATH = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _engine() -> EngineBackend:
    s = make_scheduler(
        flavor("f"),
        CQ("cq").flavor("f", cpu=0).obj(),
        local_queue("ns", "lq", "cq"),
        workload("low", priority=1, created=T0),
        workload("high", priority=9, created=T0 + 1),
    )
    return EngineBackend(s)


async def _groups(api: Api) -> list[str]:
    _, body, _ = await api.request("GET", "/apis")
    return [g["name"] for g in body["groups"]]


async def test_not_served_until_a_backend_is_set(api: Api) -> None:
    status, body, _ = await api.request("GET", PATH)
    assert (status, body["reason"]) == (404, "NotFound")
    assert "visibility.kueue.x-k8s.io" not in await _groups(api)
    status, _, _ = await api.request("GET", "/apis/visibility.kueue.x-k8s.io/v1beta2")
    assert status == 404


async def test_served_from_an_engine_and_listed_last_in_discovery(api: Api) -> None:
    api.server.set_visibility_backend(_engine())
    status, body, _ = await api.request("GET", PATH)
    assert status == 200
    assert [(i["metadata"]["name"], i["positionInClusterQueue"]) for i in body["items"]] == [("high", 0), ("low", 1)]
    groups = await _groups(api)
    assert groups[-1] == "visibility.kueue.x-k8s.io"
    assert groups.index("kueue.x-k8s.io") < groups.index("visibility.kueue.x-k8s.io")
    _, resources, _ = await api.request("GET", "/apis/visibility.kueue.x-k8s.io/v1beta1")
    assert [r["name"] for r in resources["resources"]] == [
        "clusterqueues",
        "clusterqueues/pendingworkloads",
        "localqueues",
        "localqueues/pendingworkloads",
    ]
    _, aggregated, _ = await api.request("GET", "/apis", headers={"Accept": AGGREGATED})
    assert aggregated["items"][-1]["metadata"]["name"] == "visibility.kueue.x-k8s.io"
    status, body, _ = await api.request("POST", PATH, {})
    assert (status, body["reason"]) == (405, "MethodNotAllowed")
    status, body, _ = await api.request("GET", PATH + "?offset=x")
    assert (status, body["message"]) == (400, "invalid offset 'x': must be an integer")
    status, _, _ = await api.request(
        "GET", "/apis/visibility.kueue.x-k8s.io/v1alpha1/clusterqueues/cq/pendingworkloads"
    )
    assert status == 404


async def test_forwarded_to_the_controller_process_server(api: Api) -> None:
    runner, url = await serve_backend(_engine(), "secret")
    address: list[tuple[str, str] | None] = [(url, "secret")]
    remote = RemoteBackend(lambda: address[0])
    api.server.set_visibility_backend(remote)
    try:
        status, body, _ = await api.request("GET", PATH + "?limit=1")
        assert status == 200
        assert [i["metadata"]["name"] for i in body["items"]] == ["high"]
        status, body, _ = await api.request(
            "GET", "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/ns/localqueues/nope/pendingworkloads"
        )
        assert (status, body["message"]) == (404, 'localqueues.visibility.kueue.x-k8s.io "nope" not found')
        address[0] = (url, "wrong")
        status, body, _ = await api.request("GET", PATH)
        assert (status, body["reason"]) == (503, "ServiceUnavailable")
        assert "refused the server's token" in body["message"]
        address[0] = None  # restarting
        status, body, _ = await api.request("GET", PATH)
        assert (status, body["reason"]) == (503, "ServiceUnavailable")
        await runner.cleanup()
        address[0] = (url, "secret")  # gone: nothing listens there any more
        status, body, _ = await api.request("GET", PATH)
        assert (status, body["reason"]) == (503, "ServiceUnavailable")
    finally:
        await remote.close()
        await runner.cleanup()
