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
        assert not result.preempted and not result.admitted  # issued already: waits for low to leave
    assert searches == ["w", "w"]
    s.delete_workload("ns", "low")
    s.upsert_workload(_running("low2", 1))
    assert [p.name for p in s.schedule().preempted] == ["low2"]
