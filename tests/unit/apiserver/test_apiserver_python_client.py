"""The official ``kubernetes`` Python client against the server (run in a thread: it is synchronous)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes import client, watch

from .conftest import TOKEN, Api, cluster_queue


def _clients(api: Api) -> tuple[Any, Any, Any]:  # custom objects are typed ``object`` by the client
    configuration = client.Configuration()
    configuration.host = api.url
    configuration.api_key = {"authorization": TOKEN}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    api_client = client.ApiClient(configuration)
    return client.CoreV1Api(api_client), client.CustomObjectsApi(api_client), api_client


async def test_official_client_crud_conflict_and_watch(api: Api) -> None:
    core, custom, api_client = _clients(api)

    def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["namespaces"] = sorted(n.metadata.name for n in core.list_namespace().items)
        created = core.create_namespaced_config_map("default", {"metadata": {"name": "a"}, "data": {"k": "v"}})
        out["rv"] = created.metadata.resource_version
        try:
            core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
        except client.ApiException as err:
            out["duplicate"] = err.status
        cq = custom.create_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", cluster_queue("cq"))
        stale = {**cq, "spec": {**cq["spec"], "cohortName": "x"}}
        custom.replace_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", "cq", stale)
        try:
            custom.replace_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "clusterqueues", "cq", stale)
        except client.ApiException as err:
            out["stale"] = err.status
        events = []
        for event in watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=1):
            events.append((event["type"], event["object"].metadata.name))
        out["events"] = events
        core.delete_namespaced_config_map("a", "default")
        out["after_delete"] = [c.metadata.name for c in core.list_namespaced_config_map("default").items]
        return out

    try:
        result = await asyncio.to_thread(scenario)
    finally:
        api_client.close()
    assert result["namespaces"] == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert int(result["rv"]) > 0
    assert result["duplicate"] == 409
    assert result["stale"] == 409
    assert result["events"] == [("ADDED", "a")]
    assert result["after_delete"] == []


async def test_official_client_rejects_wrong_token(api: Api) -> None:
    configuration = client.Configuration()
    configuration.host = api.url
    configuration.api_key = {"authorization": "wrong"}
    configuration.api_key_prefix = {"authorization": "Bearer"}
    api_client = client.ApiClient(configuration)
    try:
        with pytest.raises(client.ApiException) as err:
            await asyncio.to_thread(client.CoreV1Api(api_client).list_namespace)
    finally:
        api_client.close()
    assert err.value.status == 401
