"""CRUD over real HTTP: status codes, Status bodies, patches, dry-run, field validation, tables, limits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import yaml

from pykueue.api.meta.clock import ManualClock
from pykueue.apiserver import serve
from pykueue.apiserver.pod_log_endpoint import PodLogOptions
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import CQ_PATH, TOKEN, Api, cluster_queue

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
CM_PATH = "/api/v1/namespaces/default/configmaps"


async def test_create_get_list_update_delete(api: Api) -> None:
    status, created, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    assert status == 201
    assert created["metadata"]["generation"] == 1
    status, got, _ = await api.request("GET", f"{CQ_PATH}/cq")
    assert status == 200
    assert got == created
    _, listed, _ = await api.request("GET", CQ_PATH)
    assert listed["kind"] == "ClusterQueueList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["cq"]
    assert listed["metadata"]["resourceVersion"]
    changed = {**got, "spec": {**got["spec"], "cohortName": "team"}}
    status, updated, _ = await api.request("PUT", f"{CQ_PATH}/cq", changed)
    assert status == 200
    assert updated["metadata"]["generation"] == 2
    status, conflict, _ = await api.request("PUT", f"{CQ_PATH}/cq", changed)
    assert status == 409
    assert conflict["reason"] == "Conflict"
    status, again, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    assert status == 409
    assert again["reason"] == "AlreadyExists"
    status, _, _ = await api.request("DELETE", f"{CQ_PATH}/cq")
    assert status == 200
    status, missing, _ = await api.request("GET", f"{CQ_PATH}/cq")
    assert status == 404
    assert missing["message"] == 'clusterqueues.kueue.x-k8s.io "cq" not found'
    assert missing["details"] == {"name": "cq", "kind": "clusterqueues", "group": "kueue.x-k8s.io"}


async def test_yaml_bodies_and_malformed_bodies(api: Api) -> None:
    manifest = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}, "data": {"a": "b"}})
    status, created, _ = await api.request("POST", CM_PATH, raw=manifest.encode(), content_type="application/yaml")
    assert status == 201
    assert created["metadata"]["namespace"] == "default"
    status, error, _ = await api.request("POST", CM_PATH, raw=b"kind: [unclosed\n", content_type="application/yaml")
    assert status == 400
    assert error["reason"] == "BadRequest"
    status, error, _ = await api.request("POST", CM_PATH, raw=b"- just\n- a list\n")
    assert status == 400


async def test_yaml_values_json_cannot_hold_are_converted_as_kubernetes_does(api: Api) -> None:
    """A YAML body becomes the JSON document sigs.k8s.io/yaml would make of it: keys are strings,
    timestamps stay as written, ``!!binary`` is its base64 text, an integer beyond 64 bits is a float
    (as in a JSON body) and so a type error for a string field, NaN a 400: never a 500."""
    manifest = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: odd}\n"
        b"data: {1: one, when: 2001-12-14 21:59:43.10 -5}\n"
        b"binaryData: {blob: !!binary aGVsbG8=}\n"
    )
    status, created, _ = await api.request("POST", CM_PATH, raw=manifest, content_type="application/yaml")
    assert status == 201, created
    assert created["data"] == {"1": "one", "when": "2001-12-14 21:59:43.10 -5"}
    assert created["binaryData"] == {"blob": "aGVsbG8="}
    big = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {n: 123456789012345678901234567890}\n"
    status, error, _ = await api.request("POST", CM_PATH, raw=big, content_type="application/yaml")
    assert status in (400, 422), error
    assert "data" in error["message"]
    status, error, _ = await api.request(
        "POST", CM_PATH, raw=big.replace(b"1234567890" * 3, b".nan"), content_type="application/yaml"
    )
    assert status == 400, error
    assert error["message"] == "error converting YAML to JSON: json: unsupported value: nan"
    for name in ("big", "odd"):
        status, _, _ = await api.request("GET", f"{CM_PATH}/{name}")
        assert status == (200 if name == "odd" else 404)


async def test_body_over_3_mib_is_413(api: Api) -> None:
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"x": "a" * (3 * 1024 * 1024)}}
    status, error, _ = await api.request("POST", CM_PATH, big)
    assert status == 413
    assert error["code"] == 413
    status, _, _ = await api.request("GET", f"{CM_PATH}/big")
    assert status == 404


async def test_invalid_object_is_422_with_causes(api: Api) -> None:
    status, error, _ = await api.request("POST", CM_PATH, {"metadata": {"name": "Not_Valid"}})
    assert status == 422
    assert error["reason"] == "Invalid"
    assert error["details"]["causes"][0]["field"] == "metadata.name"


async def test_unknown_namespace_and_unknown_resource(api: Api) -> None:
    status, error, _ = await api.request("POST", "/api/v1/namespaces/nope/configmaps", {"metadata": {"name": "a"}})
    assert status == 404
    assert error["message"] == 'namespaces "nope" not found'
    status, error, _ = await api.request("GET", "/apis/kueue.x-k8s.io/v1beta2/widgets")
    assert status == 404
    assert error["kind"] == "Status"


async def test_field_validation_strict_and_warn(api: Api) -> None:
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "rf"},
        "spec": {"foo": 1},
    }
    path = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"
    status, error, _ = await api.request("POST", path + "?fieldValidation=Strict", body)
    assert status == 400
    assert error["message"] == 'strict decoding error: unknown field "spec.foo"'
    status, created, response = await api.request("POST", path + "?fieldValidation=Warn", body)
    assert status == 201
    assert "foo" not in created["spec"]
    assert response.headers.getall("Warning") == ['299 - "unknown field \\"spec.foo\\""']
    status, _, response = await api.request("POST", path, {**body, "metadata": {"name": "default-warns"}})
    assert status == 201  # no fieldValidation parameter: kube-apiserver's default is Warn
    assert response.headers.getall("Warning") == ['299 - "unknown field \\"spec.foo\\""']


async def test_dry_run_stores_nothing(api: Api) -> None:
    status, created, _ = await api.request("POST", CQ_PATH + "?dryRun=All", cluster_queue("dry"))
    assert status == 201
    assert created["metadata"]["uid"]
    status, _, _ = await api.request("GET", f"{CQ_PATH}/dry")
    assert status == 404
    status, _error, _ = await api.request("POST", CQ_PATH + "?dryRun=Some", cluster_queue("dry"))
    assert status == 400


async def test_patch_content_types(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("cq"))
    status, patched, _ = await api.request(
        "PATCH", f"{CQ_PATH}/cq", {"spec": {"cohortName": "a"}}, content_type="application/merge-patch+json"
    )
    assert status == 200
    assert patched["spec"]["cohortName"] == "a"
    status, patched, _ = await api.request(
        "PATCH",
        f"{CQ_PATH}/cq",
        [{"op": "replace", "path": "/spec/cohortName", "value": "b"}],
        content_type="application/json-patch+json",
    )
    assert status == 200
    assert patched["spec"]["cohortName"] == "b"
    status, error, _ = await api.request(
        "PATCH", f"{CQ_PATH}/cq", {"spec": {}}, content_type="application/strategic-merge-patch+json"
    )
    assert status == 415
    assert error["reason"] == "UnsupportedMediaType"
    status, error, _ = await api.request(
        "PATCH", f"{CQ_PATH}/cq", raw=b"{", content_type="application/merge-patch+json"
    )
    assert status == 400
    await api.request("POST", CM_PATH, {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    status, patched, _ = await api.request(
        "PATCH", f"{CM_PATH}/cm", {"data": {"b": "2"}}, content_type="application/strategic-merge-patch+json"
    )
    assert status == 200
    assert patched["data"] == {"a": "1", "b": "2"}


async def test_server_side_apply(api: Api) -> None:
    path = f"{CQ_PATH}/applied"

    async def apply(manager: str, *, force: bool = False, **spec: str) -> tuple[int, Any]:
        query = f"?fieldManager={manager}" if manager else ""
        if force:
            query += "&force=true"
        manifest = yaml.safe_dump(cluster_queue("applied", **spec)).encode()
        status, body, _ = await api.request(
            "PATCH", path + query, raw=manifest, content_type="application/apply-patch+yaml"
        )
        return status, body

    status, _ = await apply("", cohortName="a")
    assert status == 400  # fieldManager is required
    status, created = await apply("me", cohortName="a")
    assert status == 200
    assert created["metadata"]["uid"]
    assert created["spec"]["cohortName"] == "a"
    assert [m["manager"] for m in created["metadata"]["managedFields"]] == ["me"]
    status, conflict = await apply("other", cohortName="b")
    assert status == 409
    assert conflict["reason"] == "Conflict"
    assert "cohortName" in conflict["message"]
    status, forced = await apply("other", force=True, cohortName="b")
    assert status == 200
    assert forced["spec"]["cohortName"] == "b"
    status, same = await apply("me", cohortName="b")
    assert status == 200
    assert same["metadata"]["generation"] == forced["metadata"]["generation"]


async def test_status_subresource_over_http(api: Api) -> None:
    _, created, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    status, written, _ = await api.request(
        "PUT", f"{CQ_PATH}/cq/status", {**created, "status": {"pendingWorkloads": 2}}
    )
    assert status == 200
    assert written["status"]["pendingWorkloads"] == 2
    status, got, _ = await api.request("GET", f"{CQ_PATH}/cq/status")
    assert got["status"]["pendingWorkloads"] == 2
    status, patched, _ = await api.request(
        "PATCH",
        f"{CQ_PATH}/cq/status",
        {"status": {"pendingWorkloads": 5}},
        content_type="application/merge-patch+json",
    )
    assert patched["status"]["pendingWorkloads"] == 5
    assert patched["metadata"]["generation"] == 1
    status, _, _ = await api.request("GET", f"{CQ_PATH}/cq/scale")
    assert status == 404


async def test_deprecated_version_warns(api: Api) -> None:
    status, _, response = await api.request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues")
    assert status == 200
    warning = response.headers.getall("Warning")[0]
    assert warning.startswith('299 - "')
    assert "deprecated" in warning


async def test_tables_for_crds_and_builtins(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("cq", cohortName="team"))
    api.clock.advance(125)
    status, table, response = await api.request("GET", CQ_PATH, headers={"Accept": TABLE})
    assert status == 200
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert response.headers["Content-Type"].startswith("application/json;as=Table")
    names = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert names[0] == ("Name", 0)
    assert names[-1] == ("Admitted Workloads", 1)  # no Age: the CRD declares its columns
    assert ("Strategy", 1) in names
    assert ("Cohort", 0) in names
    row = table["rows"][0]
    assert len(row["cells"]) == len(names)
    assert row["cells"][0] == "cq"
    assert row["cells"][1] == "team"
    assert row["cells"][-1] is None  # status.admittedWorkloads not written yet
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == "cq"
    _, full, _ = await api.request("GET", CQ_PATH + "?includeObject=Object", headers={"Accept": TABLE})
    assert full["rows"][0]["object"]["spec"]["cohortName"] == "team"
    _, single, _ = await api.request("GET", f"{CQ_PATH}/cq", headers={"Accept": TABLE})
    assert len(single["rows"]) == 1
    _, namespaces, _ = await api.request("GET", "/api/v1/namespaces", headers={"Accept": TABLE})
    assert [c["name"] for c in namespaces["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert namespaces["rows"][0]["cells"][:2] == ["default", "Active"]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    status, _, _ = await api.request("POST", "/apis/batch/v1/namespaces/default/jobs", job)
    assert status == 201
    _, jobs, _ = await api.request("GET", "/apis/batch/v1/namespaces/default/jobs", headers={"Accept": TABLE})
    assert [c["name"] for c in jobs["columnDefinitions"] if c["priority"] == 0] == [
        "Name",
        "Status",
        "Completions",
        "Duration",
        "Age",
    ]


async def test_crd_without_printer_columns_gets_name_and_age(api: Api) -> None:
    path = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors"
    await api.request(
        "POST", path, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "rf"}}
    )
    api.clock.advance(125)
    _, table, _ = await api.request("GET", path, headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["rf", "2m5s"]


async def test_delete_with_finalizer_is_202_then_gone(api: Api) -> None:
    await api.request("POST", CM_PATH, {"metadata": {"name": "held", "finalizers": ["example.com/x"]}})
    status, body, _ = await api.request("DELETE", f"{CM_PATH}/held")
    assert status == 202
    assert body["metadata"]["deletionTimestamp"]
    status, _, _ = await api.request(
        "PATCH", f"{CM_PATH}/held", {"metadata": {"finalizers": None}}, content_type="application/merge-patch+json"
    )
    assert status == 200
    status, _, _ = await api.request("GET", f"{CM_PATH}/held")
    assert status == 404


async def test_delete_options_body_and_collection(api: Api) -> None:
    _, _a, _ = await api.request("POST", CM_PATH, {"metadata": {"name": "a", "labels": {"x": "1"}}})
    await api.request("POST", CM_PATH, {"metadata": {"name": "b", "labels": {"x": "2"}}})
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "wrong"}}
    status, error, _ = await api.request("DELETE", f"{CM_PATH}/a", options)
    assert status == 409
    assert "Precondition failed" in error["message"]
    status, listed, _ = await api.request("DELETE", CM_PATH + "?labelSelector=x%3D1")
    assert status == 200
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    _, rest, _ = await api.request("GET", CM_PATH)
    assert [i["metadata"]["name"] for i in rest["items"]] == ["b"]


async def test_pod_log_hook_point(api: Api) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    await api.request("POST", "/api/v1/namespaces/default/pods", pod)
    status, _, _ = await api.request("GET", "/api/v1/namespaces/default/pods/p/log")
    assert status == 404
    seen: list[PodLogOptions] = []

    async def chunks(namespace: str, name: str) -> AsyncIterator[bytes]:
        yield f"{namespace}/{name}/".encode()
        yield b""  # a follower's heartbeat is not sent
        yield b"line2\n"

    async def logs(namespace: str, name: str, options: PodLogOptions) -> AsyncIterator[bytes]:
        seen.append(options)
        return chunks(namespace, name)

    api.server.set_pod_log_handler(logs)
    status, text, _response = await api.request("GET", "/api/v1/namespaces/default/pods/p/log?container=c")
    assert status == 200
    assert text == b"default/p/line2\n"
    assert seen[-1] == PodLogOptions(container="c")
    query = "tailLines=3&timestamps=true&previous=1&sinceSeconds=10&limitBytes=4"
    _, limited, _ = await api.request("GET", f"/api/v1/namespaces/default/pods/p/log?{query}")
    assert limited == b"defa"  # limitBytes is applied on what is sent
    assert seen[-1] == PodLogOptions(
        tail_lines=3, timestamps=True, previous=True, limit_bytes=4, since=api.clock.now() - 10
    )


@pytest.mark.parametrize(
    ("query", "code", "field", "message"),
    [
        ("tailLines=-1", 422, "tailLines", "Invalid value: -1: must be greater than or equal to 0"),
        ("limitBytes=0", 422, "limitBytes", "Invalid value: 0: must be greater than 0"),
        ("sinceSeconds=0", 422, "sinceSeconds", "Invalid value: 0: must be greater than 0"),
        (
            "sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z",
            422,
            "",
            "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified",
        ),
        ("tailLines=ten", 400, None, 'tailLines: invalid value "ten": must be an integer'),
        ("sinceTime=yesterday", 400, None, 'sinceTime: invalid value "yesterday": must be an RFC 3339 time'),
        ("follow=maybe", 400, None, 'follow: invalid value "maybe": must be a boolean'),
    ],
)
async def test_pod_log_options_are_checked_as_kube_apiserver_checks_them(
    api: Api, query: str, code: int, field: str | None, message: str
) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    await api.request("POST", "/api/v1/namespaces/default/pods", pod)

    async def logs(namespace: str, name: str, options: PodLogOptions) -> AsyncIterator[bytes]:
        raise AssertionError("a bad request never reaches the node side")

    api.server.set_pod_log_handler(logs)
    status, body, _ = await api.request("GET", f"/api/v1/namespaces/default/pods/p/log?{query}")
    assert (status, body["kind"], body["code"]) == (code, "Status", code)
    if field is None:
        assert (body["reason"], body["message"]) == ("BadRequest", message)
    else:
        assert body["reason"] == "Invalid"
        assert body["details"]["kind"] == "PodLogOptions"
        assert body["details"]["causes"][0]["field"] == field
        assert message in body["message"]


async def test_writes_are_durable_when_answered(tmp_path: Path) -> None:
    """Group commit: the 201 is sent only after the batch is flushed to SQLite."""
    db = str(tmp_path / "state.db")
    store = Store(db, auto_flush=False)
    registry = Registry(store, clock=ManualClock())
    server = await serve(registry, "127.0.0.1", 0, token=TOKEN)
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            bodies = [orjson.dumps({"metadata": {"name": f"cm{i}"}}) for i in range(20)]

            async def post(body: bytes) -> int:
                async with client.post(
                    server.url + CM_PATH, data=body, headers={"Content-Type": "application/json"}
                ) as response:
                    return response.status

            assert await asyncio.gather(*(post(b) for b in bodies)) == [201] * 20
            reader = Store(db)
            try:
                names = [o["metadata"]["name"] for o in reader.list("configmaps", "default").items]
                assert len(names) == 20
            finally:
                reader.close()
    finally:
        await server.close()
        store.close()


async def test_partial_object_metadata(api: Api) -> None:
    await api.request("POST", CM_PATH, {"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}})
    accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    status, listed, response = await api.request("GET", CM_PATH, headers={"Accept": accept})
    assert status == 200
    assert listed["kind"] == "PartialObjectMetadataList"
    assert response.headers["Content-Type"].startswith("application/json;as=PartialObjectMetadataList")
    item = listed["items"][0]
    assert item["kind"] == "PartialObjectMetadata"
    assert item["metadata"]["labels"] == {"x": "1"}
    assert "data" not in item
    accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    _, single, _ = await api.request("GET", f"{CM_PATH}/a", headers={"Accept": accept})
    assert single["kind"] == "PartialObjectMetadata"
    assert single["metadata"]["name"] == "a"
