"""managedFields bookkeeping for ordinary (Update) writes."""

from __future__ import annotations

import copy
from typing import Any

from pykueue.registry.patch import server_side_apply, update_managed_fields
from pykueue.registry.patch.fieldpaths import decode, encode

KEYS = {"spec.podSets": "name", "status.conditions": "type", "spec.resourceGroups.flavors": "name"}
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"


def workload(**status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": "w",
            "namespace": "ns",
            "uid": "u1",
            "resourceVersion": "5",
            "creationTimestamp": T0,
            "generation": 1,
            "labels": {"app": "x"},
        },
        "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 2}]},
    }
    if status:
        obj["status"] = status
    return obj


def update(
    old: dict[str, Any] | None, new: dict[str, Any], manager: str, now: str = T0, subresource: str = ""
) -> dict[str, Any]:
    return update_managed_fields(
        old, new, manager=manager, operation="Update", now=now, subresource=subresource, merge_keys=KEYS
    )


def entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", [])}


def test_create_owns_every_field_like_kube_does_for_custom_resources() -> None:
    got = update(None, workload(), "kubectl-create")
    assert got["metadata"]["managedFields"] == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    ".": {},
                    "f:podSets": {".": {}, 'k:{"name":"main"}': {".": {}, "f:count": {}, "f:name": {}}},
                    "f:queueName": {},
                },
            },
        }
    ]


def test_update_moves_changed_fields_to_the_writer() -> None:
    created = update(None, workload(), "kubectl-create")
    changed = copy.deepcopy(created)
    changed["spec"]["queueName"] = "other"
    got = update(created, changed, "kubectl-edit", now=T1)
    assert entries(got)["kubectl-edit"]["fieldsV1"] == {"f:spec": {"f:queueName": {}}}
    assert entries(got)["kubectl-edit"]["time"] == T1
    assert "f:queueName" not in entries(got)["kubectl-create"]["fieldsV1"]["f:spec"]
    assert entries(got)["kubectl-create"]["time"] == T0


def test_removed_fields_leave_every_manager_and_empty_entries_vanish() -> None:
    created = update(None, workload(), "creator")
    labelled = copy.deepcopy(created)
    labelled["metadata"]["labels"]["team"] = "a"
    labelled = update(created, labelled, "labeller", now=T1)
    unlabelled = copy.deepcopy(labelled)
    del unlabelled["metadata"]["labels"]["team"]
    got = update(labelled, unlabelled, "someone-else", now=T2)
    assert set(entries(got)) == {"creator"}


def test_status_write_by_controller_records_subresource_and_keeps_request_fields_out() -> None:
    created = update(None, workload(), "creator")
    with_status = copy.deepcopy(created)
    with_status["status"] = {"conditions": [{"type": "QuotaReserved", "status": "True"}]}
    with_status["metadata"]["managedFields"] = [
        {"manager": "forged", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}
    ]
    got = update(created, with_status, "kueue-admission", now=T1, subresource="status")
    assert set(entries(got)) == {"creator", "kueue-admission"}
    entry = entries(got)["kueue-admission"]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {
        "f:status": {
            ".": {},
            "f:conditions": {".": {}, 'k:{"type":"QuotaReserved"}': {".": {}, "f:status": {}, "f:type": {}}},
        }
    }


def test_unchanged_write_keeps_managed_fields_byte_for_byte() -> None:
    created = update(None, workload(), "creator")
    same = copy.deepcopy(created)
    same["metadata"]["resourceVersion"] = "6"
    got = update(created, same, "someone", now=T2)
    assert got["metadata"]["managedFields"] == created["metadata"]["managedFields"]
    assert got["metadata"]["managedFields"] is not created["metadata"]["managedFields"]


def test_request_without_managed_fields_keeps_stored_ones() -> None:
    created = update(None, workload(), "creator")
    sent = copy.deepcopy(created)
    del sent["metadata"]["managedFields"]
    sent["spec"]["queueName"] = "lq2"
    got = update(created, sent, "editor", now=T1)
    assert set(entries(got)) == {"creator", "editor"}


def test_request_can_reset_managed_fields_with_one_empty_entry() -> None:
    created = update(None, workload(), "creator")
    sent = copy.deepcopy(created)
    sent["metadata"]["managedFields"] = [{}]
    got = update(created, sent, "resetter", now=T1)
    assert "managedFields" not in got["metadata"]


def test_request_can_replace_managed_fields() -> None:
    created = update(None, workload(), "creator")
    sent = copy.deepcopy(created)
    sent["metadata"]["managedFields"] = [
        {
            "manager": "mine",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:queueName": {}}},
        }
    ]
    got = update(created, sent, "writer", now=T1)
    assert set(entries(got)) == {"mine"}


def test_only_removals_keep_the_writer_time() -> None:
    created = update(None, workload(), "creator")
    changed = copy.deepcopy(created)
    del changed["metadata"]["labels"]
    got = update(created, changed, "creator", now=T2)
    assert entries(got)["creator"]["time"] == T0
    assert "f:labels" not in entries(got)["creator"]["fieldsV1"].get("f:metadata", {})


def test_at_most_ten_update_managers_oldest_fold_into_ancient_changes() -> None:
    obj = update(None, workload(), "m00", now="2026-01-01T00:00:00Z")
    for i in range(1, 12):
        new = copy.deepcopy(obj)
        new["metadata"]["labels"][f"l{i}"] = "v"
        obj = update(obj, new, f"m{i:02d}", now=f"2026-01-01T00:00:{i:02d}Z")
    managers = [e["manager"] for e in obj["metadata"]["managedFields"]]
    assert len(managers) == 10
    assert "ancient-changes" in managers
    assert "m00" not in managers
    assert "m11" in managers


def test_entries_sorted_apply_first_then_by_time() -> None:
    obj = update(None, workload(), "zz-creator", now=T0)
    config = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w"},
        "spec": {"priority": 5},
    }
    obj = server_side_apply(obj, config, manager="applier", force=False, merge_keys=KEYS, now=T2)
    assert [(e["operation"], e["manager"]) for e in obj["metadata"]["managedFields"]] == [
        ("Apply", "applier"),
        ("Update", "zz-creator"),
    ]


def test_update_inputs_not_mutated() -> None:
    created = update(None, workload(), "creator")
    changed = copy.deepcopy(created)
    changed["spec"]["queueName"] = "x"
    before_old, before_new = copy.deepcopy(created), copy.deepcopy(changed)
    update(created, changed, "w", now=T1)
    assert (created, changed) == (before_old, before_new)


def test_fields_v1_round_trip() -> None:
    raw = {
        "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
        "f:spec": {"f:list": {'k:{"name":"x"}': {".": {}, "f:v": {}}, 'v:"s"': {}}},
    }
    assert encode(decode(raw)) == raw
