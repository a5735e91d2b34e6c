"""Status-only re-parses and the pod-set shape cache give exactly what a full parse gives.

The fast paths of ``parse_workload`` (copy the spec part from the previous record; reuse the
parsed pod sets of an equal ``spec.podSets``) are only allowed to save work, never to change a
field: every case below compares every slot of the fast record with a from-scratch parse.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pykueue.api.meta.clock import format_time
from pykueue.scheduler import Scheduler, SchedulerConfig
from pykueue.scheduler.state.workload_info import (
    FINISHED,
    RESERVED,
    ShapeCache,
    StatusUpdate,
    WorkloadInfo,
    parse_workload,
    refresh_reservation,
    status_only_update,
)

T0 = 1_700_000_000.0
API = "kueue.x-k8s.io/v1beta2"


def _wl(cpu: str = "1", count: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {
            "name": "w",
            "namespace": "ns",
            "uid": "u1",
            "creationTimestamp": format_time(T0),
            "resourceVersion": "1",
        },
        "spec": {
            "queueName": "lq",
            "priority": 3,
            "podSets": [
                {
                    "name": "main",
                    "count": count,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]
                        }
                    },
                }
            ],
        },
    }


def _cond(kind: str, status: str = "True", reason: str = "R", at: float = T0 + 5) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": "", "lastTransitionTime": format_time(at)}


ADMISSION = {
    "clusterQueue": "cq",
    "podSetAssignments": [
        {
            "name": "main",
            "flavors": {"cpu": "rf", "memory": "rf"},
            "resourceUsage": {"cpu": "2", "memory": "2Gi"},
            "count": 2,
        }
    ],
}


def _with(obj: dict[str, Any], status: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    if status is not None:
        out["status"] = status
    out["metadata"].update(meta)
    return out


def _fields(wl: WorkloadInfo) -> dict[str, Any]:
    out = {name: getattr(wl, name) for name in WorkloadInfo.__slots__ if name not in ("obj", "podsets")}
    out["podsets"] = [(ps.name, ps.count, ps.min_count, ps.per_pod, ps.reclaimable, ps.match_key) for ps in wl.podsets]
    out["requests"] = wl.resource_requests()
    return out


BASE = _wl()
CASES = {
    "echoed admission": _with(
        BASE, {"admission": ADMISSION, "conditions": [_cond("QuotaReserved"), _cond("Admitted")]}
    ),
    "reserved, not admitted": _with(BASE, {"admission": ADMISSION, "conditions": [_cond("QuotaReserved")]}),
    "finished": _with(BASE, {"admission": ADMISSION, "conditions": [_cond("QuotaReserved"), _cond("Finished")]}),
    "evicted by pods-ready timeout": _with(
        BASE,
        {
            "admission": ADMISSION,
            "conditions": [
                _cond("QuotaReserved"),
                _cond("Evicted", reason="PodsReadyTimeout", at=T0 + 9),
                _cond("PodsReady"),
            ],
        },
    ),
    "requeued false with backoff": _with(
        BASE, {"conditions": [_cond("Requeued", "False")], "requeueState": {"requeueAt": format_time(T0 + 60)}}
    ),
    "reclaimable pods": _with(
        BASE,
        {
            "admission": ADMISSION,
            "conditions": [_cond("QuotaReserved")],
            "reclaimablePods": [{"name": "main", "count": 1}],
        },
    ),
    "failed admission check": _with(BASE, {"admissionChecks": [{"name": "ac", "state": "Retry"}]}),
    "priority boost annotation": _with(BASE, {}, annotations={"kueue.x-k8s.io/priority-boost": "5"}),
    "gated annotation": _with(BASE, {}, annotations={"kueue.x-k8s.io/admission-gated-by": "x"}),
    "new uid": _with(BASE, {}, uid="u2"),
    "spec changed": _with(_wl(cpu="3"), {}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_update_parsed_from_previous_equals_full_parse(name: str) -> None:
    new = CASES[name]
    for previous_obj in (BASE, CASES["echoed admission"], CASES["reclaimable pods"]):
        previous = parse_workload(previous_obj)
        fast = parse_workload(new, previous=previous, shapes=ShapeCache())
        assert _fields(fast) == _fields(parse_workload(new)), (name, previous_obj.get("status"))


def test_reused_usage_belongs_to_the_same_admission_only() -> None:
    reserved = parse_workload(CASES["echoed admission"])
    other = copy.deepcopy(CASES["echoed admission"])
    other["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"] = "4"
    fast = parse_workload(other, previous=reserved)
    assert fast.state == RESERVED
    assert fast.usage[("rf", "cpu")] == 4000
    assert reserved.usage[("rf", "cpu")] == 2000


def test_shape_cache_shares_pod_sets_of_equal_templates_only() -> None:
    shapes = ShapeCache()
    a = parse_workload(_wl(), shapes=shapes)
    b = parse_workload(_wl(), shapes=shapes)  # equal, not identical, pod sets
    c = parse_workload(_wl(cpu="2"), shapes=shapes)
    assert b.podsets is a.podsets
    assert b.shape_hash == a.shape_hash
    assert c.podsets is not a.podsets
    assert c.podsets[0].per_pod["cpu"] == 2000
    assert c.shape_hash != a.shape_hash
    reclaim = _with(_wl(), {"reclaimablePods": [{"name": "main", "count": 1}]})
    d = parse_workload(reclaim, shapes=shapes)
    assert d.podsets is not a.podsets
    assert d.podsets[0].effective_count == 1


def test_shape_cache_is_bounded() -> None:
    shapes = ShapeCache(limit=4)
    for i in range(20):
        parse_workload(_wl(cpu=str(i + 1)), shapes=shapes)
    assert len(shapes._by_text) <= 4
    assert len(shapes._by_id) <= 4


def test_finished_workload_is_released_and_forgotten() -> None:
    s = Scheduler(SchedulerConfig())
    s.upsert_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    s.upsert_resource_flavor({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "rf"}})
    s.upsert_cluster_queue(
        {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "rf",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "2"},
                                    {"name": "memory", "nominalQuota": "2Gi"},
                                ],
                            }
                        ],
                    }
                ],
            },
        }
    )
    s.upsert_local_queue(
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "ns"},
            "spec": {"clusterQueue": "cq"},
        }
    )
    s.upsert_workload(BASE)
    assert [a.name for a in s.schedule().admitted] == ["w"]
    s.upsert_workload(_with(CASES["echoed admission"], resourceVersion="2"))
    assert s.cluster_queue_usage("cq").admitted_workloads == 1
    s.upsert_workload(_with(CASES["finished"], resourceVersion="3"))
    assert parse_workload(CASES["finished"]).state == FINISHED
    usage = s.cluster_queue_usage("cq")
    assert usage.reserving_workloads == 0
    assert usage.reservation["rf"]["cpu"] == (0, 0)
    assert ("ns", "w") not in s.workloads
    s.upsert_workload(_with(BASE, resourceVersion="4"))  # un-finished (e.g. restarted): queued again
    assert [a.name for a in s.schedule().admitted] == ["w"]


def test_local_queue_pending_count_drops_when_admitted() -> None:
    """LocalQueue pendingWorkloads counts only what still waits (it used to keep admitted heads)."""
    s = Scheduler(SchedulerConfig())
    s.upsert_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    s.upsert_resource_flavor({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "rf"}})
    s.upsert_cluster_queue(
        {
            "apiVersion": API,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "rf",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "4"},
                                    {"name": "memory", "nominalQuota": "4Gi"},
                                ],
                            }
                        ],
                    }
                ],
            },
        }
    )
    s.upsert_local_queue(
        {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "ns"},
            "spec": {"clusterQueue": "cq"},
        }
    )
    for i in range(3):
        obj = _with(BASE, name=f"w{i}", uid=f"u{i}")
        s.upsert_workload(obj)
    assert s.local_queue_usage("ns", "lq").pending_workloads == 3
    result = s.schedule()
    assert len(result.admitted) == 2  # 2 cpu each, 4 cpu of quota
    assert s.local_queue_usage("ns", "lq").pending_workloads == 1
    assert s.cluster_queue_usage("cq").pending_workloads == 1
    for adm in result.admitted:  # the status write-back keeps the count
        s.upsert_workload(
            _with(
                BASE,
                {"admission": adm.admission, "conditions": [_cond("QuotaReserved")]},
                name=adm.name,
                uid="u" + adm.name[1:],
            )
        )
    assert s.local_queue_usage("ns", "lq").pending_workloads == 1


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_refresh_equals_full_parse_or_declines_untouched(name: str) -> None:
    """refresh_reservation either makes the record equal a full parse of the new object, or
    returns False and leaves every field as it was (the engine then parses a new record)."""
    new = CASES[name]
    for previous_obj in (CASES["echoed admission"], CASES["reserved, not admitted"], CASES["reclaimable pods"]):
        record = parse_workload(previous_obj)
        before = _fields(record)
        if refresh_reservation(record, new):
            assert record.obj is new
            assert _fields(record) == _fields(parse_workload(new)), (name, previous_obj.get("status"))
            assert record.state == RESERVED
        else:
            assert _fields(record) == before
            assert record.obj is previous_obj


def test_in_place_refresh_applies_to_the_echo_of_the_same_admission() -> None:
    record = parse_workload(CASES["reserved, not admitted"])
    usage = record.usage
    assert refresh_reservation(record, copy.deepcopy(CASES["echoed admission"]))
    assert record.admitted
    assert record.usage is usage  # same admission: usage not re-parsed
    assert not refresh_reservation(record, CASES["finished"])  # not a reservation any more


def test_malformed_echo_raises_and_leaves_the_record_and_engine_unchanged() -> None:
    from pykueue.scheduler import InvalidObject
    from pykueue.testing.builders.scheduler_shortcuts import (
        CQ,
        apply_admit,
        flavor,
        local_queue,
        make_scheduler,
        workload,
    )

    wl = workload("w", cpu="1")
    s = make_scheduler(flavor("rf"), CQ("cq").flavor("rf", cpu=4).obj(), local_queue("ns", "lq", "cq"), wl)
    [admit] = s.schedule().admitted
    echoed = apply_admit(s, wl, admit)
    record = s.workloads[("ns", "w")]
    before = _fields(record)
    bad = copy.deepcopy(echoed)
    bad["status"]["conditions"].append("not a condition")
    with pytest.raises(InvalidObject):
        s.upsert_workload(bad)
    assert s.workloads[("ns", "w")] is record
    assert _fields(record) == before
    assert record.obj is echoed


def test_echo_flipping_admitted_moves_admitted_usage_in_place() -> None:
    from pykueue.testing.builders.scheduler_shortcuts import CQ, flavor, local_queue, make_scheduler, workload

    wl = workload("w", cpu="2")
    s = make_scheduler(flavor("rf"), CQ("cq").flavor("rf", cpu=4).obj(), local_queue("ns", "lq", "cq"), wl)
    [admit] = s.schedule().admitted
    record = s.workloads[("ns", "w")]
    when = format_time(T0)

    def echo(admitted: str) -> dict[str, Any]:
        return {
            **wl,
            "status": {
                "admission": admit.admission,
                "conditions": [
                    {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "lastTransitionTime": when},
                    {"type": "Admitted", "status": admitted, "reason": "Admitted", "lastTransitionTime": when},
                ],
            },
        }

    s.upsert_workload(echo("False"))
    assert s.workloads[("ns", "w")] is record  # updated in place
    usage = s.cluster_queue_usage("cq")
    assert usage.admitted_workloads == 0
    assert usage.reservation["rf"]["cpu"] == (2000, 0)
    s.upsert_workload(echo("True"))
    usage = s.cluster_queue_usage("cq")
    assert s.workloads[("ns", "w")] is record
    assert usage.admitted_workloads == 1
    assert usage.usage["rf"]["cpu"] == (2000, 0)
    s.upsert_workload(echo("False"))
    assert s.cluster_queue_usage("cq").admitted_workloads == 0


def test_status_only_update_tells_finished_apart_without_touching_the_record() -> None:
    record = parse_workload(CASES["echoed admission"])
    before = _fields(record)
    assert status_only_update(record, CASES["finished"]) is StatusUpdate.FINISHED
    assert _fields(record) == before
    assert status_only_update(record, CASES["spec changed"]) is StatusUpdate.REPARSE  # not status-only
    assert status_only_update(record, CASES["echoed admission"], may_refresh=False) is StatusUpdate.REPARSE
    assert _fields(record) == before
