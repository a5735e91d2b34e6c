"""Classic preemption: policy tables, reclaim within the cohort, borrowWithinCohort with
its threshold, candidate ordering, minimal victim sets by fill-back, messages and expectations."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.scheduler import SchedulerConfig
from pykueue.scheduler.algorithm.preemption.common import satisfies_policy
from pykueue.scheduler.state.workload_info import parse_workload
from pykueue.testing.builders import make_cohort
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    by_name,
    cohort,
    flavor,
    local_queue,
    make_scheduler,
    workload,
)

RF = flavor("f")
LQ = local_queue("ns", "lq", "cq")
LQ_OTHER = local_queue("ns", "lq-other", "other")


def running(name: str, cq: str = "cq", cpu: int = 1, priority: int = 0, at: float = T0, **kw: Any) -> dict[str, Any]:
    queue = "lq" if cq == "cq" else f"lq-{cq}"
    return admitted(
        workload(name, queue=queue, cpu=str(cpu), priority=priority, created=at),
        cq,
        {"cpu": "f"},
        {"cpu": str(cpu)},
        at=at,
        **kw,
    )


def preempted(result: Any) -> list[tuple[str, str]]:
    return sorted((p.name, p.reason) for p in result.preempted)


@pytest.mark.parametrize(
    ("policy", "candidate", "preemptor", "want"),
    [
        pytest.param("LowerPriority", (1, T0), (2, T0 + 5), True, id="lower-priority-yes"),
        pytest.param("LowerPriority", (2, T0), (2, T0 - 5), False, id="lower-priority-equal-no"),
        pytest.param("LowerOrNewerEqualPriority", (2, T0 + 5), (2, T0), True, id="newer-equal-yes"),
        pytest.param("LowerOrNewerEqualPriority", (2, T0), (2, T0 + 5), False, id="older-equal-no"),
        pytest.param("LowerOrNewerEqualPriority", (2, T0), (2, T0), False, id="same-time-no"),
        pytest.param("LowerOrNewerEqualPriority", (1, T0), (2, T0 + 5), True, id="lower-yes"),
        pytest.param("Any", (9, T0), (0, T0), True, id="any-always"),
        pytest.param("Never", (0, T0), (9, T0), False, id="never"),
    ],
)
def test_preemption_policy_table(
    policy: str, candidate: tuple[int, float], preemptor: tuple[int, float], want: bool
) -> None:
    cand = parse_workload(workload("c", priority=candidate[0], created=candidate[1]))
    pre = parse_workload(workload("p", priority=preemptor[0], created=preemptor[1]))
    assert satisfies_policy(policy, pre, cand) is want


def test_within_cluster_queue_lower_priority_preempts_and_waits() -> None:
    cq = CQ("cq").flavor("f", cpu=2).preemption(within="LowerPriority")
    s = make_scheduler(
        RF, cq.obj(), LQ, running("low", cpu=2, priority=1), workload("high", cpu="2", priority=5, created=T0 + 10)
    )
    result = s.schedule()
    assert preempted(result) == [("low", "InClusterQueue")]
    [p] = result.preempted
    assert (p.preemptor_namespace, p.preemptor_name) == ("ns", "high")
    assert p.message == (
        "Preempted to accommodate a workload (UID: uid-high, JobUID: UNKNOWN) due to "
        "prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq"
    )
    pending = by_name(result.pending)["high"]
    assert pending.reason == "WaitingForPreemptedWorkloads"
    assert pending.message == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
        "flavor f, 2 more needed. Pending the preemption of 1 workload(s)"
    )
    again = s.schedule()
    assert again.preempted == []  # already issued: not reported twice
    assert again.admitted == []
    s.delete_workload("ns", "low")
    assert [a.name for a in s.schedule().admitted] == ["high"]


def test_never_policy_leaves_the_workload_waiting() -> None:
    s = make_scheduler(
        RF,
        CQ("cq").flavor("f", cpu=2).obj(),
        LQ,
        running("low", cpu=2, priority=1),
        workload("high", cpu="2", priority=5, created=T0 + 10),
    )
    result = s.schedule()
    assert result.preempted == []
    assert by_name(result.pending)["high"].reason == "WaitingForQuota"


def test_minimal_victim_set_by_fill_back() -> None:
    cq = CQ("cq").flavor("f", cpu=4).preemption(within="LowerPriority")
    s = make_scheduler(
        RF,
        cq.obj(),
        LQ,
        running("a", cpu=1, priority=1),
        running("b", cpu=2, priority=2),
        running("c", cpu=1, priority=3),
        workload("p", cpu="2", priority=10, created=T0 + 10),
    )
    assert preempted(s.schedule()) == [("b", "InClusterQueue")]


def test_lowest_priority_then_most_recently_reserved_victim_first() -> None:
    cq = CQ("cq").flavor("f", cpu=2).preemption(within="LowerPriority")
    s = make_scheduler(
        RF,
        cq.obj(),
        LQ,
        running("old", cpu=1, priority=1, at=T0),
        running("recent", cpu=1, priority=1, at=T0 + 5),
        workload("p", cpu="1", priority=10, created=T0 + 10),
    )
    assert preempted(s.schedule()) == [("recent", "InClusterQueue")]


def test_already_evicted_candidate_is_chosen_first() -> None:
    cq = CQ("cq").flavor("f", cpu=2).preemption(within="LowerPriority")
    s = make_scheduler(
        RF,
        cq.obj(),
        LQ,
        running("lowest", cpu=1, priority=0),
        running("evicting", cpu=1, priority=3, evicted=True),
        workload("p", cpu="1", priority=10, created=T0 + 10),
    )
    assert preempted(s.schedule()) == [("evicting", "InClusterQueue")]


def cohort_world(
    reclaim: str,
    borrow: str = "Never",
    threshold: int | None = None,
    other_nominal: int = 0,
    lender_usage: int = 4,
    lender_priority: int = 0,
    preemptor_cpu: int = 4,
    preemptor_priority: int = 5,
) -> Any:
    cq = CQ("cq").cohort("co").flavor("f", cpu=4).preemption(reclaim=reclaim, borrow=borrow, threshold=threshold)
    other = CQ("other").cohort("co").flavor("f", cpu=other_nominal)
    return make_scheduler(
        RF,
        cq.obj(),
        other.obj(),
        LQ,
        LQ_OTHER,
        running("borrower", cq="other", cpu=lender_usage, priority=lender_priority),
        workload("p", cpu=str(preemptor_cpu), priority=preemptor_priority, created=T0 + 10),
    )


def test_reclaim_any_takes_back_lent_quota_regardless_of_priority() -> None:
    s = cohort_world("Any", lender_priority=100)
    assert preempted(s.schedule()) == [("borrower", "InCohortReclamation")]


def test_reclaim_lower_priority_respects_priority() -> None:
    assert cohort_world("LowerPriority", lender_priority=100).schedule().preempted == []
    assert preempted(cohort_world("LowerPriority", lender_priority=1).schedule()) == [
        ("borrower", "InCohortReclamation")
    ]


def test_reclaim_only_from_cluster_queues_above_nominal() -> None:
    cq = CQ("cq").cohort("co").flavor("f", cpu=4).preemption(reclaim="Any")
    other = CQ("other").cohort("co").flavor("f", cpu=4)
    s = make_scheduler(
        RF,
        cq.obj(),
        other.obj(),
        LQ,
        LQ_OTHER,
        running("mine", cpu=2, priority=9),
        running("within-nominal", cq="other", cpu=4),
        workload("p", cpu="4", priority=5, created=T0 + 10),
    )
    result = s.schedule()
    assert result.preempted == []
    assert by_name(result.pending)["p"].reason == "WaitingForQuota"


def test_reclaim_never_cannot_take_back_quota() -> None:
    result = cohort_world("Never").schedule()
    assert result.preempted == []


def test_borrow_within_cohort_preempts_lower_priority_while_borrowing() -> None:
    # p needs 6: 4 nominal + 2 borrowed from "other"'s 4 nominal, which "other" uses fully by borrowing
    cq = CQ("cq").cohort("co").flavor("f", cpu=4).preemption(reclaim="Any", borrow="LowerPriority")
    other = CQ("other").cohort("co").flavor("f", cpu=2)
    third = CQ("third").cohort("co").flavor("f", cpu=4)
    s = make_scheduler(
        RF,
        cq.obj(),
        other.obj(),
        third.obj(),
        LQ,
        LQ_OTHER,
        running("b1", cq="other", cpu=3, priority=1),
        running("b2", cq="other", cpu=3, priority=1),
        workload("p", cpu="6", priority=5, created=T0 + 10),
    )
    result = s.schedule()
    assert preempted(result) == [("b1", "InCohortReclaimWhileBorrowing")]


def test_borrow_within_cohort_threshold_protects_higher_priorities() -> None:
    cq = CQ("cq").cohort("co").flavor("f", cpu=4).preemption(reclaim="Any", borrow="LowerPriority", threshold=0)
    other = CQ("other").cohort("co").flavor("f", cpu=2)
    third = CQ("third").cohort("co").flavor("f", cpu=4)
    s = make_scheduler(
        RF,
        cq.obj(),
        other.obj(),
        third.obj(),
        LQ,
        LQ_OTHER,
        running("b1", cq="other", cpu=3, priority=1),
        running("b2", cq="other", cpu=3, priority=1),
        workload("p", cpu="6", priority=5, created=T0 + 10),
    )
    assert s.schedule().preempted == []


def test_preemptor_admitted_after_victim_released() -> None:
    s = cohort_world("Any")
    assert preempted(s.schedule()) == [("borrower", "InCohortReclamation")]
    s.delete_workload("ns", "borrower")
    assert [a.name for a in s.schedule().admitted] == ["p"]


def test_no_candidates_reserves_quota_against_lower_priority_entries() -> None:
    # cq-a's head (prio 5) cannot preempt; reclaimWithinCohort=LowerPriority (not Any) makes it
    # reserve the quota it needs so cq-b's lower-priority head cannot take it in the same cycle.
    # StrictFIFO keeps that head in front, so it keeps reserving in every later cycle too.
    a = (
        CQ("cq-a")
        .cohort("co")
        .flavor("f", cpu=2)
        .preemption(within="LowerPriority", reclaim="LowerPriority")
        .strategy("StrictFIFO")
    )
    b = CQ("cq-b").cohort("co").flavor("f", cpu=0)
    s = make_scheduler(
        RF,
        a.obj(),
        b.obj(),
        local_queue("ns", "la", "cq-a"),
        local_queue("ns", "lb", "cq-b"),
        running("keep", cq="cq-a", cpu=1, priority=9),
        workload("a-head", queue="la", cpu="2", priority=5, created=T0 + 1),
        workload("b-head", queue="lb", cpu="1", priority=1, created=T0 + 2),
    )
    result = s.schedule()
    assert result.admitted == []
    pending = by_name(result.pending)
    assert pending["b-head"].message == "Workload no longer fits after processing another workload"
    assert pending["a-head"].reason == "WaitingForQuota"


def test_no_candidates_reservation_lasts_one_cycle_with_best_effort_fifo() -> None:
    a = CQ("cq-a").cohort("co").flavor("f", cpu=2).preemption(within="LowerPriority", reclaim="LowerPriority")
    b = CQ("cq-b").cohort("co").flavor("f", cpu=0)
    objs = [
        RF,
        a.obj(),
        b.obj(),
        local_queue("ns", "la", "cq-a"),
        local_queue("ns", "lb", "cq-b"),
        running("keep", cq="cq-a", cpu=1, priority=9),
        workload("a-head", queue="la", cpu="2", priority=5, created=T0 + 1),
        workload("b-head", queue="lb", cpu="1", priority=1, created=T0 + 2),
    ]
    kueue = make_scheduler(*objs, config=SchedulerConfig(heads_per_cycle=1))
    assert kueue.schedule().admitted == []  # cycle 1: skipped behind the reservation
    assert [a.name for a in kueue.schedule().admitted] == ["b-head"]  # cycle 2: a-head is inadmissible
    assert [a.name for a in make_scheduler(*objs).schedule().admitted] == ["b-head"]


def test_overlapping_targets_are_recomputed_without_the_chosen_victims() -> None:
    cqs = [
        CQ("tiny").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any"),
        CQ("hero").cohort("co").flavor("f", cpu=4).preemption(reclaim="Any"),
        CQ("rest").cohort("co").flavor("f", cpu=0),
        CQ("noisy").cohort("co").flavor("f", cpu=0),
    ]
    s = make_scheduler(
        RF,
        *[c.obj() for c in cqs],
        *[local_queue("ns", f"lq-{n}", n) for n in ("tiny", "hero", "rest", "noisy")],
        running("rest-running", cq="rest", cpu=3, priority=0),
        running("noisy-running", cq="noisy", cpu=3, priority=1),
        workload("tiny-pending", queue="lq-tiny", cpu="2", priority=5, created=T0 + 1),
        workload("hero-pending", queue="lq-hero", cpu="4", priority=1, created=T0 + 2),
    )
    result = s.schedule()
    assert sorted((p.name, p.preemptor_name, p.reason) for p in result.preempted) == [
        ("noisy-running", "hero-pending", "InCohortReclamation"),
        ("rest-running", "tiny-pending", "InCohortReclamation"),
    ]


def test_overlap_that_fits_after_the_preemptions_is_deferred() -> None:
    cqs = [
        CQ("a").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any"),
        CQ("b").cohort("co").flavor("f", cpu=2).preemption(reclaim="Any"),
        CQ("borrower").cohort("co").flavor("f", cpu=0),
    ]
    s = make_scheduler(
        RF,
        *[c.obj() for c in cqs],
        *[local_queue("ns", f"lq-{n}", n) for n in ("a", "b")],
        local_queue("ns", "lq-borrower", "borrower"),
        running("big", cq="borrower", cpu=4),
        workload("a-pending", queue="lq-a", cpu="2", priority=5, created=T0 + 1),
        workload("b-pending", queue="lq-b", cpu="2", priority=1, created=T0 + 2),
    )
    result = s.schedule()
    assert [(p.name, p.preemptor_name) for p in result.preempted] == [("big", "a-pending")]
    deferred = by_name(result.pending)["b-pending"]
    assert deferred.reason == "WaitingForPreemptedWorkloads"
    assert deferred.message == (
        "Workload has overlapping preemption targets with another workload, but will fit "
        "after these preemptions complete"
    )


def test_a_borrowing_preemptor_leaves_queues_within_nominal_alone() -> None:
    # "other" holds exactly its nominal 2: it lends nothing, so even a lower-priority workload of
    # it is no candidate for p, which must borrow (its nominal is 0)
    s = make_scheduler(
        RF,
        CQ("cq").cohort("co").flavor("f", cpu=0).preemption(reclaim="Any", borrow="LowerPriority").obj(),
        CQ("other").cohort("co").flavor("f", cpu=2).obj(),
        LQ,
        LQ_OTHER,
        running("within-nominal", cq="other", cpu=2, priority=0),
        workload("p", cpu="1", priority=5, created=T0 + 10),
    )
    result = s.schedule()
    assert result.preempted == []
    assert by_name(result.pending)["p"].reason == "WaitingForQuota"


def _claim_world(with_own_preemptor: bool) -> Any:
    """Cohort "root" lends 2 cpu; "mine" (nominal 1) and "lender" (nominal 1) are full, "lender" by
    borrowing 2. "wide" (nominal 0) wants 3; "mine" may also have a head of its own that borrows 1.
    Both heads first pick the same victim, lender-w, so the later one (wide-x) is recomputed."""
    objs = [
        RF,
        make_cohort("root").quota("f", "cpu", 2).obj(),
        CQ("mine").cohort("root").flavor("f", cpu=1).preemption(reclaim="LowerPriority", borrow="LowerPriority").obj(),
        CQ("wide").cohort("root").flavor("f", cpu=0).preemption(reclaim="LowerPriority", borrow="LowerPriority").obj(),
        CQ("lender").cohort("root").flavor("f", cpu=1).obj(),
        *[local_queue("ns", f"lq-{n}", n) for n in ("mine", "wide", "lender")],
        running("mine-w", cq="mine", cpu=1, priority=0),
        running("lender-w", cq="lender", cpu=3, priority=0),
        workload("wide-x", queue="lq-wide", cpu="1", count=3, priority=2, created=T0 + 2),
    ]
    if with_own_preemptor:
        objs.append(workload("mine-x", queue="lq-mine", cpu="1", priority=2, created=T0 + 1))
    return make_scheduler(*objs)


@pytest.mark.parametrize(
    ("with_own_preemptor", "want"),
    [
        # "mine" holds exactly its nominal quota: not borrowing, its workload is no candidate
        pytest.param(False, [("lender-w", "wide-x", "InCohortReclaimWhileBorrowing")], id="no-claim-only-the-borrower"),
        # mine-x goes first (older, same borrowing and priority), preempts lender-w and waits: its
        # claim counts in the cycle's snapshot, so "mine" now uses 2 of its nominal 1 and borrows.
        # wide-x, recomputed without lender-w, may take mine-w (as Kueue's
        # RecomputeAssignmentUponPreemptionTargetsOverlap does).
        pytest.param(
            True,
            [
                ("lender-w", "mine-x", "InCohortReclaimWhileBorrowing"),
                ("mine-w", "wide-x", "InCohortReclaimWhileBorrowing"),
            ],
            id="queue-with-a-waiting-preemptor-borrows",
        ),
    ],
)
def test_a_waiting_preemptors_claim_counts_when_judging_its_queue_borrowing(
    with_own_preemptor: bool, want: list[tuple[str, str, str]]
) -> None:
    s = _claim_world(with_own_preemptor)
    result = s.schedule()
    assert sorted((p.name, p.preemptor_name, p.reason) for p in result.preempted) == want
    for victim, _by, _reason in want:
        s.delete_workload("ns", victim)
    admitted_next = sorted(a.name for a in s.schedule().admitted)
    assert admitted_next == sorted({by for _victim, by, _reason in want})


def test_hierarchical_reclaim_in_the_worked_example_tree() -> None:
    """The worked quota-tree example: R > {C (4, bl 2, ll 1) > {A (6, ll 2), B (3)}, D (5)}. D borrows 1 from C's
    lendable cpu; A asking 13 fits in C's subtree, so it has the hierarchical advantage over D."""

    def quota(nominal: int, bl: int | None = None, ll: int | None = None) -> list[dict[str, Any]]:
        res: dict[str, Any] = {"name": "cpu", "nominalQuota": str(nominal)}
        if bl is not None:
            res["borrowingLimit"] = str(bl)
        if ll is not None:
            res["lendingLimit"] = str(ll)
        return [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [res]}]}]

    s = make_scheduler(
        RF,
        cohort("R"),
        cohort("C", parent="R", groups=quota(4, 2, 1)),
        CQ("A").cohort("C").flavor("f", cpu=(6, None, 2)).preemption(reclaim="Any").obj(),
        CQ("B").cohort("C").flavor("f", cpu=3).obj(),
        CQ("D").cohort("R").flavor("f", cpu=5).obj(),
        local_queue("ns", "lq-A", "A"),
        local_queue("ns", "lq-D", "D"),
        running("d-big", cq="D", cpu=5, priority=9),
        running("d-small", cq="D", cpu=1, priority=9, at=T0 + 1),
        workload("a", queue="lq-A", cpu="13", priority=0, created=T0 + 5),
    )
    result = s.schedule()
    # d-small was reserved last, so it is tried first, and removing it alone frees exactly 13
    assert [(p.name, p.reason) for p in result.preempted] == [("d-small", "InCohortReclamation")]
    assert result.preempted[0].message.endswith("preemptor path: /R/C/A; preemptee path: /R/D")
