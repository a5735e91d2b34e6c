"""Protobuf bodies client-go sends for the built-in kinds of an install manifest, Events and DeleteOptions.

The layout table is checked against the official client's schema of every kind it decodes, so a field of
a kind cannot be missing from it unnoticed. The bodies are built field by field as gogo-protobuf writes
them (non-pointer scalars and structs present even when empty), with the small encoder of
``test_protobuf_kinds`` (independent of the decoder).
"""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.catalogue import build_catalogue
from pykueue.api.meta.errors import BadRequest, UnsupportedMediaType
from pykueue.apiserver import protobuf
from pykueue.apiserver.access_reviews import openapi_documents
from pykueue.apiserver.protobuf import PROTOBUF, decode_delete_options, decode_protobuf
from pykueue.apiserver.protobuf_layout import KINDS, REVIEW_KINDS

from .conftest import Api
from .test_protobuf_kinds import _bool, _container, _entry, _envelope, _int, _meta, _msg, _pod_spec, _str

# Alpha fields of the newest client models whose protobuf numbers the table does not carry yet: a body
# that sets one is refused with 400 (unknown field number), never stored without it.
_NOT_YET_IN_THE_TABLE = {
    "JobSpec.scheduling",
    "PodSpec.evictionResponders",
    "PodSpec.schedulingGroup",
    "EmptyDirVolumeSource.mode",
    "SecretVolumeSource.defaultUser",
    "KeyToPath.user",
    "DownwardAPIVolumeSource.defaultUser",
    "DownwardAPIVolumeFile.user",
    "ConfigMapVolumeSource.defaultUser",
    "ProjectedVolumeSource.defaultUser",
    "ServiceAccountTokenProjection.user",
    "VolumeMount.bindMountOptions",
    "HTTPGetAction.protocol",
    "GRPCAction.mode",
    "PodStatus.nodeAllocatableResourceClaimStatuses",
    "PodStatus.volumeHealth",
}

_CATALOGUE = build_catalogue()


def schema_for(group: str, kind: str, version: str) -> dict[str, Any]:
    found = _CATALOGUE.by_kind(group, kind)
    assert found is not None, kind
    return found.schema[version]


def _fields(message: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in protobuf._TABLE[message].values():
        if field.inline:
            out.update(_fields(field.kind))
        else:
            out[field.name] = field
    return out


def _missing(message: str, schema: dict[str, Any], seen: set[str]) -> set[str]:
    """Schema properties the message does not name, walking every embedded message once."""
    if message in seen:
        return set()
    seen.add(message)
    fields = _fields(message)
    properties = schema.get("properties") or {}
    missing = {f"{message}.{name}" for name in properties if name not in ("apiVersion", "kind") and name not in fields}
    for name, field in fields.items():
        child = properties.get(name)
        if child is None or field.kind in protobuf._SCALARS:
            continue
        if child.get("type") == "array":
            child = child.get("items") or {}
        missing |= _missing(field.kind, child, seen)
    return missing


@pytest.mark.parametrize(("api_version", "kind"), sorted(KINDS))
def test_the_layout_names_every_field_of_the_kinds_schema(api_version: str, kind: str) -> None:
    group, _, version = api_version.rpartition("/")
    missing = _missing(KINDS[(api_version, kind)], schema_for(group, kind, version), set())
    assert missing - _NOT_YET_IN_THE_TABLE == set()


@pytest.mark.parametrize(("api_version", "kind"), sorted(REVIEW_KINDS))
def test_the_review_layouts_name_every_field_of_the_served_review_schemas(api_version: str, kind: str) -> None:
    documents = openapi_documents({"type": "object"})
    (schema,) = (
        s
        for s in documents[f"apis/{api_version}"]["components"]["schemas"].values()
        if s["x-kubernetes-group-version-kind"][0]["kind"] == kind
    )
    assert _missing(REVIEW_KINDS[(api_version, kind)], schema, set()) == set()


def test_every_built_in_kind_of_an_install_manifest_is_decoded() -> None:
    assert {
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("v1", "Service"),
        ("v1", "ServiceAccount"),
        ("v1", "LimitRange"),
        ("node.k8s.io/v1", "RuntimeClass"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
        ("discovery.k8s.io/v1", "EndpointSlice"),
        ("events.k8s.io/v1", "Event"),
        ("v1", "Event"),
        ("coordination.k8s.io/v1", "Lease"),
    } <= set(KINDS)


# --- DeleteOptions ---------------------------------------------------------------------------------


def _delete_options(*fields: bytes, api_version: str = "v1") -> bytes:
    return _envelope(api_version, "DeleteOptions", *fields)


def test_delete_options_decode_as_kubectl_would_send_them_in_json() -> None:
    body = _delete_options(_int(1, 0), _msg(2, _str(1, "uid-1"), _str(2, "42")), _str(4, "Foreground"), _str(5, "All"))
    assert decode_delete_options(body) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "uid-1", "resourceVersion": "42"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


def test_a_delete_body_of_another_kind_is_a_400() -> None:
    with pytest.raises(BadRequest):
        decode_delete_options(_envelope("v1", "ConfigMap", _meta("x")))


def _deployment(name: str) -> bytes:
    selector = _msg(2, _entry(1, "app", name))
    template = _msg(
        3,
        _msg(1, _str(1, ""), _entry(11, "app", name), _msg(8)),
        _pod_spec(_container("main", number=2), _str(3, "Always")),
    )
    strategy = _msg(
        4, _str(1, "RollingUpdate"), _msg(2, _msg(1, _int(1, 1), _str(3, "25%")), _msg(2, _int(1, 0), _int(2, 1)))
    )
    spec = _msg(2, _int(1, 3), selector, template, strategy, _int(5, 0), _bool(7, False))
    status = _msg(3, _int(1, 0), _int(2, 0), _int(3, 0), _int(4, 0), _int(5, 0), _int(7, 0))
    return _envelope("apps/v1", "Deployment", _meta(name), spec, status)


def test_a_deployment_decodes_with_its_template_strategy_and_int_or_strings() -> None:
    obj = decode_protobuf(_deployment("web"))
    assert obj["spec"]["replicas"] == 3
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert obj["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1},
    }
    assert obj["spec"]["template"]["metadata"] == {"labels": {"app": "web"}}
    assert obj["status"] == {}


async def test_typed_delete_and_delete_collection_take_protobuf_delete_options(api: Api) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments"
    for name in ("a", "b", "c"):
        code, created, _ = await api.request("POST", path, raw=_deployment(name), content_type=PROTOBUF)
        assert code == 201, created
    stale = _delete_options(_msg(2, _str(1, "not-the-uid")), api_version="apps/v1")
    code, body, _ = await api.request("DELETE", f"{path}/a", raw=stale, content_type=PROTOBUF)
    assert code == 409, body  # the precondition was read from the protobuf body
    assert "Precondition failed: UID in precondition: not-the-uid" in body["message"]
    options = _delete_options(_str(4, "Background"), api_version="meta.k8s.io/v1")
    code, body, _ = await api.request("DELETE", f"{path}/a", raw=options, content_type=PROTOBUF)
    assert code == 200, body
    dry = _delete_options(_str(5, "All"))
    code, body, _ = await api.request("DELETE", path, raw=dry, content_type=PROTOBUF)
    assert code == 200
    assert len(body["items"]) == 2
    code, listed, _ = await api.request("GET", path)
    assert [d["metadata"]["name"] for d in listed["items"]] == ["b", "c"]  # dryRun deleted nothing
    code, body, _ = await api.request("DELETE", path, raw=options, content_type=PROTOBUF)
    assert code == 200
    code, listed, _ = await api.request("GET", path)
    assert listed["items"] == []


# --- Events ----------------------------------------------------------------------------------------


def _events_v1_event(name: str) -> bytes:
    """As client-go's event recorder (k8s.io/client-go/tools/events) writes an Event."""
    micro = _msg(2, _int(1, 1_800_000_000), _int(2, 123_456_000))
    regarding = _msg(
        8, _str(1, "Pod"), _str(2, "default"), _str(3, "p1"), _str(4, "uid-p1"), _str(5, "v1"), _str(6, ""), _str(7, "")
    )
    return _envelope(
        "events.k8s.io/v1",
        "Event",
        _meta(name, _str(3, "default")),
        micro,
        _str(4, "example.com/controller"),
        _str(5, "controller-0"),
        _str(6, "Reconcile"),
        _str(7, "Synced"),
        regarding,
        _msg(9, _str(1, ""), _str(2, ""), _str(3, "")),
        _str(10, "all good"),
        _str(11, "Normal"),
        _msg(12, _str(1, ""), _str(2, "")),
        _msg(13),
        _msg(14),
        _int(15, 0),
    )


def test_an_events_v1_event_decodes_with_a_micro_time() -> None:
    obj = decode_protobuf(_events_v1_event("e1"))
    assert obj["eventTime"] == "2027-01-15T08:00:00.123456Z"
    assert obj["regarding"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "p1",
        "uid": "uid-p1",
        "apiVersion": "v1",
    }
    assert obj["note"] == "all good"
    assert obj["reportingController"] == "example.com/controller"
    assert "deprecatedCount" not in obj
    assert "deprecatedFirstTimestamp" not in obj


async def test_the_event_recorders_protobuf_event_is_stored_and_listed_as_a_core_event(api: Api) -> None:
    code, created, _ = await api.request(
        "POST", "/apis/events.k8s.io/v1/namespaces/default/events", raw=_events_v1_event("e1"), content_type=PROTOBUF
    )
    assert code == 201, created
    assert created["apiVersion"] == "events.k8s.io/v1"
    code, core, _ = await api.request("GET", "/api/v1/namespaces/default/events/e1")
    assert code == 200
    assert core["message"] == "all good"
    assert core["involvedObject"]["name"] == "p1"
    assert core["eventTime"] == "2027-01-15T08:00:00.123456Z"


def test_a_custom_resource_in_protobuf_is_a_415_as_in_kube_apiserver() -> None:
    body = _envelope("kueue.x-k8s.io/v1beta2", "ClusterQueue", _meta("cq"))
    with pytest.raises(UnsupportedMediaType, match="not a built-in kind served as protobuf"):
        decode_protobuf(body)


def test_a_known_but_undecoded_field_is_refused_only_when_it_carries_data() -> None:
    pvc = _msg(4, _msg(1, _str(1, "data")), _msg(2, _str(1, "ReadWriteOnce")), _msg(3))  # empty status: fine
    spec = _msg(2, _msg(2, _entry(1, "app", "db")), pvc)
    obj = decode_protobuf(_envelope("apps/v1", "StatefulSet", _meta("db"), spec))
    assert obj["spec"]["volumeClaimTemplates"] == [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    ]
    pvc = _msg(4, _msg(1, _str(1, "data")), _msg(3, _str(1, "Bound")))
    with pytest.raises(UnsupportedMediaType, match="volumeClaimTemplates"):
        decode_protobuf(_envelope("apps/v1", "StatefulSet", _meta("db"), _msg(2, pvc)))
