"""ObjectMeta semantics of the Registry: uid, timestamps, generation, names, status, versions, namespaces."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pykueue.api.meta.clock import ManualClock
from pykueue.api.meta.errors import AlreadyExists, BadRequest, Conflict, Forbidden, Invalid, NotFound
from pykueue.registry import Registry
from pykueue.store import Store

from .conftest import cluster_queue, configmap, flavor, kind

KUEUE = "kueue.x-k8s.io"


def test_create_sets_uid_timestamp_generation_and_rv(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    obj, warnings = registry.create(cm, "default", configmap("a"), version="v1")
    meta = obj["metadata"]
    assert warnings == []
    assert re.fullmatch(r"[0-9a-f-]{36}", meta["uid"])
    assert meta["creationTimestamp"] == "2027-01-15T08:00:00Z"
    assert meta["generation"] == 1
    assert int(meta["resourceVersion"]) > 0
    assert registry.get(cm, "default", "a", version="v1") == obj


def test_client_cannot_set_server_owned_metadata(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    body = configmap("a", uid="mine", generation=7, creationTimestamp="2000-01-01T00:00:00Z")
    obj, _ = registry.create(cm, "default", body, version="v1")
    assert obj["metadata"]["uid"] != "mine"
    assert obj["metadata"]["generation"] == 1
    updated, _ = registry.update(cm, "default", "a", {**obj, "metadata": {**obj["metadata"], "uid": "x"}}, version="v1")
    assert updated["metadata"]["uid"] == obj["metadata"]["uid"]


def test_generate_name_appends_five_lowercase_alphanumerics(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    body = configmap("")
    body["metadata"] = {"generateName": "job-", "namespace": "default"}
    obj, _ = registry.create(cm, "default", body, version="v1")
    assert re.fullmatch(r"job-[a-z0-9]{5}", obj["metadata"]["name"])


def test_missing_and_invalid_names_are_422(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    with pytest.raises(Invalid) as missing:
        registry.create(cm, "default", {"metadata": {}}, version="v1")
    assert missing.value.details is not None
    assert missing.value.details["causes"][0]["field"] == "metadata.name"
    with pytest.raises(Invalid) as bad:
        registry.create(cm, "default", configmap("Bad_Name"), version="v1")
    assert "RFC 1123 subdomain" in bad.value.message
    assert registry.list(cm, "default", version="v1")["items"] == []


def test_namespace_names_are_dns_labels(registry: Registry) -> None:
    ns = kind(registry, "", "v1", "namespaces")
    with pytest.raises(Invalid, match="RFC 1123 label"):
        registry.create(ns, "", {"metadata": {"name": "a.b"}}, version="v1")


def test_duplicate_create_is_already_exists(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(cm, "default", configmap("a"), version="v1")
    with pytest.raises(AlreadyExists, match='configmaps "a" already exists'):
        registry.create(cm, "default", configmap("a"), version="v1")


def test_namespace_must_exist(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    with pytest.raises(NotFound, match='namespaces "nope" not found'):
        registry.create(cm, "nope", configmap("a", namespace="nope"), version="v1")


def test_body_namespace_must_match_url(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    with pytest.raises(BadRequest, match="does not match the namespace"):
        registry.create(cm, "default", configmap("a", namespace="kube-system"), version="v1")


def test_wrong_kind_in_body_is_400(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    with pytest.raises(BadRequest, match="kind in the data"):
        registry.create(cm, "default", {**configmap("a"), "kind": "Secret"}, version="v1")


def test_default_namespaces_exist_once(store: Store, clock: ManualClock) -> None:
    first = Registry(store, clock=clock)
    ns = kind(first, "", "v1", "namespaces")
    names = [o["metadata"]["name"] for o in first.list(ns, None, version="v1")["items"]]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    rv = store.resource_version
    Registry(store, clock=clock)
    assert store.resource_version == rv
    default = first.get(ns, "", "default", version="v1")
    assert default["status"] == {"phase": "Active"}
    assert default["metadata"]["labels"] == {"kubernetes.io/metadata.name": "default"}


def test_generation_bumps_on_spec_change_only(registry: Registry) -> None:
    cq = kind(registry, KUEUE, "v1beta2", "clusterqueues")
    obj, _ = registry.create(cq, "", cluster_queue("cq"), version="v1beta2")
    labelled = {**obj, "metadata": {**obj["metadata"], "labels": {"a": "b"}}}
    obj, _ = registry.update(cq, "", "cq", labelled, version="v1beta2")
    assert obj["metadata"]["generation"] == 1
    changed = {**obj, "spec": {**obj["spec"], "cohortName": "team"}}
    obj, _ = registry.update(cq, "", "cq", changed, version="v1beta2")
    assert obj["metadata"]["generation"] == 2


def test_status_subresource_split(registry: Registry) -> None:
    cq = kind(registry, KUEUE, "v1beta2", "clusterqueues")
    created, _ = registry.create(cq, "", {**cluster_queue("cq"), "status": {"pendingWorkloads": 9}}, version="v1beta2")
    assert "status" not in created  # status is server-owned on create
    with_status = {**created, "status": {"pendingWorkloads": 3}, "spec": {**created["spec"], "cohortName": "ignored"}}
    written, _ = registry.update(cq, "", "cq", with_status, version="v1beta2", subresource="status")
    assert written["status"]["pendingWorkloads"] == 3
    assert "cohortName" not in written["spec"]
    assert written["metadata"]["generation"] == 1
    main = {**written, "status": {"pendingWorkloads": 100}}
    main["metadata"] = {**written["metadata"], "labels": {"x": "y"}}
    after, _ = registry.update(cq, "", "cq", main, version="v1beta2")
    assert after["status"]["pendingWorkloads"] == 3
    assert after["metadata"]["labels"] == {"x": "y"}


def test_stale_resource_version_is_conflict(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    obj, _ = registry.create(cm, "default", configmap("a"), version="v1")
    registry.update(cm, "default", "a", {**obj, "data": {"k": "2"}}, version="v1")
    with pytest.raises(Conflict, match="the object has been modified"):
        registry.update(cm, "default", "a", {**obj, "data": {"k": "3"}}, version="v1")


def test_noop_update_writes_nothing(registry: Registry, store: Store) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    obj, _ = registry.create(cm, "default", configmap("a"), version="v1")
    rv = store.resource_version
    again, _ = registry.update(cm, "default", "a", obj, version="v1")
    assert store.resource_version == rv
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def test_objects_are_stored_in_storage_version_and_served_in_any(registry: Registry, store: Store) -> None:
    v1beta1 = kind(registry, KUEUE, "v1beta1", "clusterqueues")
    body = cluster_queue("old")
    body["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    body["spec"].pop("namespaceSelector")
    body["spec"]["cohort"] = "team"
    obj, _ = registry.create(v1beta1, "", body, version="v1beta1")
    assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert obj["spec"]["cohort"] == "team"
    stored = store.get("clusterqueues.kueue.x-k8s.io", "", "old")
    assert stored["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert stored["spec"]["cohortName"] == "team"


def test_dry_run_create_admits_but_stores_nothing(registry: Registry, store: Store) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    rv = store.resource_version
    obj, _ = registry.create(cm, "default", configmap("a"), version="v1", dry_run=True)
    assert obj["metadata"]["uid"]
    assert store.resource_version == rv
    with pytest.raises(NotFound):
        registry.get(cm, "default", "a", version="v1")
    with pytest.raises(Invalid):
        registry.create(cm, "default", configmap("BAD"), version="v1", dry_run=True)


def test_field_validation_strict_warn_ignore(registry: Registry) -> None:
    rf = kind(registry, KUEUE, "v1beta2", "resourceflavors")
    body = {**flavor("a"), "spec": {"nodeLabels": {"x": "y"}, "foo": 1}}
    with pytest.raises(BadRequest, match=r'strict decoding error: unknown field "spec.foo"'):
        registry.create(rf, "", body, version="v1beta2")
    obj, warnings = registry.create(rf, "", body, version="v1beta2", field_validation="Warn")
    assert warnings == ['unknown field "spec.foo"']
    assert "foo" not in obj["spec"]
    obj, warnings = registry.create(
        rf, "", {**body, "metadata": {"name": "b"}}, version="v1beta2", field_validation="Ignore"
    )
    assert warnings == []
    assert "foo" not in obj["spec"]
    with pytest.raises(BadRequest, match="fieldValidation"):
        registry.create(rf, "", flavor("c"), version="v1beta2", field_validation="Loud")


def test_terminating_namespace_refuses_new_content(registry: Registry) -> None:
    ns = kind(registry, "", "v1", "namespaces")
    cm = kind(registry, "", "v1", "configmaps")
    registry.create(ns, "", {"metadata": {"name": "team"}}, version="v1")
    held = configmap("held", namespace="team", finalizers=["example.com/hold"])
    registry.create(cm, "team", held, version="v1")
    registry.delete(ns, "", "team", version="v1")
    assert registry.get(ns, "", "team", version="v1")["status"]["phase"] == "Terminating"
    with pytest.raises(Forbidden, match="being terminated"):
        registry.create(cm, "team", configmap("new", namespace="team"), version="v1")


def test_uid_exists_before_defaulting_so_derived_defaults_are_stable(registry: Registry) -> None:
    jobs = kind(registry, "batch", "v1", "jobs")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}},
    }
    created, _ = registry.create(jobs, "default", job, version="v1")
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] == uid
    labelled, _ = registry.patch(
        jobs,
        "default",
        "j",
        b'{"metadata":{"labels":{"a":"b"}}}',
        "application/strategic-merge-patch+json",
        version="v1",
    )
    assert labelled["metadata"]["labels"] == {"a": "b"}
    assert labelled["spec"] == created["spec"]


def test_pods_start_pending_with_qos_class_and_nodes_keep_status(registry: Registry) -> None:
    pods = kind(registry, "", "v1", "pods")

    def pod(name: str, resources: dict[str, Any]) -> dict[str, Any]:
        return {
            "metadata": {"name": name},
            "status": {"phase": "Running"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]},
        }

    best, _ = registry.create(pods, "default", pod("best", {}), version="v1")
    assert best["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    fixed = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    assert registry.create(pods, "default", pod("g", fixed), version="v1")[0]["status"]["qosClass"] == "Guaranteed"
    burst = {"requests": {"cpu": "1"}}
    assert registry.create(pods, "default", pod("b", burst), version="v1")[0]["status"]["qosClass"] == "Burstable"
    nodes = kind(registry, "", "v1", "nodes")
    node = {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "8"}}}
    assert registry.create(nodes, "", node, version="v1")[0]["status"]["capacity"] == {"cpu": "8"}


def test_status_write_to_a_kind_without_status_is_not_found(registry: Registry) -> None:
    cm = kind(registry, "", "v1", "configmaps")
    obj, _ = registry.create(cm, "default", configmap("a"), version="v1")
    with pytest.raises(NotFound):
        registry.update(cm, "default", "a", obj, version="v1", subresource="status")


def test_list_json_is_the_encoded_list_in_the_storage_version(registry: Registry) -> None:
    import orjson

    cm = kind(registry, "", "v1", "configmaps")
    for name in ("b", "a", "c"):
        registry.create(cm, "default", configmap(name, labels={"app": "x"} if name != "c" else {}), version="v1")
    for kw in ({}, {"label_selector": "app=x"}, {"limit": 2}):
        encoded = registry.list_json(cm, "default", version="v1", **kw)
        assert encoded == orjson.dumps(registry.list(cm, "default", version="v1", **kw))
    empty = registry.list_json(cm, "nowhere", version="v1")
    assert empty is not None
    assert orjson.loads(empty)["items"] == []
    workloads = kind(registry, "kueue.x-k8s.io", "v1beta1", "workloads")
    if workloads.storage_version != "v1beta1":
        assert registry.list_json(workloads, "default", version="v1beta1") is None


def test_new_uids_are_random_rfc4122_version_4_uuids() -> None:
    import uuid

    from pykueue.registry.objectmeta import new_uid

    seen = set()
    for _ in range(2000):
        text = new_uid()
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)
        seen.add(text)
    assert len(seen) == 2000


def test_field_validation_finds_unknown_fields_a_patch_adds_deep_inside_stored_content(registry: Registry) -> None:
    # Fields equal to the stored object's are not walked again; what a patch adds or changes inside
    # them (a new list item, a changed item, a new key in a stored map item) still is.
    cqs = kind(registry, KUEUE, "v1beta2", "clusterqueues")
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "a", "resources": [{"name": "cpu", "nominalQuota": "1"}]}],
                }
            ]
        },
    }
    registry.create(cqs, "", cq, version="v1beta2")
    flavors = "/spec/resourceGroups/0/flavors"
    cases = {
        "spec.resourceGroups[0].flavors[1].bogus": [
            {
                "op": "add",
                "path": f"{flavors}/-",
                "value": {"name": "b", "bogus": 1, "resources": [{"name": "cpu", "nominalQuota": "1"}]},
            }
        ],
        "spec.resourceGroups[0].flavors[0].resources[0].bogus": [
            {"op": "add", "path": f"{flavors}/0/resources/0/bogus", "value": 1}
        ],
        "spec.resourceGroups[0].flavors[0].bogus": [{"op": "add", "path": f"{flavors}/0/bogus", "value": 1}],
    }
    for path, ops in cases.items():
        with pytest.raises(BadRequest, match=f'unknown field "{re.escape(path)}"'):
            registry.patch(cqs, "", "cq", json.dumps(ops).encode(), "application/json-patch+json", version="v1beta2")
        obj, warnings = registry.patch(
            cqs,
            "",
            "cq",
            json.dumps(ops).encode(),
            "application/json-patch+json",
            version="v1beta2",
            field_validation="Warn",
            dry_run=True,
        )
        assert warnings == [f'unknown field "{path}"']
        assert "bogus" not in json.dumps(obj)


def test_an_event_converted_to_another_version_keeps_its_key_and_labels(registry: Registry, store: Store) -> None:
    # a label-selector watch in a non-storage version still filters without decoding the object
    v1beta1 = kind(registry, KUEUE, "v1beta1", "clusterqueues")
    seen: list[Any] = []
    registry.subscribe(seen.append)
    body = cluster_queue("q")
    body["metadata"]["labels"] = {"team": "a", "app": "b"}
    registry.create(kind(registry, KUEUE, "v1beta2", "clusterqueues"), "", body, version="v1beta2")
    converted = registry.convert_event(v1beta1, seen[-1], "v1beta1")
    assert converted.object["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert (converted.key, converted.labels) == (("", "q"), {"app": "b", "team": "a"})
