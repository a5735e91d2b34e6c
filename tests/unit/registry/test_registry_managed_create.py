"""The create fast path of field ownership gives exactly what the patch library computes."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.registry import fieldmanager, patch
from pykueue.registry.fieldmanager import update_managed_fields

_NOW = "2026-11-30T10:00:00Z"

_OBJECTS: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "uid": "u",
            "resourceVersion": "3",
            "generation": 1,
            "creationTimestamp": _NOW,
            "labels": {"app": "x", "z": "1"},
            "annotations": {"k/v": "w"},
        },
        "data": {"value": "v", "empty": ""},
    },
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bare"}},
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "labels": {}},
        "spec": {
            "queueName": "q",
            "active": None,
            "empty": {},
            "nones": {"a": None},
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}],
        },
    },
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "generateName": "j-"},
        "spec": {"template": {"metadata": {"finalizers": ["x"]}, "spec": {"restartPolicy": "Never"}}},
        "status": {"b": 1, "a": {"y": [1, 2], "x": True}},
    },
]


@pytest.mark.parametrize("obj", _OBJECTS)
def test_create_fast_path_matches_the_library(obj: dict[str, Any]) -> None:
    expected = patch.update_managed_fields(None, obj, manager="m", operation="Update", now=_NOW)
    assert fieldmanager._created(obj, "m", _NOW) is not None  # the fast path is what is tested
    got = update_managed_fields(None, obj, manager="m", now=_NOW)
    assert got == expected
    assert list(got["metadata"]) == list(expected["metadata"])
    if "managedFields" in expected["metadata"]:
        [entry] = got["metadata"]["managedFields"]
        [want] = expected["metadata"]["managedFields"]
        assert list(entry) == list(want)
        assert str(entry["fieldsV1"]) == str(want["fieldsV1"])  # same key order, so the same bytes
    assert "managedFields" not in obj["metadata"]  # input untouched


def test_itemized_metadata_lists_and_requested_entries_use_the_library() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "a", "finalizers": ["x/y"], "ownerReferences": [{"uid": "1", "name": "o"}]},
    }
    assert update_managed_fields(None, obj, manager="m", now=_NOW) == patch.update_managed_fields(
        None, obj, manager="m", operation="Update", now=_NOW
    )
    requested = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "managedFields": [
                {
                    "manager": "other",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {}},
                }
            ],
        },
        "data": {"k": "v"},
    }
    assert update_managed_fields(None, requested, manager="m", now=_NOW) == patch.update_managed_fields(
        None, requested, manager="m", operation="Update", now=_NOW
    )
