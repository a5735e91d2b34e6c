"""The visibility API's positions are the scheduler's own order: with three LocalQueues sharing a
ClusterQueue, mixed priorities and both queueing strategies, the workload the engine admits next is
always the first admissible one the API lists, and each LocalQueue's positions count its own only."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.api.meta.errors import NotFound
from pykueue.apiserver.visibility import EngineBackend, PendingQuery
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    apply_admit,
    finished,
    flavor,
    local_queue,
    make_scheduler,
)
from pykueue.testing.builders.scheduler_shortcuts import namespace as make_namespace
from pykueue.testing.builders.scheduler_shortcuts import workload as make_workload

# (name, namespace, local queue, priority, created offset): ties in priority and time included
SUBMISSIONS = [
    ("a-low-1", "ns", "a", 0, 1),
    ("b-high-1", "ns", "b", 10, 2),
    ("c-mid-1", "other", "c", 5, 3),
    ("a-high-2", "ns", "a", 10, 4),
    ("b-low-2", "ns", "b", 0, 5),
    ("c-low-2", "other", "c", 0, 5),
    ("a-mid-3", "ns", "a", 5, 6),
    ("c-high-3", "other", "c", 10, 2),
]
EXPECTED = ["b-high-1", "c-high-3", "a-high-2", "c-mid-1", "a-mid-3", "a-low-1", "b-low-2", "c-low-2"]


def _cluster(strategy: str, extra: tuple[dict[str, Any], ...] = ()) -> tuple[Any, dict[str, dict[str, Any]]]:
    objs: dict[str, dict[str, Any]] = {}
    for name, ns, lq, priority, offset in SUBMISSIONS:
        objs[name] = make_workload(name, queue=lq, namespace=ns, priority=priority, created=T0 + offset)
    for obj in extra:
        objs[obj["metadata"]["name"]] = obj
    s = make_scheduler(
        make_namespace("other"),
        flavor("f"),
        CQ("cq").strategy(strategy).flavor("f", cpu=1).obj(),
        local_queue("ns", "a", "cq"),
        local_queue("ns", "b", "cq"),
        local_queue("other", "c", "cq"),
        *objs.values(),
    )
    return s, objs


def _listed(backend: EngineBackend, **query: Any) -> list[dict[str, Any]]:
    return list(backend.answer(PendingQuery("v1beta2", **query))["items"])


def _admit_one(s: Any, objs: dict[str, dict[str, Any]]) -> list[str]:
    result = s.schedule()
    for admit in result.admitted:
        objs[admit.name] = apply_admit(s, objs[admit.name], admit)
    return [a.name for a in result.admitted]


@pytest.mark.parametrize("strategy", ["BestEffortFIFO", "StrictFIFO"])
def test_each_admission_takes_the_head_the_api_lists(strategy: str) -> None:
    s, objs = _cluster(strategy)
    backend = EngineBackend(s)
    admitted: list[str] = []
    running: str | None = None
    for _ in SUBMISSIONS:
        items = _listed(backend, queue="cq")
        assert [i["positionInClusterQueue"] for i in items] == list(range(len(items)))
        head = items[0]["metadata"]["name"]
        if running is not None:  # free the single cpu: the next cycle admits exactly one workload
            s.upsert_workload(finished(objs[running]))
        got = _admit_one(s, objs)
        assert got == [head], (strategy, items)
        admitted.append(head)
        running = head
        # after a failed attempt of the next head (inadmissible under BestEffortFIFO, requeued
        # under StrictFIFO) the listing keeps the same order
        assert [i["metadata"]["name"] for i in _listed(backend, queue="cq")] == [
            n for n in EXPECTED if n not in admitted
        ]
    assert admitted == EXPECTED


@pytest.mark.parametrize("strategy", ["BestEffortFIFO", "StrictFIFO"])
def test_local_queue_positions_count_only_that_queue(strategy: str) -> None:
    s, _ = _cluster(strategy)
    backend = EngineBackend(s)
    everything = _listed(backend, queue="cq")
    for ns, lq in (("ns", "a"), ("ns", "b"), ("other", "c")):
        mine = _listed(backend, queue=lq, namespace=ns)
        expected = [i for i in everything if i["localQueueName"] == lq and i["metadata"]["namespace"] == ns]
        assert [i["metadata"]["name"] for i in mine] == [i["metadata"]["name"] for i in expected]
        assert [i["positionInLocalQueue"] for i in mine] == list(range(len(mine)))
        assert [i["positionInClusterQueue"] for i in mine] == [i["positionInClusterQueue"] for i in expected]
    c = _listed(backend, queue="c", namespace="other")
    assert [(i["metadata"]["name"], i["priority"], i["positionInClusterQueue"]) for i in c] == [
        ("c-high-3", 10, 1),
        ("c-mid-1", 5, 3),
        ("c-low-2", 0, 7),
    ]


def test_a_head_too_big_blocks_strict_fifo_but_not_best_effort() -> None:
    big = make_workload("big", queue="a", namespace="ns", priority=100, created=T0, cpu="2")
    for strategy, admits in (("BestEffortFIFO", EXPECTED[0]), ("StrictFIFO", None)):
        s, objs = _cluster(strategy, (big,))
        backend = EngineBackend(s)
        assert _listed(backend, queue="cq")[0]["metadata"]["name"] == "big"
        got = _admit_one(s, objs)
        assert got == ([admits] if admits else []), strategy
        # the big head keeps position 0 in both strategies: Kueue lists inadmissible workloads in
        # queue order too
        names = [i["metadata"]["name"] for i in _listed(backend, queue="cq")]
        assert names[0] == "big"
        assert names[1:] == [n for n in EXPECTED if n not in got]


def test_limit_offset_and_unknown_queues() -> None:
    s, _ = _cluster("BestEffortFIFO")
    backend = EngineBackend(s)
    page = _listed(backend, queue="cq", limit=3, offset=2)
    assert [(i["metadata"]["name"], i["positionInClusterQueue"]) for i in page] == [
        ("a-high-2", 2),
        ("c-mid-1", 3),
        ("a-mid-3", 4),
    ]
    assert _listed(backend, queue="cq", offset=100) == []
    with pytest.raises(NotFound, match=r'clusterqueues\.visibility.kueue.x-k8s.io "nope" not found'):
        backend.answer(PendingQuery("v1beta2", "nope"))
    with pytest.raises(NotFound, match=r'localqueues\.visibility.kueue.x-k8s.io "nope" not found'):
        backend.answer(PendingQuery("v1beta2", "nope", "ns"))


@pytest.mark.parametrize("strategy", ["BestEffortFIFO", "StrictFIFO"])
def test_a_page_is_the_same_slice_of_the_whole_listing(strategy: str) -> None:
    s, objs = _cluster(strategy)
    _admit_one(s, objs)  # one admitted, the next head tried and handed back: queued, inadmissible and heap items
    s.schedule()
    whole = s.pending_workloads("cq")
    assert len(whole) == len(SUBMISSIONS) - 1
    for offset in range(len(whole) + 1):
        for limit in (1, 2, 3, 100):
            assert s.pending_workloads("cq", offset, limit) == whole[offset : offset + limit]
            for lq in (("ns", "a"), ("ns", "b"), ("other", "c")):
                mine = [p for p in whole if (p.namespace, p.local_queue) == lq]
                assert s.pending_workloads("cq", offset, limit, lq) == mine[offset : offset + limit]
