"""Classic preemption skips a cohort search that cannot succeed, and answers the same.

With ``borrowWithinCohort`` off and the preemptor's ClusterQueue at or over nominal, only the
attempt that allows borrowing runs, and it refuses every candidate reclaimed without borrowing, so
``classic_targets`` does not collect those. The property test drives random one- and two-level
cohort trees, policies, priorities and usage through the search with and without that pruning and
requires the same victims for the same reasons. The targeted tests pin down that the pruned search
really skips the other ClusterQueues in the saturated-cohort case it is for, and keep the two
neighbouring cases random generation rarely reaches: reclaim without borrowing from a ClusterQueue
under nominal, and hierarchical reclaim from one over nominal.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.scheduler.algorithm.flavor_assigner import FlavorAssigner, Mode
from pykueue.scheduler.algorithm.preemption import classic
from pykueue.scheduler.algorithm.preemption.classic import classic_targets
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    admitted,
    cohort,
    flavor,
    local_queue,
    make_scheduler,
    workload,
)

POLICIES = ["Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"]


def _search(s: Any, prune: bool) -> list[tuple[Any, str]] | None:
    """The preemptor's victims (key, reason), or None when its assignment does not ask to preempt."""
    s.cache.ensure_fresh()
    cq = s.cache.cqs["cq"]
    wl = s.workloads[("ns", "w")]
    assignment = FlavorAssigner(wl, cq, s.cache.flavors, s.preemptor.oracle, eligibility=s.eligibility).assign()
    if assignment.mode != Mode.PREEMPT:
        return None
    usage_before = {name: dict(q.usage) for name, q in s.cache.cqs.items()}
    ctx = s.preemptor.context(wl, cq, assignment.usage, assignment.preempt_frs())
    targets = classic_targets(ctx, prune=prune)
    assert {name: dict(q.usage) for name, q in s.cache.cqs.items()} == usage_before  # simulation undone
    return [(t.wl.key, t.reason) for t in targets]


@st.composite
def _cohort_tree(draw: st.DrawFn) -> list[dict[str, Any]]:
    """cq (the preemptor's) and other in cohort "co"; third in "co" or, under a root cohort, in a
    sibling cohort "co2"; random nominal quotas, borrowing limits, policies and running workloads."""
    nested = draw(st.booleans())
    objs: list[dict[str, Any]] = [flavor("f")]
    if nested:
        objs += [cohort("root"), cohort("co", parent="root"), cohort("co2", parent="root")]
    for name in ("cq", "other", "third"):
        limit = draw(st.sampled_from([None, 0, 2]))
        nominal = draw(st.integers(0, 4))
        queue = CQ(name).set("cohortName", "co2" if nested and name == "third" else "co")
        queue.flavor("f", cpu=(nominal, limit) if limit is not None else nominal)
        queue.preemption(
            within=draw(st.sampled_from(POLICIES)),
            reclaim=draw(st.sampled_from(POLICIES)),
            borrow=draw(st.sampled_from(["Never", "LowerPriority"])),
            threshold=draw(st.sampled_from([None, 1])),
        )
        objs += [queue.obj(), local_queue("ns", f"lq-{name}", name)]
    for i in range(draw(st.integers(1, 7))):
        owner = draw(st.sampled_from(["cq", "other", "third"]))
        cpu = draw(st.integers(1, 3))
        objs.append(
            admitted(
                workload(
                    f"run{i}",
                    queue=f"lq-{owner}",
                    cpu=str(cpu),
                    priority=draw(st.integers(0, 2)),
                    created=float(draw(st.integers(0, 3))),
                ),
                owner,
                {"cpu": "f"},
                {"cpu": str(cpu)},
                at=float(draw(st.integers(0, 3))),
            )
        )
    objs.append(
        workload(
            "w",
            queue="lq-cq",
            cpu=str(draw(st.integers(1, 5))),
            priority=draw(st.integers(0, 3)),
            created=float(draw(st.integers(0, 3))),
        )
    )
    return objs


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cohort_tree())
def test_pruned_search_finds_the_same_victims(objs: list[dict[str, Any]]) -> None:
    s = make_scheduler(*objs)
    full = _search(s, prune=False)
    assert _search(s, prune=True) == full


def test_saturated_cohort_skips_the_other_queues_and_still_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline's drain: every ClusterQueue over nominal with equal-priority work, reclaim
    allowed, borrowWithinCohort off. The full search classifies every admitted workload of the
    cohort to conclude there is no victim; the pruned one looks only at its own ClusterQueue."""
    objs: list[dict[str, Any]] = [flavor("f")]
    for name in ("cq", "other", "third"):
        objs += [
            CQ(name)
            .set("cohortName", "co")
            .flavor("f", cpu=(2, 4))
            .preemption(within="LowerPriority", reclaim="Any")
            .obj(),
            local_queue("ns", f"lq-{name}", name),
        ]
    for name, cpus in (("cq", 2), ("other", 3), ("third", 1)):  # cohort quota 6, all used; other borrows
        objs += [
            admitted(workload(f"{name}-{i}", queue=f"lq-{name}", cpu="1", priority=1), name, {"cpu": "f"}, {"cpu": "1"})
            for i in range(cpus)
        ]
    objs.append(workload("w", queue="lq-cq", cpu="1", priority=1))
    s = make_scheduler(*objs)
    scanned: list[str] = []
    real_from_cq = classic._from_cq

    def counting(ctx: Any, cq: Any, *args: Any) -> None:
        scanned.append(cq.name)
        real_from_cq(ctx, cq, *args)

    monkeypatch.setattr(classic, "_from_cq", counting)
    assert _search(s, prune=False) == []
    assert set(scanned) == {"cq", "other"}  # "third" is within nominal: never a reclaim victim
    scanned.clear()
    assert _search(s, prune=True) == []
    assert set(scanned) == {"cq"}


def _three_queues(nominal: dict[str, int], running: list[tuple[str, int]], request: int, nested: bool) -> Any:
    """cq, other and third (in a sibling cohort when ``nested``), reclaim Any, borrowWithinCohort off;
    ``running`` is (queue, priority) per 1-cpu workload, the preemptor asks ``request`` cpu at priority 2."""
    objs: list[dict[str, Any]] = [flavor("f")]
    if nested:
        objs += [cohort("root"), cohort("co", parent="root"), cohort("co2", parent="root")]
    for name in ("cq", "other", "third"):
        objs += [
            CQ(name)
            .set("cohortName", "co2" if nested and name == "third" else "co")
            .flavor("f", cpu=nominal[name])
            .preemption(within="LowerPriority", reclaim="Any")
            .obj(),
            local_queue("ns", f"lq-{name}", name),
        ]
    objs += [
        admitted(
            workload(f"{queue}-{i}", queue=f"lq-{queue}", cpu="1", priority=priority), queue, {"cpu": "f"}, {"cpu": "1"}
        )
        for i, (queue, priority) in enumerate(running)
    ]
    objs.append(workload("w", queue="lq-cq", cpu=str(request), priority=2))
    return make_scheduler(*objs)


def test_under_nominal_the_pruned_search_still_reclaims_without_borrowing() -> None:
    """cq holds 1 of its 2 cpu (a lower-priority workload), other borrows the last free cpu: the
    preemptor (2 cpu) needs both victims and fits without borrowing. cq is under nominal, so the
    search must not be pruned."""
    s = _three_queues(
        {"cq": 2, "other": 2, "third": 0},
        [("cq", 0), ("other", 1), ("other", 1), ("other", 1)],
        request=2,
        nested=False,
    )
    want = [(("ns", "other-1"), "InCohortReclamation"), (("ns", "cq-0"), "InClusterQueue")]
    assert _search(s, prune=False) == want
    assert _search(s, prune=True) == want


def test_over_nominal_the_pruned_search_keeps_hierarchical_reclaim() -> None:
    """Nested cohorts: cq is at nominal with work it may not preempt, its own cohort has room, and
    third (in the sibling cohort) borrowed that room. The preemptor reclaims from third with the
    hierarchical advantage, which pruning must keep."""
    s = _three_queues(
        {"cq": 2, "other": 2, "third": 1},
        [("cq", 2), ("cq", 2), ("third", 1), ("third", 1), ("third", 1)],
        request=1,
        nested=True,
    )
    want = [(("ns", "third-2"), "InCohortReclamation")]  # equal priority and time: the lowest uid
    assert _search(s, prune=False) == want
    assert _search(s, prune=True) == want
