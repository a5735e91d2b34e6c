"""Fair sharing and fair-sharing preemption: DRS and weighted share, tournament admission order, fair-sharing
preemption (within-nominal reclamation and the share strategies)."""

from __future__ import annotations

from typing import Any

from pykueue.scheduler import FairSharingConfig, SchedulerConfig
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    cohort,
    flavor,
    local_queue,
    make_scheduler,
    workload,
)

RF = flavor("f")
FS = SchedulerConfig(fair_sharing=FairSharingConfig())


def running(name: str, cq: str, cpu: int, priority: int = 0) -> dict[str, Any]:
    return admitted(
        workload(name, queue=f"lq-{cq}", cpu=str(cpu), priority=priority), cq, {"cpu": "f"}, {"cpu": str(cpu)}
    )


def lqs(*cqs: str) -> list[dict[str, Any]]:
    return [local_queue("ns", f"lq-{c}", c) for c in cqs]


def test_weighted_share_is_borrowed_over_lendable_per_mille() -> None:
    a = CQ("a").cohort("co").flavor("f", cpu=4)
    b = CQ("b").cohort("co").flavor("f", cpu=6)
    s = make_scheduler(RF, a.obj(), b.obj(), *lqs("a", "b"), running("w", "a", 6), config=FS)
    assert s.weighted_share("ClusterQueue", "a") == 200  # 2 borrowed * 1000 / 10 lendable
    assert s.weighted_share("ClusterQueue", "b") == 0
    assert s.weighted_share("Cohort", "co") == 0  # roots never have a share


def test_weight_divides_the_share_and_zero_weight_is_infinite_when_borrowing() -> None:
    heavy = CQ("a").cohort("co").flavor("f", cpu=4).set("fairSharing", {"weight": "2"})
    s = make_scheduler(
        RF, heavy.obj(), CQ("b").cohort("co").flavor("f", cpu=6).obj(), *lqs("a", "b"), running("w", "a", 6), config=FS
    )
    assert s.weighted_share("ClusterQueue", "a") == 100
    zero = CQ("a").cohort("co").flavor("f", cpu=4).set("fairSharing", {"weight": "0"})
    s = make_scheduler(
        RF, zero.obj(), CQ("b").cohort("co").flavor("f", cpu=6).obj(), *lqs("a", "b"), running("w", "a", 6), config=FS
    )
    assert s.weighted_share("ClusterQueue", "a") == 2**63 - 1


def test_cohort_share_in_a_hierarchy() -> None:
    s = make_scheduler(
        RF,
        cohort("root"),
        cohort("left", parent="root"),
        cohort("right", parent="root"),
        CQ("a").cohort("left").flavor("f", cpu=2).obj(),
        CQ("b").cohort("right").flavor("f", cpu=6).obj(),
        *lqs("a", "b"),
        running("w", "a", 4),
        config=FS,
    )
    assert s.weighted_share("Cohort", "left") == 250  # 2 borrowed * 1000 / 8 lendable at the root


def contention(config: SchedulerConfig) -> Any:
    pool = [
        {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}
    ]
    return make_scheduler(
        RF,
        cohort("co", groups=pool),
        CQ("a").cohort("co").flavor("f", cpu=2).obj(),
        CQ("b").cohort("co").flavor("f", cpu=2).obj(),
        *lqs("a", "b"),
        running("a-running", "a", 4),
        running("b-running", "b", 2),
        workload("a-head", queue="lq-a", cpu="2", priority=10, created=T0 + 1),
        workload("b-head", queue="lq-b", cpu="2", priority=0, created=T0 + 2),
        config=config,
    )


def test_classic_order_admits_the_higher_priority_head() -> None:
    assert [a.name for a in contention(SchedulerConfig()).schedule().admitted] == ["a-head"]


def test_tournament_admits_the_head_with_the_lower_share() -> None:
    assert [a.name for a in contention(FS).schedule().admitted] == ["b-head"]


def test_fair_preemption_within_nominal_reclaims_from_the_borrower() -> None:
    a = CQ("a").cohort("co").flavor("f", cpu=4).preemption(reclaim="Any")
    b = CQ("b").cohort("co").flavor("f", cpu=4).preemption(reclaim="Any")
    s = make_scheduler(
        RF,
        a.obj(),
        b.obj(),
        *lqs("a", "b"),
        *[running(f"a{i}", "a", 2) for i in range(4)],
        workload("b-head", queue="lq-b", cpu="4", priority=0, created=T0 + 5),
        config=FS,
    )
    result = s.schedule()
    # equal candidates are taken in UID order; fill-back keeps both (4 cpu are needed)
    assert [(p.name, p.reason) for p in result.preempted] == [
        ("a0", "InCohortReclamation"),
        ("a1", "InCohortReclamation"),
    ]


def fair_world(strategies: tuple[str, ...]) -> Any:
    a = CQ("a").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any")
    b = CQ("b").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any")
    c = CQ("c").cohort("co").flavor("f", cpu=4)
    return make_scheduler(
        RF,
        a.obj(),
        b.obj(),
        c.obj(),
        *lqs("a", "b", "c"),
        *[running(f"a{i}", "a", 2) for i in range(3)],
        running("b0", "b", 2),
        workload("b-head", queue="lq-b", cpu="2", created=T0 + 5),
        config=SchedulerConfig(fair_sharing=FairSharingConfig(preemption_strategies=strategies)),
    )


def test_fair_preemption_final_share_strategy_preempts_the_bigger_borrower() -> None:
    result = fair_world(("LessThanOrEqualToFinalShare",)).schedule()
    assert len(result.preempted) == 1
    [p] = result.preempted
    assert p.name.startswith("a")
    assert p.reason == "InCohortFairSharing"


def test_fair_preemption_initial_share_strategy_is_stricter() -> None:
    # b would borrow 2 (share 250) after admission; a borrows 4 now (500) -> 250 < 500 passes too
    result = fair_world(("LessThanInitialShare",)).schedule()
    assert len(result.preempted) == 1


def test_fair_preemption_not_allowed_when_it_would_invert_shares() -> None:
    # b already borrows as much as a: taking from a would make b the bigger borrower
    a = CQ("a").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any")
    b = CQ("b").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any")
    s = make_scheduler(
        RF,
        a.obj(),
        b.obj(),
        CQ("c").cohort("co").flavor("f", cpu=4).obj(),
        *lqs("a", "b", "c"),
        running("a0", "a", 2),
        running("a1", "a", 2),
        running("b0", "b", 2),
        running("b1", "b", 2),
        workload("b-head", queue="lq-b", cpu="2", created=T0 + 5),
        config=FS,
    )
    assert s.schedule().preempted == []
