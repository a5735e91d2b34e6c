"""A preemption search is not run again until something it reads changes.

The engine remembers, per question (preemptor record, ClusterQueue, requests), the answers of the
searches made while a round nominates, with the shape version and the cohort tree's epoch they ran
at. A StrictFIFO head without candidates, and a preemptor waiting for its victims, are nominated
again at every cycle; these tests count the searches and, for each thing the search depends on (the
workloads holding quota in the tree, the ClusterQueue's policy, the preemptor's own record, an issued
preemption), change it and require the decision a stale memory would have got wrong.
"""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.scheduler.algorithm import preemption
from pykueue.scheduler.algorithm.flavor_assigner import FlavorAssigner, Mode
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    flavor,
    local_queue,
    make_scheduler,
    workload,
)


def _queue(within: str = "LowerPriority") -> dict[str, Any]:
    """cq: 1 cpu, StrictFIFO (a head that fails stays the head), preemption within the queue."""
    return CQ("cq").strategy("StrictFIFO").flavor("f", cpu=1).preemption(within=within).obj()


def _running(name: str, priority: int, created: float = T0) -> dict[str, Any]:
    return admitted(
        workload(name, queue="lq", cpu="1", priority=priority, created=created),
        "cq",
        {"cpu": "f"},
        {"cpu": "1"},
        at=T0 + 5,
    )


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the preemptors each real preemption search ran for."""
    seen: list[str] = []
    real = preemption.classic_targets  # type: ignore[attr-defined]  # patched where it is looked up

    def counting(ctx: preemption.PreemptionCtx, **kwargs: Any) -> Any:
        seen.append(ctx.wl.name)
        return real(ctx, **kwargs)

    monkeypatch.setattr(preemption, "classic_targets", counting)
    return seen


def _stuck() -> Any:
    """The queue full with r (priority 5, created after w); w (priority 5) waits: nothing of lower
    priority to preempt."""
    s = make_scheduler(flavor("f"), _queue(), local_queue("ns", "lq", "cq"), _running("r", 5, T0 + 3))
    s.upsert_workload(workload("w", queue="lq", cpu="1", priority=5, created=T0 + 2))
    return s


def _waits(result: Any) -> bool:
    return not result.admitted and not result.preempted and [p.name for p in result.pending] == ["w"]


def test_a_fruitless_search_is_not_repeated_while_nothing_changes(searches: list[str]) -> None:
    s = _stuck()
    assert _waits(s.schedule())
    assert searches == ["w"]
    for _ in range(3):
        assert _waits(s.schedule())  # the same decision each cycle
    assert searches == ["w"]  # from memory


def test_a_workload_admitted_in_the_tree_is_searched_for(searches: list[str]) -> None:
    s = _stuck()
    assert _waits(s.schedule())
    s.delete_workload("ns", "r")
    s.upsert_workload(_running("low", 1))  # r's place taken by a lower-priority workload: a victim
    result = s.schedule()
    assert [p.name for p in result.preempted] == ["low"]
    assert searches == ["w", "w", "w"]  # searched again, and once more in the round after the issue


def test_a_changed_policy_is_searched_for(searches: list[str]) -> None:
    s = _stuck()
    assert _waits(s.schedule())
    s.upsert_cluster_queue(_queue(within="LowerOrNewerEqualPriority"))  # r (newer, same priority) qualifies
    result = s.schedule()
    assert [p.name for p in result.preempted] == ["r"]


def test_a_new_record_of_the_preemptor_is_searched_for(searches: list[str]) -> None:
    s = _stuck()
    assert _waits(s.schedule())
    s.upsert_workload(workload("w", queue="lq", cpu="1", priority=9, created=T0 + 2))  # priority raised
    result = s.schedule()
    assert [p.name for p in result.preempted] == ["r"]


def test_an_issued_preemption_bumps_the_tree() -> None:
    """An issued preemption reorders the tree's candidates (its victim goes first): the epoch moves."""
    s = make_scheduler(flavor("f"), _queue(), local_queue("ns", "lq", "cq"), _running("low", 1))
    s.upsert_workload(workload("w", queue="lq", cpu="1", priority=5, created=T0 + 2))
    s.cache.ensure_fresh()
    before = s.cache.cqs["cq"].root().epoch
    assert [p.name for p in s.schedule().preempted] == ["low"]
    assert s.cache.cqs["cq"].root().epoch > before


def test_a_preemptor_waiting_for_its_victim_is_not_searched_again(searches: list[str]) -> None:
    """w preempts low and waits (low still holds its quota): the round after the preemption was
    issued searches once more (the issue moved the epoch), later cycles answer from memory. When
    low goes and low2 takes its place, the remembered victim (low) is stale: w must preempt low2."""
    s = make_scheduler(flavor("f"), _queue(), local_queue("ns", "lq", "cq"), _running("low", 1))
    s.upsert_workload(workload("w", queue="lq", cpu="1", priority=5, created=T0 + 2))
    assert [p.name for p in s.schedule().preempted] == ["low"]
    for _ in range(3):
        result = s.schedule()
        assert not result.preempted  # issued already: waits for low to leave
        assert not result.admitted
    assert searches == ["w", "w"]
    s.delete_workload("ns", "low")
    s.upsert_workload(_running("low2", 1))
    assert [p.name for p in s.schedule().preempted] == ["low2"]


def _borrowed_cohort() -> list[dict[str, Any]]:
    """cq (nominal 2, reclaimWithinCohort Any) and other (nominal 0) in cohort co: other's 1-cpu
    workloads a and b borrow all of cq's quota."""
    objs: list[dict[str, Any]] = [flavor("f")]
    for name, nominal in (("cq", 2), ("other", 0)):
        objs += [
            CQ(name).set("cohortName", "co").flavor("f", cpu=nominal).preemption(reclaim="Any").obj(),
            local_queue("ns", f"lq-{name}", name),
        ]
    return objs


def _borrower(name: str, reserved_at: float, evicted: bool = False) -> dict[str, Any]:
    return admitted(
        workload(name, queue="lq-other", cpu="1", priority=0),
        "other",
        {"cpu": "f"},
        {"cpu": "1"},
        at=reserved_at,
        evicted=evicted,
    )


def _asked(s: Any) -> list[str]:
    """The victims of w as a round's nomination asks for them (answers may be remembered)."""
    s.cache.ensure_fresh()
    cq = s.cache.cqs["cq"]
    wl = s.workloads[("ns", "w")]
    s.preemptor.committed = True
    try:
        assigner = FlavorAssigner(wl, cq, s.cache.flavors, s.preemptor.oracle, eligibility=s.eligibility)
        assignment = assigner.assign()
        assert assignment.mode == Mode.PREEMPT
        found = s.preemptor.targets(s.preemptor.context(wl, cq, assignment.usage, assignment.preempt_frs()))
    finally:
        s.preemptor.committed = False
    return [t.wl.name for t in found]


@pytest.mark.parametrize(
    ("change", "victim"),
    [
        (_borrower("a", T0 + 30), "a"),  # the echo of a's reservation moves its time after b's
        (_borrower("a", T0 + 10, evicted=True), "a"),  # a marked evicted (still holding quota) goes first
    ],
)
def test_a_record_changed_in_place_is_searched_for(searches: list[str], change: dict[str, Any], victim: str) -> None:
    """A held record updated in place (no new record, no usage moved) still reorders the candidates:
    the most recently reserved, or one marked evicted, is the first victim."""
    s = make_scheduler(
        *_borrowed_cohort(), _borrower("a", T0 + 10), _borrower("b", T0 + 20), workload("w", queue="lq-cq", priority=5)
    )
    assert _asked(s) == ["b"]  # b reserved last
    assert _asked(s) == ["b"]
    assert searches == ["w"]  # the second asking was answered from memory
    record = s.workloads[("ns", "a")]
    s.upsert_workload(change)
    assert s.workloads[("ns", "a")] is record  # refreshed in place
    assert _asked(s) == [victim]
