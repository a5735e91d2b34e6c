"""The audit log's request parsing (kube's RequestInfo) and the token file reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.apiserver.audit import load_token_file, request_info


@pytest.mark.parametrize(
    ("method", "path", "query", "verb", "ref"),
    [
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            {},
            "list",
            {"resource": "pods", "namespace": "default", "apiVersion": "v1"},
        ),
        (
            "GET",
            "/api/v1/namespaces/default/pods",
            {"watch": "true"},
            "watch",
            {"resource": "pods", "namespace": "default", "apiVersion": "v1"},
        ),
        (
            "GET",
            "/api/v1/watch/namespaces/default/pods/p",
            {},
            "watch",
            {"resource": "pods", "namespace": "default", "name": "p", "apiVersion": "v1"},
        ),
        (
            "PATCH",
            "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status",
            {},
            "patch",
            {
                "resource": "workloads",
                "namespace": "ns",
                "name": "w",
                "apiGroup": "kueue.x-k8s.io",
                "apiVersion": "v1beta2",
                "subresource": "status",
            },
        ),
        (
            "PUT",
            "/api/v1/namespaces/ns/finalize",
            {},
            "update",
            {"resource": "namespaces", "namespace": "ns", "name": "ns", "apiVersion": "v1", "subresource": "finalize"},
        ),
        (
            "GET",
            "/api/v1/namespaces/ns",
            {},
            "get",
            {"resource": "namespaces", "namespace": "ns", "name": "ns", "apiVersion": "v1"},
        ),
        (
            "DELETE",
            "/apis/batch/v1/namespaces/ns/jobs",
            {},
            "deletecollection",
            {"resource": "jobs", "namespace": "ns", "apiGroup": "batch", "apiVersion": "v1"},
        ),
        (
            "POST",
            "/apis/coordination.k8s.io/v1/namespaces/pykueue-system/leases",
            {},
            "create",
            {
                "resource": "leases",
                "namespace": "pykueue-system",
                "apiGroup": "coordination.k8s.io",
                "apiVersion": "v1",
            },
        ),
        (
            "GET",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com",
            {},
            "get",
            {
                "resource": "customresourcedefinitions",
                "name": "x.example.com",
                "apiGroup": "apiextensions.k8s.io",
                "apiVersion": "v1",
            },
        ),
        ("GET", "/apis", {}, "get", None),
        ("GET", "/api/v1", {}, "get", None),
        ("POST", "/pykueue/batch", {}, "post", None),
    ],
)
def test_request_info(method: str, path: str, query: dict[str, str], verb: str, ref: dict[str, str] | None) -> None:
    assert request_info(method, path, query) == (verb, ref)


def test_token_file(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('# comment\n\nt1,alice,u1\nt2,bob,u2,"dev,ops"\n')
    users = load_token_file(tokens)
    assert users["t1"].username == "alice"
    assert users["t1"].groups == ("system:authenticated",)
    assert users["t2"].to_json() == {"username": "bob", "uid": "u2", "groups": ["dev", "ops", "system:authenticated"]}
