"""Probes, authentication, discovery (legacy and aggregated v2), OpenAPI v2/v3 and the CRD listing."""

from __future__ import annotations

import aiohttp

from .conftest import Api

AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


async def test_version_and_probes_are_open(api: Api) -> None:
    async with aiohttp.ClientSession() as anonymous:
        async with anonymous.get(api.url + "/version") as response:
            body = await response.json()
            assert body["gitVersion"].startswith("v1.32.")
            assert (body["major"], body["minor"]) == ("1", "32")
        for probe in ("/healthz", "/readyz", "/livez"):
            async with anonymous.get(api.url + probe) as response:
                assert response.status == 200
                assert await response.text() == "ok"


async def test_missing_or_wrong_token_is_401_status(api: Api) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic dGVzdA=="}):
        async with aiohttp.ClientSession(headers=headers) as client, client.get(api.url + "/api") as response:
            assert response.status == 401
            status = await response.json()
            assert status["kind"] == "Status"
            assert status["reason"] == "Unauthorized"
            assert status["code"] == 401


async def test_legacy_discovery(api: Api) -> None:
    status, versions, _ = await api.request("GET", "/api")
    assert status == 200
    assert versions["kind"] == "APIVersions"
    assert versions["versions"] == ["v1"]
    _, groups, _ = await api.request("GET", "/apis")
    kueue = next(g for g in groups["groups"] if g["name"] == "kueue.x-k8s.io")
    assert kueue["preferredVersion"]["version"] == "v1beta2"
    assert [v["version"] for v in kueue["versions"]] == ["v1beta2", "v1beta1"]
    _, group, _ = await api.request("GET", "/apis/batch")
    assert group["kind"] == "APIGroup"
    assert group["name"] == "batch"
    _, resources, _ = await api.request("GET", "/apis/kueue.x-k8s.io/v1beta2")
    by_name = {r["name"]: r for r in resources["resources"]}
    cq = by_name["clusterqueues"]
    assert cq["namespaced"] is False
    assert cq["kind"] == "ClusterQueue"
    assert cq["singularName"] == "clusterqueue"
    assert cq["shortNames"] == ["cq"]
    assert "watch" in cq["verbs"]
    assert cq["storageVersionHash"]
    assert by_name["clusterqueues/status"]["verbs"] == ["get", "patch", "update"]
    _, core, _ = await api.request("GET", "/api/v1")
    core_names = {r["name"] for r in core["resources"]}
    assert {"pods", "pods/status", "pods/log", "namespaces"} <= core_names
    status, missing, _ = await api.request("GET", "/apis/nope.example.com/v1")
    assert status == 404
    assert missing["kind"] == "Status"


async def test_aggregated_discovery_v2(api: Api) -> None:
    _, body, response = await api.request("GET", "/apis", headers={"Accept": AGGREGATED})
    assert response.headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert body["kind"] == "APIGroupDiscoveryList"
    assert body["apiVersion"] == "apidiscovery.k8s.io/v2"
    kueue = next(i for i in body["items"] if i["metadata"].get("name") == "kueue.x-k8s.io")
    assert [v["version"] for v in kueue["versions"]] == ["v1beta2", "v1beta1"]
    resources = {r["resource"]: r for r in kueue["versions"][0]["resources"]}
    workloads = resources["workloads"]
    assert workloads["scope"] == "Namespaced"
    assert workloads["responseKind"] == {"group": "kueue.x-k8s.io", "version": "v1beta2", "kind": "Workload"}
    assert workloads["subresources"][0]["subresource"] == "status"
    _, core, _ = await api.request("GET", "/api", headers={"Accept": AGGREGATED})
    assert len(core["items"]) == 1
    assert "name" not in core["items"][0]["metadata"]
    pods = next(r for r in core["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods["categories"] == ["all"]


async def test_openapi_v3_root_and_group_version_document(api: Api) -> None:
    _, root, _ = await api.request("GET", "/openapi/v3")
    entry = root["paths"]["apis/kueue.x-k8s.io/v1beta2"]
    url = entry["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/kueue.x-k8s.io/v1beta2?hash=")
    status, document, response = await api.request("GET", url)
    assert status == 200
    assert response.headers["Content-Type"] == "application/json"
    schemas = document["components"]["schemas"]
    cq = next(
        s
        for s in schemas.values()
        if {"group": "kueue.x-k8s.io", "kind": "ClusterQueue", "version": "v1beta2"}
        in s.get("x-kubernetes-group-version-kind", [])
    )
    assert "description" in cq["properties"]["spec"]
    patches = [
        p["patch"]
        for p in document["paths"].values()
        if "patch" in p and p["patch"]["x-kubernetes-group-version-kind"]["kind"] == "ClusterQueue"
    ]
    assert patches
    params = {p["name"] for p in patches[0]["parameters"] if p["in"] == "query"}
    assert {"fieldValidation", "dryRun", "fieldManager", "force"} <= params
    # CRDs do not take strategic merge patches; built-in kinds do.
    assert "application/strategic-merge-patch+json" not in patches[0]["requestBody"]["content"]
    _, batch, _ = await api.request("GET", root["paths"]["apis/batch/v1"]["serverRelativeURL"])
    job_patch = next(p["patch"] for p in batch["paths"].values() if "patch" in p)
    assert "application/strategic-merge-patch+json" in job_patch["requestBody"]["content"]
    status, _, _ = await api.request("GET", "/openapi/v3/apis/nope/v1")
    assert status == 404


async def test_openapi_v2_json_and_406_for_protobuf(api: Api) -> None:
    status, document, _ = await api.request("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert status == 200
    assert document["swagger"] == "2.0"
    assert any(name.endswith("v1beta2.ClusterQueue") for name in document["definitions"])
    status, error, _ = await api.request(
        "GET", "/openapi/v2", headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}
    )
    assert status == 406
    assert error["kind"] == "Status"


async def test_crd_listing(api: Api) -> None:
    _, crds, _ = await api.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    names = {c["metadata"]["name"] for c in crds["items"]}
    assert "clusterqueues.kueue.x-k8s.io" in names
    assert "jobs.batch" not in names
    _, crd, _ = await api.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloads.kueue.x-k8s.io"
    )
    assert crd["spec"]["names"]["kind"] == "Workload"
    assert crd["status"]["conditions"][1]["type"] == "Established"
    status, body, _ = await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {})
    assert status == 422  # CRDs can be created; an empty one is refused with its reasons
    assert {"field": "spec.group", "message": "Required value", "reason": "FieldValueRequired"} in body["details"][
        "causes"
    ]


async def test_crd_table_for_kubectl_get_crd(api: Api) -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    _, table, _ = await api.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", headers={"Accept": accept}
    )
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    row = next(r for r in table["rows"] if r["cells"][0] == "clusterqueues.kueue.x-k8s.io")
    assert row["cells"][1] == "2027-01-15T08:00:00Z"


async def test_unknown_paths_and_methods_are_status_objects(api: Api) -> None:
    status, body, _ = await api.request("GET", "/nonsense")
    assert status == 404
    assert body["kind"] == "Status"
    status, body, _ = await api.request("POST", "/apis", {})
    assert status == 405
    assert body["reason"] == "MethodNotAllowed"
