"""The official ``kubernetes`` Python client (sync and asyncio) against ``pykueue up`` (issue [1])."""

from __future__ import annotations

import asyncio
import copy
import io
import os
import ssl
import stat
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

from tests.e2e.harness import Pykueue

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


def _flavor(name: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": {}}


def _api(server: Pykueue) -> Any:  # the generated client types custom objects as ``object``
    api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
    return client.CustomObjectsApi(api_client)


def test_create_list_and_conflict(kueue_api: Pykueue) -> None:
    api = _api(kueue_api)
    created = api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("a"))
    api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("b"))
    names = [
        item["metadata"]["name"] for item in api.list_cluster_custom_object(GROUP, VERSION, "resourceflavors")["items"]
    ]
    assert names == ["a", "b"]

    fresh = api.get_cluster_custom_object(GROUP, VERSION, "resourceflavors", "a")
    fresh["metadata"]["labels"] = {"x": "1"}
    api.replace_cluster_custom_object(GROUP, VERSION, "resourceflavors", "a", fresh)

    stale = copy.deepcopy(created)  # carries the old resourceVersion
    stale["metadata"]["labels"] = {"x": "2"}
    with pytest.raises(ApiException) as info:
        api.replace_cluster_custom_object(GROUP, VERSION, "resourceflavors", "a", stale)
    assert info.value.status == 409

    with pytest.raises(ApiException) as dup:
        api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("a"))
    assert dup.value.status == 409


def test_core_api_namespaces(kueue_api: Pykueue) -> None:
    core = client.CoreV1Api(config.new_client_from_config(config_file=str(kueue_api.kubeconfig)))
    names = {ns.metadata.name for ns in core.list_namespace().items}
    assert {"default", "kube-system"} <= names
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a")))
    assert core.read_namespace("team-a").status.phase == "Active"


def test_watch_with_bookmarks_and_resume_after_restart(kueue_api: Pykueue) -> None:
    api = _api(kueue_api)
    listing = api.list_cluster_custom_object(GROUP, VERSION, "resourceflavors")
    rv = listing["metadata"]["resourceVersion"]
    api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("w1"))
    seen = []
    for event in watch.Watch().stream(
        api.list_cluster_custom_object,
        GROUP,
        VERSION,
        "resourceflavors",
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=5,
    ):
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if event["type"] == "ADDED":
            rv = event["object"]["metadata"]["resourceVersion"]
            break
    assert seen == [("ADDED", "w1")]

    kueue_api.stop()
    kueue_api.start()
    api = _api(kueue_api)
    api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("w2"))
    resumed = []
    for event in watch.Watch().stream(
        api.list_cluster_custom_object, GROUP, VERSION, "resourceflavors", resource_version=rv, timeout_seconds=5
    ):
        resumed.append((event["type"], event["object"]["metadata"]["name"]))
        break
    assert resumed == [("ADDED", "w2")]
    assert api.get_cluster_custom_object(GROUP, VERSION, "resourceflavors", "w1")["metadata"]["name"] == "w1"


def test_asyncio_client_create_list_watch(kueue_api: Pykueue) -> None:
    from kubernetes.aio import client as aclient
    from kubernetes.aio import config as aconfig
    from kubernetes.aio import watch as awatch

    async def go() -> list[tuple[str, str]]:
        api_client = await aconfig.new_client_from_config(config_file=str(kueue_api.kubeconfig))
        async with api_client:
            api: Any = aclient.CustomObjectsApi(api_client)
            await api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("async-a"))
            listing = await api.list_cluster_custom_object(GROUP, VERSION, "resourceflavors")
            assert [i["metadata"]["name"] for i in listing["items"]] == ["async-a"]
            rv = listing["metadata"]["resourceVersion"]
            await api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("async-b"))
            seen = []
            async with awatch.Watch() as watcher:
                stream = watcher.stream(
                    api.list_cluster_custom_object,
                    GROUP,
                    VERSION,
                    "resourceflavors",
                    resource_version=rv,
                    timeout_seconds=5,
                )
                async for event in stream:
                    seen.append((event["type"], event["object"]["metadata"]["name"]))
                    break
            return seen

    assert asyncio.run(go()) == [("ADDED", "async-b")]


def test_objects_survive_kill9(kueue_api: Pykueue) -> None:
    api = _api(kueue_api)
    created = [api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor(f"k{i}")) for i in range(20)]
    kueue_api.kill9()
    kueue_api.start()
    api = _api(kueue_api)
    for obj in created:
        got = api.get_cluster_custom_object(GROUP, VERSION, "resourceflavors", obj["metadata"]["name"])
        assert got["metadata"]["uid"] == obj["metadata"]["uid"]
        assert got["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    newer = api.create_cluster_custom_object(GROUP, VERSION, "resourceflavors", _flavor("after"))
    assert int(newer["metadata"]["resourceVersion"]) > max(int(o["metadata"]["resourceVersion"]) for o in created)


def _raw(
    server: Pykueue,
    method: str,
    path: str,
    *,
    token: str | None,
    body: bytes | None = None,
    content_type: str = "application/json",
) -> int:
    async def go() -> int:
        headers = {"Content-Type": content_type}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        tls = ssl.create_default_context(cafile=str(server.data_dir / "ca.crt"))
        data = io.BytesIO(body) if body is not None else None
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=tls)) as session,
            session.request(method, server.url + path, data=data, headers=headers) as resp,
        ):
            await resp.read()
            status = resp.status
        await asyncio.sleep(0.25)  # aiohttp: let the TLS transports finish closing (else they leak)
        return status

    return asyncio.run(go())


def test_security(kueue_api: Pykueue) -> None:
    path = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"
    assert _raw(kueue_api, "GET", path, token=None) == 401
    assert _raw(kueue_api, "GET", path, token="wrong") == 401
    assert _raw(kueue_api, "GET", path, token=kueue_api.token) == 200
    big = (
        b'{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"big"},'
        b'"spec":{"nodeLabels":{"a":"' + b"x" * (4 * 1024 * 1024) + b'"}}}'
    )
    assert _raw(kueue_api, "POST", path, token=kueue_api.token, body=big) == 413
    assert _raw(kueue_api, "POST", path, token=kueue_api.token, body=b"{not json") == 400
    assert stat.S_IMODE(os.stat(kueue_api.kubeconfig).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(kueue_api.data_dir).st_mode) == 0o700


def test_kubeconfig_has_pykueue_context(kueue_api: Pykueue) -> None:
    text = Path(kueue_api.kubeconfig).read_text()
    assert "current-context: pykueue" in text
