"""The built-in kinds an install manifest carries: stored, validated, listed, deleted; Events in two groups."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from tests.unit.apiserver.conftest import Api

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
STATEFULSETS = "/apis/apps/v1/namespaces/default/statefulsets"
SERVICES = "/api/v1/namespaces/default/services"
CORE_EVENTS = "/api/v1/namespaces/default/events"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def deployment(name: str, *, selector: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2,
            "selector": selector or {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "busybox"}]},
            },
        },
    }


def events_v1(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2027-01-15T08:00:00.000000Z",
        "reportingController": "example.com/controller",
        "reportingInstance": "controller-0",
        "action": "Reconcile",
        "reason": "Synced",
        "type": "Normal",
        "note": "all good",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "p1"},
        **extra,
    }


def _causes(body: dict[str, Any]) -> list[str]:
    return [c["field"] for c in body["details"]["causes"]]


async def test_deployment_is_stored_listed_and_deleted(api: Api) -> None:
    code, created, _ = await api.request("POST", DEPLOYMENTS, deployment("web"))
    assert code == 201, created
    assert created["metadata"]["uid"]
    assert created["metadata"]["generation"] == 1
    code, listed, _ = await api.request("GET", DEPLOYMENTS)
    assert [d["metadata"]["name"] for d in listed["items"]] == ["web"]
    assert listed["kind"] == "DeploymentList"
    code, _, _ = await api.request("DELETE", DEPLOYMENTS)
    assert code == 200
    code, listed, _ = await api.request("GET", DEPLOYMENTS)
    assert listed["items"] == []


async def test_deployment_selector_must_match_the_template(api: Api) -> None:
    code, body, _ = await api.request("POST", DEPLOYMENTS, deployment("web", selector={"matchLabels": {"app": "x"}}))
    assert code == 422, body
    assert _causes(body) == ["spec.template.metadata.labels"]
    assert "`selector` does not match template `labels`" in body["message"]
    bad = deployment("web")
    del bad["spec"]["selector"]
    code, body, _ = await api.request("POST", DEPLOYMENTS, bad)
    assert code == 422
    assert "spec.selector" in _causes(body)


async def test_deployment_selector_is_immutable(api: Api) -> None:
    _, created, _ = await api.request("POST", DEPLOYMENTS, deployment("web"))
    changed = {**created, "spec": {**created["spec"], "selector": {"matchLabels": {"app": "web", "x": "y"}}}}
    changed["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    code, body, _ = await api.request("PUT", f"{DEPLOYMENTS}/web", changed)
    assert code == 422
    assert _causes(body) == ["spec.selector"]


async def test_statefulset_template_must_be_valid(api: Api) -> None:
    sts = deployment("db")
    sts["kind"] = "StatefulSet"
    sts["spec"]["template"]["spec"]["containers"] = [{"name": "main"}]
    code, body, _ = await api.request("POST", STATEFULSETS, sts)
    assert code == 422, body
    assert "spec.template.spec.containers[0].image" in _causes(body)


@pytest.mark.parametrize(
    ("ports", "field"),
    [
        ([{"port": 80}, {"port": 81}], "spec.ports[0].name"),
        ([{"name": "a", "port": 80}, {"name": "a", "port": 81}], "spec.ports[1].name"),
        ([{"name": "a", "port": 0}], "spec.ports[0].port"),
        ([{"name": "a"}], "spec.ports[0].port"),
        ([{"name": "a", "port": 80, "protocol": "HTTP"}], "spec.ports[0].protocol"),
    ],
)
async def test_service_ports_are_validated(api: Api, ports: list[dict[str, Any]], field: str) -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"selector": {"app": "web"}, "ports": ports},
    }
    code, body, _ = await api.request("POST", SERVICES, service)
    assert code == 422, body
    assert field in _causes(body)


async def test_rbac_rules_need_verbs_and_bindings_a_role(api: Api) -> None:
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "r"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}],
    }
    code, body, _ = await api.request("POST", f"{RBAC}/clusterroles", role)
    assert code == 422
    assert _causes(body) == ["rules[0].verbs"]
    role["rules"][0]["verbs"] = ["get", "list"]
    code, _, _ = await api.request("POST", f"{RBAC}/clusterroles", role)
    assert code == 201
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "default"}],
    }
    code, body, _ = await api.request("POST", f"{RBAC}/clusterrolebindings", binding)
    assert code == 422
    assert _causes(body) == ["roleRef.kind"]


async def test_webhook_configuration_needs_side_effects_and_client_config(api: Api) -> None:
    config: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "v"},
        "webhooks": [{"name": "v.example.com", "admissionReviewVersions": ["v1"], "clientConfig": {}}],
    }
    code, body, _ = await api.request("POST", WEBHOOKS, config)
    assert code == 422
    assert sorted(_causes(body)) == ["webhooks[0].clientConfig", "webhooks[0].sideEffects"]
    config["webhooks"][0].update(name="v.example", sideEffects="None", clientConfig={"url": "https://example.com/v"})
    code, body, _ = await api.request("POST", WEBHOOKS, config)
    assert code == 422
    assert _causes(body) == ["webhooks[0].name"]  # a webhook's name is a domain of three or more segments
    config["webhooks"][0]["name"] = "v.example.com"
    code, body, _ = await api.request("POST", WEBHOOKS, config)
    assert code == 201, body


async def test_limit_range_and_runtime_class_are_served(api: Api) -> None:
    code, body, _ = await api.request("GET", "/api/v1/limitranges")
    assert code == 200
    assert body["kind"] == "LimitRangeList"
    code, body, _ = await api.request("GET", "/apis/node.k8s.io/v1/runtimeclasses")
    assert code == 200
    assert body["kind"] == "RuntimeClassList"
    code, body, _ = await api.request(
        "POST",
        "/apis/node.k8s.io/v1/runtimeclasses",
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "gvisor"},
            "handler": "Not_A_Label",
        },
    )
    assert code == 422
    assert _causes(body) == ["handler"]


async def test_events_v1_is_a_view_of_core_events(api: Api) -> None:
    code, created, _ = await api.request("POST", EVENTS_V1, events_v1("e1"))
    assert code == 201, created
    assert created["apiVersion"] == "events.k8s.io/v1"
    assert created["note"] == "all good"
    assert created["regarding"]["name"] == "p1"
    code, core, _ = await api.request("GET", f"{CORE_EVENTS}/e1")
    assert code == 200
    assert core["apiVersion"] == "v1"
    assert core["message"] == "all good"
    assert core["involvedObject"]["name"] == "p1"
    assert core["reportingComponent"] == "example.com/controller"
    code, listed, _ = await api.request("GET", EVENTS_V1)
    assert [e["note"] for e in listed["items"]] == ["all good"]
    # client-go's recorder then patches the series
    series = {"series": {"count": 2, "lastObservedTime": "2027-01-15T08:01:00.000000Z"}}
    code, patched, _ = await api.request(
        "PATCH", f"{EVENTS_V1}/e1", series, content_type="application/strategic-merge-patch+json"
    )
    assert code == 200, patched
    assert patched["series"]["count"] == 2
    code, core, _ = await api.request("GET", f"{CORE_EVENTS}/e1")
    assert core["series"]["count"] == 2


async def test_events_v1_requires_what_kube_requires(api: Api) -> None:
    bad = events_v1("e2")
    del bad["reportingController"]
    bad["type"] = "Odd"
    code, body, _ = await api.request("POST", EVENTS_V1, bad)
    assert code == 422, body
    assert sorted(_causes(body)) == ["reportingController", "type"]
    _, _created, _ = await api.request("POST", EVENTS_V1, events_v1("e3"))
    code, body, _ = await api.request(
        "PATCH", f"{EVENTS_V1}/e3", {"note": "changed"}, content_type="application/merge-patch+json"
    )
    assert code == 422
    assert _causes(body) == ["note"]


async def test_core_events_table_shows_events_posted_through_events_v1(api: Api) -> None:
    await api.request("POST", EVENTS_V1, events_v1("e4"))
    code, table, _ = await api.request(
        "GET", CORE_EVENTS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    )
    assert code == 200
    (row,) = table["rows"]
    assert row["cells"][1:] == ["Normal", "Synced", "pod/p1", "all good"]


async def test_discovery_lists_the_new_groups(api: Api) -> None:
    code, groups, _ = await api.request("GET", "/apis")
    assert code == 200
    names = {g["name"] for g in groups["groups"]}
    assert {
        "apps",
        "rbac.authorization.k8s.io",
        "admissionregistration.k8s.io",
        "node.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
    } <= names
    _code, core, _ = await api.request("GET", "/api/v1")
    served = {r["name"] for r in core["resources"]}
    assert {"services", "serviceaccounts", "limitranges", "events"} <= served


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/api/v1/namespaces/default/limitranges",
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "lr"},
                "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m"}}]},
            },
        ),
        (
            "/apis/node.k8s.io/v1/runtimeclasses",
            {
                "apiVersion": "node.k8s.io/v1",
                "kind": "RuntimeClass",
                "metadata": {"name": "gvisor"},
                "handler": "runsc",
            },
        ),
    ],
)
async def test_informers_can_list_and_watch_limit_ranges_and_runtime_classes(
    api: Api, path: str, body: dict[str, Any]
) -> None:
    code, created, _ = await api.request("POST", path, body)
    assert code == 201, created
    code, listed, _ = await api.request("GET", path)
    assert code == 200
    rv = listed["metadata"]["resourceVersion"]
    code, event, _ = await api.request("GET", f"{path}?watch=true&resourceVersion=0&timeoutSeconds=1")
    assert code == 200
    assert event["type"] == "ADDED"  # the one stored object, as a single watch line
    assert event["object"]["metadata"]["name"] == body["metadata"]["name"]
    assert int(rv) >= int(created["metadata"]["resourceVersion"])


async def test_watchers_of_both_event_groups_each_get_their_own_shape(api: Api) -> None:
    """One stored Event, two live watchers: each sees it in its group's form (no shared line mixes them)."""
    _, listed, _ = await api.request("GET", CORE_EVENTS)
    rv = listed["metadata"]["resourceVersion"]
    query = f"?watch=true&resourceVersion={rv}&timeoutSeconds=5"
    async with (
        api.session.get(api.url + CORE_EVENTS + query) as core,
        api.session.get(api.url + EVENTS_V1 + query) as v1,
    ):
        # both watchers are subscribed once their headers arrived: the event below reaches them live
        assert (core.status, v1.status) == (200, 200)
        code, _, _ = await api.request("POST", EVENTS_V1, events_v1("live"))
        assert code == 201
        core_line = await asyncio.wait_for(core.content.readline(), 5)
        v1_line = await asyncio.wait_for(v1.content.readline(), 5)
    core_event, v1_event = orjson.loads(core_line), orjson.loads(v1_line)
    assert core_event["object"]["apiVersion"] == "v1"
    assert core_event["object"]["message"] == "all good"
    assert v1_event["object"]["apiVersion"] == "events.k8s.io/v1"
    assert v1_event["object"]["note"] == "all good"
