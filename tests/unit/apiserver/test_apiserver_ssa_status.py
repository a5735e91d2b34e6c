"""Server-side apply through the status subresource: ownership per manager and subresource."""

from __future__ import annotations

from typing import Any

import yaml
from tests.unit.apiserver.conftest import CQ_PATH, Api, cluster_queue

APPLY = "application/apply-patch+yaml"


def _condition(kind: str, status: str = "True") -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": kind + "Reason",
        "message": f"{kind} says so",
        "lastTransitionTime": "2027-01-15T08:00:00Z",
    }


async def _apply_status(
    api: Api, manager: str, status: dict[str, Any], *, force: bool = False, rv: str | None = None
) -> tuple[int, Any]:
    body: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "status": status,
    }
    if rv is not None:
        body["metadata"]["resourceVersion"] = rv
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    code, answer, _ = await api.request(
        "PATCH", f"{CQ_PATH}/cq/status{query}", raw=yaml.safe_dump(body).encode(), content_type=APPLY
    )
    return code, answer


def _entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", []) if e["operation"] == "Apply"}


async def test_status_apply_keeps_other_managers_conditions(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("cq"))
    code, first = await _apply_status(api, "alpha", {"conditions": [_condition("Alpha")]})
    assert code == 200, first
    assert [c["type"] for c in first["status"]["conditions"]] == ["Alpha"]
    code, second = await _apply_status(api, "beta", {"conditions": [_condition("Beta")]})
    assert code == 200, second
    assert [c["type"] for c in second["status"]["conditions"]] == ["Alpha", "Beta"]
    entries = _entries(second)
    assert entries["alpha"]["subresource"] == "status"
    assert entries["beta"]["subresource"] == "status"
    assert list(entries["beta"]["fieldsV1"]["f:status"]["f:conditions"]) == ['k:{"type":"Beta"}']
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    # the spec is untouched by a status apply, and the main resource's apply leaves status alone
    assert second["spec"] == first["spec"]


async def test_status_apply_removes_a_dropped_field_and_keeps_the_others(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("cq"))
    await _apply_status(api, "alpha", {"conditions": [_condition("Alpha")], "pendingWorkloads": 3})
    await _apply_status(api, "beta", {"conditions": [_condition("Beta")]})
    code, after = await _apply_status(api, "alpha", {"pendingWorkloads": 3})
    assert code == 200, after
    assert [c["type"] for c in after["status"]["conditions"]] == ["Beta"]
    assert after["status"]["pendingWorkloads"] == 3
    assert "f:conditions" not in _entries(after)["alpha"]["fieldsV1"]["f:status"]
    code, got, _ = await api.request("GET", f"{CQ_PATH}/cq")
    assert [c["type"] for c in got["status"]["conditions"]] == ["Beta"]


async def test_status_apply_conflicts_without_force(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("cq"))
    await _apply_status(api, "alpha", {"conditions": [_condition("Alpha")]})
    code, conflict = await _apply_status(api, "beta", {"conditions": [_condition("Alpha", "False")]})
    assert code == 409, conflict
    assert conflict["reason"] == "Conflict"
    assert conflict["message"] == (
        'Apply failed with 1 conflict: conflict with "alpha" with subresource "status": '
        '.status.conditions[type="Alpha"].status'
    )
    assert conflict["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "field": '.status.conditions[type="Alpha"].status',
            "message": 'conflict with "alpha" with subresource "status"',
        }
    ]
    code, forced = await _apply_status(api, "beta", {"conditions": [_condition("Alpha", "False")]}, force=True)
    assert code == 200
    assert forced["status"]["conditions"][0]["status"] == "False"


async def test_status_apply_honours_the_resource_version(api: Api) -> None:
    _, created, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    stale = created["metadata"]["resourceVersion"]
    code, _ = await _apply_status(api, "alpha", {"pendingWorkloads": 1}, rv=stale)
    assert code == 200
    code, answer = await _apply_status(api, "alpha", {"pendingWorkloads": 2}, rv=stale)
    assert code == 409
    assert "the object has been modified" in answer["message"]


async def test_status_update_records_the_subresource(api: Api) -> None:
    _, created, _ = await api.request("POST", CQ_PATH, cluster_queue("cq"))
    code, written, _ = await api.request(
        "PUT", f"{CQ_PATH}/cq/status?fieldManager=writer", {**created, "status": {"pendingWorkloads": 2}}
    )
    assert code == 200
    writer = [e for e in written["metadata"]["managedFields"] if e["manager"] == "writer"]
    assert writer
    assert writer[0]["operation"] == "Update"
    assert writer[0]["subresource"] == "status"


async def test_an_update_after_an_apply_owns_list_items_by_key(api: Api) -> None:
    await api.request("POST", CQ_PATH, cluster_queue("cq"))
    await _apply_status(api, "alpha", {"conditions": [_condition("Alpha")]})
    _, current, _ = await api.request("GET", f"{CQ_PATH}/cq")
    current["status"]["conditions"].append(_condition("Writer"))
    code, written, _ = await api.request("PUT", f"{CQ_PATH}/cq/status?fieldManager=writer", current)
    assert code == 200, written
    writer = next(e for e in written["metadata"]["managedFields"] if e["manager"] == "writer")
    assert list(writer["fieldsV1"]["f:status"]["f:conditions"]) == ['k:{"type":"Writer"}']
    # alpha applies its condition again without force: the writer's item is not alpha's concern
    code, again = await _apply_status(api, "alpha", {"conditions": [_condition("Alpha", "False")]})
    assert code == 200, again
    assert [(c["type"], c["status"]) for c in again["status"]["conditions"]] == [("Alpha", "False"), ("Writer", "True")]
