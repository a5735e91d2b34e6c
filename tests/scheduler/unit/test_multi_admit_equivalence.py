"""pykueue's deliberate difference from Kueue: many heads per ClusterQueue per ``schedule()``.

Kueue pops one head per ClusterQueue per cycle. pykueue's ``schedule()`` runs Kueue's cycles back
to back inside one call, re-running only cohort trees whose state changed, and stops when none
did. The claim tested here, on random worlds (cohorts, nesting, cohort quota, limits, strategies,
preemption policies, fungibility, priorities, partial admission, fair sharing, a victim already
being evicted): the sequence of admissions
and preemptions equals what repeated one-head-per-cycle scheduling (``heads_per_cycle=1``)
produces, in the same order, and one multi-head call already reaches the fixed point.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.scheduler import FairSharingConfig, ManualClock, Scheduler, SchedulerConfig
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    cohort,
    flavor,
    local_queue,
    namespace,
    workload,
)

POLICIES_WITHIN = ["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
POLICIES_RECLAIM = ["Never", "LowerPriority", "Any"]


@st.composite
def worlds(draw: st.DrawFn) -> dict[str, Any]:
    n_cq = draw(st.integers(1, 4))
    nested = draw(st.booleans())
    cqs = []
    for i in range(n_cq):
        cohort_name = draw(st.sampled_from([None, "a", "b"]))
        flavors = draw(st.sampled_from([["f1"], ["f1", "f2"], ["f2", "f1"]]))
        quotas = []
        for _ in flavors:
            nominal = draw(st.integers(0, 6))
            bl = draw(st.one_of(st.none(), st.integers(0, 4))) if cohort_name else None
            ll = draw(st.one_of(st.none(), st.integers(0, nominal))) if cohort_name else None
            quotas.append((nominal, bl, ll))
        reclaim = draw(st.sampled_from(POLICIES_RECLAIM))
        cqs.append(
            {
                "name": f"cq{i}",
                "cohort": cohort_name,
                "flavors": flavors,
                "quotas": quotas,
                "strategy": draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"])),
                "within": draw(st.sampled_from(POLICIES_WITHIN)),
                "reclaim": reclaim,
                "borrow": draw(st.sampled_from(["Never", "LowerPriority"])) if reclaim != "Never" else "Never",
                "fungibility": draw(
                    st.sampled_from(
                        [
                            ("MayStopSearch", "TryNextFlavor"),
                            ("TryNextFlavor", "TryNextFlavor"),
                            ("MayStopSearch", "MayStopSearch"),
                        ]
                    )
                ),
            }
        )
    n_running = draw(st.integers(0, 4))
    running = []
    for j in range(n_running):
        cq = draw(st.sampled_from(cqs))
        running.append(
            {
                "name": f"r{j}",
                "cq": cq["name"],
                "flavor": cq["flavors"][0],
                "cpu": draw(st.integers(1, 3)),
                "priority": draw(st.integers(0, 3)),
            }
        )
    n_pending = draw(st.integers(1, 12))
    pending = []
    for j in range(n_pending):
        cq = draw(st.sampled_from(cqs))
        count = draw(st.integers(1, 3))
        pending.append(
            {
                "name": f"p{j}",
                "cq": cq["name"],
                "cpu": draw(st.integers(1, 4)),
                "count": count,
                "min": draw(st.one_of(st.none(), st.integers(1, count))),
                "priority": draw(st.integers(0, 3)),
                "created": draw(st.integers(0, 20)),
            }
        )
    return {
        "cqs": cqs,
        "nested": nested,
        "running": running,
        "pending": pending,
        "fair": draw(st.booleans()),
        "pool": draw(st.integers(0, 4)),
        "evicting": draw(st.booleans()),
    }


def build(world: dict[str, Any], heads_per_cycle: int) -> Scheduler:
    config = SchedulerConfig(
        heads_per_cycle=heads_per_cycle, fair_sharing=FairSharingConfig() if world["fair"] else None
    )
    s = Scheduler(config, clock=ManualClock(T0 + 100))
    s.upsert_namespace(namespace("ns"))
    s.upsert_resource_flavor(flavor("f1"))
    s.upsert_resource_flavor(flavor("f2"))
    if world["nested"]:
        s.upsert_cohort(cohort("a", parent="b"))
    if world.get("pool"):
        s.upsert_cohort(
            cohort(
                "b",
                groups=[
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "f1", "resources": [{"name": "cpu", "nominalQuota": str(world["pool"])}]}],
                    }
                ],
            )
        )
    for c in world["cqs"]:
        b = CQ(c["name"]).group("cpu")
        for f, q in zip(c["flavors"], c["quotas"], strict=True):
            b.flavor(f, cpu=q)
        if c["cohort"]:
            b.cohort(c["cohort"])
        b.strategy(c["strategy"]).preemption(c["within"], c["reclaim"], c["borrow"])
        b.fungibility(*c["fungibility"])
        s.upsert_cluster_queue(b.obj())
        s.upsert_local_queue(local_queue("ns", f"lq-{c['name']}", c["name"]))
    for r in world["running"]:
        wl = workload(r["name"], queue=f"lq-{r['cq']}", cpu=str(r["cpu"]), priority=r["priority"], created=T0 - 50)
        first = r is world["running"][0]
        s.upsert_workload(
            admitted(
                wl,
                r["cq"],
                {"cpu": r["flavor"]},
                {"cpu": str(r["cpu"])},
                evicted=first and world.get("evicting", False),
            )
        )
    for p in world["pending"]:
        wl = workload(
            p["name"],
            queue=f"lq-{p['cq']}",
            cpu=str(p["cpu"]),
            count=p["count"],
            min_count=p["min"],
            priority=p["priority"],
            created=T0 + p["created"],
        )
        s.upsert_workload(wl)
    return s


def run(world: dict[str, Any], heads_per_cycle: int, calls: int) -> tuple[list[Any], list[Any], Scheduler]:
    s = build(world, heads_per_cycle)
    admissions: list[Any] = []
    preemptions: list[Any] = []
    for _ in range(calls):
        result = s.schedule()
        admissions.extend(
            (a.namespace, a.name, a.cluster_queue, repr(a.admission), a.borrowing) for a in result.admitted
        )
        preemptions.extend((p.name, p.preemptor_name, p.reason) for p in result.preempted)
    return admissions, preemptions, s


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_multi_head_schedule_equals_one_head_cycles(world: dict[str, Any]) -> None:
    calls = len(world["pending"]) * 2 + 4
    single_admits, single_preempts, _ = run(world, 1, calls)
    multi_admits, multi_preempts, multi = run(world, 0, 1)
    assert multi_admits == single_admits
    assert multi_preempts == single_preempts
    again = multi.schedule()
    assert again.admitted == []
    assert again.preempted == []


def test_one_call_drains_a_deep_queue_that_kueue_drains_one_per_cycle() -> None:
    world = {
        "cqs": [
            {
                "name": "cq0",
                "cohort": None,
                "flavors": ["f1"],
                "quotas": [(10, None, None)],
                "strategy": "BestEffortFIFO",
                "within": "Never",
                "reclaim": "Never",
                "borrow": "Never",
                "fungibility": ("MayStopSearch", "TryNextFlavor"),
            }
        ],
        "nested": False,
        "running": [],
        "fair": False,
        "pool": 0,
        "evicting": False,
        "pending": [
            {"name": f"p{i}", "cq": "cq0", "cpu": 1, "count": 1, "min": None, "priority": 0, "created": i}
            for i in range(12)
        ],
    }
    single = build(world, 1)
    assert len(single.schedule().admitted) == 1
    multi = build(world, 0)
    result = multi.schedule()
    assert [a.name for a in result.admitted] == [f"p{i}" for i in range(10)]
    assert {p.name for p in result.pending} == {"p10", "p11"}
