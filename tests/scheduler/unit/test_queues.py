"""Queueing and requeuing: heap order, StrictFIFO vs BestEffortFIFO, inadmissible parking and
requeue triggers, backoff, LocalQueue routing and stop policies, equivalence hashing."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pykueue.api.meta.clock import format_time
from pykueue.scheduler import ManualClock, SchedulerConfig
from pykueue.scheduler.state.pending_queues import ClusterQueueQueue
from pykueue.scheduler.state.workload_info import WorkloadInfo
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    by_name,
    finished,
    flavor,
    local_queue,
    make_scheduler,
    namespace,
    workload,
)

LQ = local_queue("ns", "lq", "cq")
RF = flavor("f")


def names(infos: list[Any]) -> list[str]:
    return [i.name for i in infos]


def test_heap_order_priority_then_timestamp_then_uid() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=0).obj(),
        LQ,
        workload("old-low", priority=1, created=T0),
        workload("new-high", priority=5, created=T0 + 10),
        workload("tie-b", priority=1, created=T0 + 1, uid="b"),
        workload("tie-a", priority=1, created=T0 + 1, uid="a"),
    )
    assert names(s.pending_workloads("cq")) == ["new-high", "old-low", "tie-a", "tie-b"]


def test_priority_boost_annotation_adds_to_priority() -> None:
    boosted = workload("boosted", priority=1, created=T0 + 5)
    boosted["metadata"]["annotations"] = {"kueue.x-k8s.io/priority-boost": "10"}
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=0).obj(), LQ, workload("plain", priority=5), boosted)
    assert names(s.pending_workloads("cq")) == ["boosted", "plain"]


def test_pods_ready_timeout_eviction_time_orders_the_requeued_workload() -> None:
    evicted = workload("evicted", created=T0)
    evicted["status"] = {
        "conditions": [
            {
                "type": "Evicted",
                "status": "True",
                "reason": "PodsReadyTimeout",
                "lastTransitionTime": format_time(T0 + 100),
            }
        ]
    }
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=0).obj(), LQ, evicted, workload("later", created=T0 + 50))
    assert names(s.pending_workloads("cq")) == ["later", "evicted"]


def test_positions_in_cluster_queue_and_local_queue() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=0).obj(),
        LQ,
        local_queue("ns", "lq2", "cq"),
        workload("a", created=T0),
        workload("b", queue="lq2", created=T0 + 1),
        workload("c", created=T0 + 2),
    )
    got = [
        (p.name, p.local_queue, p.position_in_cluster_queue, p.position_in_local_queue)
        for p in s.pending_workloads("cq")
    ]
    assert got == [("a", "lq", 0, 0), ("b", "lq2", 1, 0), ("c", "lq", 2, 1)]


def test_best_effort_fifo_skips_a_head_that_does_not_fit() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=2).obj(),
        LQ,
        workload("big", cpu="3", created=T0),
        workload("small", cpu="1", created=T0 + 1),
    )
    result = s.schedule()
    assert names(result.admitted) == ["small"]
    assert by_name(result.pending)["big"].reason == "ExceedsMaxQuota"


def test_strict_fifo_head_blocks_everything_behind_it() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=2).strategy("StrictFIFO").obj(),
        LQ,
        workload("big", cpu="3", created=T0),
        workload("small", cpu="1", created=T0 + 1),
    )
    result = s.schedule()
    assert result.admitted == []
    assert names(result.pending) == ["big"]
    assert names(s.pending_workloads("cq")) == ["big", "small"]
    assert s.schedule().admitted == []


def test_strict_fifo_namespace_mismatch_does_not_block() -> None:
    cq = CQ("cq").flavor("f", cpu=2).strategy("StrictFIFO").set("namespaceSelector", {"matchLabels": {"team": "a"}})
    s = make_scheduler(
        namespace("ns", team="b"),
        namespace("ok", team="a"),
        RF,
        cq.obj(),
        LQ,
        local_queue("ok", "lq", "cq"),
        workload("wrong-ns", created=T0),
        workload("right-ns", namespace="ok", created=T0 + 1),
    )
    result = s.schedule()
    assert names(result.admitted) == ["right-ns"]
    pending = by_name(result.pending)["wrong-ns"]
    assert (pending.reason, pending.message) == (
        "Misconfigured",
        "Workload namespace doesn't match ClusterQueue selector",
    )


def test_nil_namespace_selector_matches_no_namespace() -> None:
    cq = CQ("cq").flavor("f", cpu=2)
    del cq.spec["namespaceSelector"]
    s = make_scheduler(RF, cq.obj(), LQ, workload("w"))
    assert by_name(s.schedule().pending)["w"].reason == "Misconfigured"


def test_finished_workload_requeues_inadmissible_workloads_of_its_cohort() -> None:
    running = admitted(workload("running", cpu="2"), "other", {"cpu": "f"}, {"cpu": "2"})
    s = make_scheduler(
        RF,
        CQ("cq").cohort("co").flavor("f", cpu=1).obj(),
        CQ("other").cohort("co").flavor("f", cpu=1).obj(),
        LQ,
        local_queue("ns", "lq-other", "other"),
        running,
        workload("waiting", cpu="2"),
    )
    assert s.schedule().admitted == []
    assert s.schedule().pending == []  # parked as inadmissible: not re-evaluated without a trigger
    s.upsert_workload(finished(running))
    assert names(s.schedule().admitted) == ["waiting"]


def test_unrelated_cohort_events_do_not_requeue() -> None:
    running = admitted(workload("running", cpu="2", queue="lq-x"), "x", {"cpu": "f"}, {"cpu": "2"})
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=1).obj(),
        CQ("x").flavor("f", cpu=2).obj(),
        LQ,
        local_queue("ns", "lq-x", "x"),
        running,
        workload("waiting", cpu="2"),
    )
    assert s.schedule().admitted == []
    s.upsert_workload(finished(running))
    assert s.schedule().pending == []


def test_requeue_at_in_the_future_parks_until_the_clock_passes_it() -> None:
    w = workload("backoff")
    w["status"] = {"requeueState": {"count": 1, "requeueAt": format_time(T0 + 2000)}}
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=2).obj(), LQ, w, now=T0 + 1000)
    assert s.schedule().admitted == []
    assert names(s.pending_workloads("cq")) == ["backoff"]
    assert isinstance(s.clock, ManualClock)
    s.clock.advance(999)
    assert s.schedule().admitted == []
    s.clock.advance(1)
    assert names(s.schedule().admitted) == ["backoff"]


def test_requeued_false_blocks_until_the_condition_changes() -> None:
    w = workload("w")
    w["status"] = {"conditions": [{"type": "Requeued", "status": "False", "reason": "PodsReadyTimeout"}]}
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=2).obj(), LQ, w)
    assert s.schedule().admitted == []
    w["status"] = {"conditions": [{"type": "Requeued", "status": "True", "reason": "BackoffFinished"}]}
    s.upsert_workload(w)
    assert names(s.schedule().admitted) == ["w"]


def test_inactive_and_gated_workloads_are_not_queued() -> None:
    gated = workload("gated")
    gated["metadata"]["annotations"] = {"kueue.x-k8s.io/admission-gated-by": "someone"}
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=4).obj(), LQ, workload("inactive", active=False), gated)
    assert s.schedule().admitted == []
    assert s.pending_workloads("cq") == []


def test_missing_local_queue_and_cluster_queue_are_reported() -> None:
    s = make_scheduler(
        RF, workload("no-lq", queue="nope"), local_queue("ns", "dangling", "no-cq"), workload("no-cq", queue="dangling")
    )
    pending = by_name(s.schedule().pending)
    assert (pending["no-lq"].reason, pending["no-lq"].message) == ("Misconfigured", "LocalQueue nope doesn't exist")
    assert pending["no-cq"].message == "ClusterQueue no-cq doesn't exist"
    s.upsert_cluster_queue(CQ("no-cq").flavor("f", cpu=4).obj())
    assert names(s.schedule().admitted) == ["no-cq"]


def test_stopped_local_queue_holds_its_workloads() -> None:
    s = make_scheduler(
        RF, CQ("cq").flavor("f", cpu=4).obj(), local_queue("ns", "lq", "cq", stopPolicy="Hold"), workload("w")
    )
    assert by_name(s.schedule().pending)["w"].message == "LocalQueue lq is stopped"
    s.upsert_local_queue(LQ)
    assert names(s.schedule().admitted) == ["w"]


def test_stopped_cluster_queue_is_inactive() -> None:
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=4).set("stopPolicy", "Hold").obj(), LQ, workload("w"))
    assert s.cluster_queue_active("cq") == (False, "Stopped", "Can't admit new workloads: is stopped.")
    assert s.schedule().admitted == []


def test_equivalent_workloads_are_parked_together_after_a_no_fit() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=1).obj(),
        LQ,
        *[workload(f"w{i}", cpu="2", created=T0 + i) for i in range(4)],
        workload("fits", cpu="1", created=T0 + 10),
    )
    result = s.schedule()
    assert names(result.admitted) == ["fits"]
    pending = by_name(result.pending)
    assert pending["w0"].message.startswith("couldn't assign flavors")
    for name in ("w1", "w2", "w3"):
        assert pending[name].message == "Bypassed scheduling evaluation because an equivalent workload recently failed"
        assert pending[name].reason == pending["w0"].reason


def test_without_equivalence_hashing_each_workload_is_evaluated() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=1).obj(),
        LQ,
        *[workload(f"w{i}", cpu="2", created=T0 + i) for i in range(3)],
        config=SchedulerConfig(equivalence_hashing=False),
    )
    assert all(p.message.startswith("couldn't assign") for p in s.schedule().pending)


def test_status_writes_of_an_unchanged_workload_keep_it_inadmissible() -> None:
    w = workload("w", cpu="2")
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, w)
    [pending] = s.schedule().pending
    w["status"] = {
        "conditions": [
            {"type": "QuotaReserved", "status": "False", "reason": pending.reason, "message": pending.message}
        ]
    }
    s.upsert_workload(w)
    assert s.schedule().pending == []


def test_forget_releases_assumed_quota_and_requeues() -> None:
    s = make_scheduler(
        RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, workload("a", created=T0), workload("b", created=T0 + 1)
    )
    assert names(s.schedule().admitted) == ["a"]
    assert s.cluster_queue_usage("cq").reserving_workloads == 1
    s.forget("ns", "a")
    assert s.cluster_queue_usage("cq").reserving_workloads == 0
    assert names(s.schedule().admitted) == ["a"]


def test_usage_counts_reserving_and_admitted_separately() -> None:
    reserving = admitted(workload("r", cpu="1"), "cq", {"cpu": "f"}, {"cpu": "1"})
    reserving["status"]["conditions"][1]["status"] = "False"
    s = make_scheduler(
        RF,
        CQ("cq").cohort("co").flavor("f", cpu=1).obj(),
        CQ("x").cohort("co").flavor("f", cpu=5).obj(),
        LQ,
        reserving,
        admitted(workload("a", cpu="2"), "cq", {"cpu": "f"}, {"cpu": "2"}),
    )
    usage = s.cluster_queue_usage("cq")
    assert usage.reservation == {"f": {"cpu": (3000, 2000)}}
    assert usage.usage == {"f": {"cpu": (2000, 1000)}}
    assert (usage.reserving_workloads, usage.admitted_workloads) == (2, 1)
    lq = s.local_queue_usage("ns", "lq")
    assert lq.reservation == {"f": {"cpu": (3000, 0)}}
    assert (lq.reserving_workloads, lq.admitted_workloads) == (2, 1)


def drain(n: int, cqs: int = 50) -> tuple[int, Any]:
    """The bench's loop: admitted work finishes one cycle later and frees its quota."""
    objs: list[dict[str, Any]] = [RF]
    for i in range(cqs):
        objs.append(CQ(f"cq{i}").cohort(f"co{i % 5}").flavor("f", cpu=4).obj())
        objs.append(local_queue("ns", f"lq{i}", f"cq{i}"))
    s = make_scheduler(*objs)
    wls = {f"w{j}": workload(f"w{j}", queue=f"lq{j % cqs}", created=T0 + j) for j in range(n)}
    for wl in wls.values():
        s.upsert_workload(wl)
    running: list[dict[str, Any]] = []
    admitted_total = 0
    while admitted_total < n:
        for wl in running:
            s.upsert_workload(finished(wl))
        running = []
        result = s.schedule()
        for a in result.admitted:
            done = {
                **wls[a.name],
                "status": {
                    "admission": a.admission,
                    "conditions": [{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}],
                },
            }
            s.upsert_workload(done)
            running.append(done)
        admitted_total += len(result.admitted)
        assert result.admitted, "the stream must keep draining"
    return admitted_total, s.stats()


def test_work_per_admission_is_flat_as_the_backlog_grows() -> None:
    small_n, small = drain(1000)
    big_n, big = drain(8000)
    # Per cycle each CQ admits 4 and evaluates one more head, whose failure parks its whole
    # shape at once: at most 5/4 evaluations and 3 heap operations per admission, whatever the
    # backlog (re-queueing every waiting workload one by one would grow with it).
    for n, stats in ((small_n, small), (big_n, big)):
        assert stats.nominations / n <= 1.25
        assert stats.queue_operations / n <= 3.0
    assert big.queue_operations / big_n <= small.queue_operations / small_n * 1.2


def test_a_replay_of_the_object_admitted_from_does_not_release_the_assumed_quota() -> None:
    w = workload("w", cpu="1")
    w["metadata"]["resourceVersion"] = "7"
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, w, workload("other", cpu="1", created=T0 + 1))
    assert names(s.schedule().admitted) == ["w"]
    s.upsert_workload(w)  # an informer replay of version 7: still pending there, but we admitted it
    assert s.schedule().admitted == []
    assert s.cluster_queue_usage("cq").reserving_workloads == 1
    newer = {**w, "metadata": {**w["metadata"], "resourceVersion": "8"}}
    s.upsert_workload(newer)  # a newer version that is pending: the admission really did not stick
    assert s.cluster_queue_usage("cq").reserving_workloads == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.just("push"), st.integers(0, 3), st.integers(0, 20), st.integers(0, 1)
            ),  # priority, time, shape
            st.tuples(st.just("pop"), st.just(0), st.just(0), st.just(0)),
            st.tuples(st.just("discard"), st.integers(0, 40), st.just(0), st.just(0)),
        ),
        max_size=80,
    )
)
def test_queue_pops_in_heap_order_whatever_the_arrival_order(ops: list[tuple[str, int, int, int]]) -> None:
    """In-order arrivals take a sorted run and the rest a heap: the pop order must still be
    priority desc, timestamp, uid, as with one heap (also across pushes, pops and discards)."""
    q = ClusterQueueQueue("cq")
    model: dict[tuple[str, str], tuple[int, float, str]] = {}
    pushed = 0
    for op, a, b, shape in ops:
        if op == "push":
            name = f"wl-{pushed:03d}"
            pushed += 1
            wl = WorkloadInfo.__new__(WorkloadInfo)
            wl.namespace, wl.name, wl.key, wl.uid = "ns", name, ("ns", name), name
            wl.priority, wl.timestamp, wl.shape_hash = a, float(b), shape
            q.push(wl)
            model[wl.key] = (-a, float(b), name)
        elif op == "discard":
            key = ("ns", f"wl-{a:03d}")
            assert (q.discard(key) is not None) == (key in model)
            model.pop(key, None)
        else:
            got = q.pop()
            if not model:
                assert got is None
                continue
            expected = min(model, key=model.__getitem__)
            assert got is not None
            assert got.key == expected
            del model[expected]
    assert q.active == len(model)


def test_activity_follows_flavor_and_cluster_queue_changes_between_cycles() -> None:
    """The engine memoises which CQs are active between cycles; every change that can flip one
    (a flavor deleted or created, a CQ stopped or resumed) must still be seen by the next cycle."""
    s = make_scheduler(RF, CQ("cq").flavor("f", cpu=1).obj(), LQ, workload("a", created=T0))
    assert names(s.schedule().admitted) == ["a"]
    s.delete_resource_flavor("f")
    s.upsert_workload(workload("b", created=T0 + 1))
    result = s.schedule()
    assert result.admitted == []
    assert [(p.name, p.message) for p in result.pending] == [("b", "ClusterQueue cq is inactive")]
    s.upsert_resource_flavor(RF)
    s.upsert_workload(finished(admitted(workload("a", created=T0), "cq", {"cpu": "f"}, {"cpu": "1"})))
    assert names(s.schedule().admitted) == ["b"]
    s.upsert_cluster_queue(CQ("cq").flavor("f", cpu=2).set("stopPolicy", "Hold").obj())  # c would fit
    s.upsert_workload(workload("c", created=T0 + 2))
    assert s.schedule().admitted == []
    s.upsert_cluster_queue(CQ("cq").flavor("f", cpu=2).obj())
    assert names(s.schedule().admitted) == ["c"]


def test_deleting_a_cluster_queue_unqueues_its_workloads_through_the_queue_manager() -> None:
    """The queue manager drops the CQ's queue, its workloads' locations and their LocalQueue's
    pending count in one method; the engine reports each as Misconfigured and requeues them when
    the CQ comes back."""
    cq = CQ("cq").flavor("f", cpu=0).obj()
    s = make_scheduler(RF, cq, LQ, workload("a", created=T0), workload("b", created=T0 + 1))
    assert s.local_queue_usage("ns", "lq").pending_workloads == 2
    pushes = s.stats().queue_operations
    s.delete_cluster_queue("cq")
    assert "cq" not in s.queues.cqs
    assert not s.queues.location
    assert s.queues.local_queues[("ns", "lq")].pending == 0
    assert s.stats().queue_operations == pushes  # the deleted queue's pushes stay counted
    result = s.schedule()
    assert {p.name: p.reason for p in result.pending} == {"a": "Misconfigured", "b": "Misconfigured"}
    s.upsert_cluster_queue(cq)
    assert names(s.pending_workloads("cq")) == ["a", "b"]
    assert s.queues.local_queues[("ns", "lq")].pending == 2
