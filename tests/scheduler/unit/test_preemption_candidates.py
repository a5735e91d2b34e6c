"""Classic preemption draws cohort candidates lazily, from rankings kept per ClusterQueue, and answers
as Kueue's collect-everything-then-sort search does.

``classic_targets`` no longer classifies and sorts every admitted workload of the cohort for each
head: each ClusterQueue keeps its workloads ranked (priority, most recent reservation first, UID),
the search merges the rankings of the ClusterQueues that qualify and stops drawing once the
preemptor fits. The property test below holds it to the plain algorithm (written out here: collect
every candidate, stable-sort by Kueue's CandidatesOrdering, evicted ones first) on random one- and
two-level cohorts with equal ranks, evicted workloads and issued preemptions. The targeted tests pin
each way a kept ranking goes stale (a workload admitted, released, or its record changed in place)
on a case where the stale ranking picks the wrong victim.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.scheduler.algorithm.flavor_assigner import FlavorAssigner, Mode
from pykueue.scheduler.algorithm.preemption import classic
from pykueue.scheduler.algorithm.preemption.classic import classic_targets
from pykueue.scheduler.algorithm.preemption.common import PreemptionCtx, Target, candidate_sort_key
from pykueue.scheduler.state.clusterqueue import NEVER, ClusterQueue
from pykueue.scheduler.state.cohort_tree import CohortNode
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

POLICIES = ["Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"]


def _reference(ctx: PreemptionCtx) -> list[Target]:
    """Kueue's classic search as written before candidates were drawn lazily: every candidate of
    every qualifying ClusterQueue collected and classified, then sorted."""
    cq = ctx.cq
    forbidden = cq.borrow_within_cohort == NEVER
    same: list[classic.Candidate] = []
    if cq.within_cluster_queue != NEVER:
        _collect(ctx, cq, None, False, same)
    hierarchy: list[classic.Candidate] = []
    priority: list[classic.Candidate] = []
    if cq.parent is not None and cq.reclaim_within_cohort != NEVER:
        advantage, remaining = classic._fits_in_quota(cq, ctx.requests)
        previous: CohortNode | None = None
        for root in cq.path_to_root():
            _subtree(ctx, root, root, previous, advantage, hierarchy if advantage else priority)
            fits, remaining = classic._fits_in_quota(root, remaining)
            advantage = advantage or fits
            previous = root
    groups = [sorted(g, key=lambda c: candidate_sort_key(ctx, c[0])) for g in (hierarchy, priority, same)]
    ordered = [c for g in groups for c in g if ctx.is_evicted(c[0])]
    ordered += [c for g in groups for c in g if not ctx.is_evicted(c[0])]
    if not ordered:
        return []
    if (not hierarchy and not priority) or (forbidden and not classic.queue_under_nominal(ctx)):
        attempts = [True]
    elif forbidden and not hierarchy:
        attempts = [False, True]
    else:
        attempts = [True, False]
    for allow in attempts:
        targets = classic._minimal(ctx, ordered, allow)
        if targets:
            return targets
    return []


def _collect(
    ctx: PreemptionCtx, cq: ClusterQueue, lca: CohortNode | None, advantage: bool, out: list[classic.Candidate]
) -> None:
    for wl in cq.workloads.values():
        variant = classic._classify(ctx, wl, advantage)
        if variant != classic.Variant.NEVER:
            out.append((wl, lca, variant))


def _subtree(
    ctx: PreemptionCtx,
    node: CohortNode,
    lca: CohortNode,
    skip: CohortNode | None,
    advantage: bool,
    out: list[classic.Candidate],
) -> None:
    for child in node.child_cohorts:
        if child is not skip and not child.is_within_nominal(ctx.frs_need):
            _subtree(ctx, child, lca, skip, advantage, out)
    for child_cq in node.child_cqs:
        if child_cq is not ctx.cq and isinstance(child_cq, ClusterQueue):
            if not child_cq.is_within_nominal(ctx.frs_need):
                _collect(ctx, child_cq, lca, advantage, out)


def _context(s: Any) -> PreemptionCtx | None:
    s.cache.ensure_fresh()
    cq = s.cache.cqs["cq"]
    wl = s.workloads[("ns", "w")]
    assignment = FlavorAssigner(wl, cq, s.cache.flavors, s.preemptor.oracle, eligibility=s.eligibility).assign()
    if assignment.mode != Mode.PREEMPT:
        return None
    return s.preemptor.context(wl, cq, assignment.usage, assignment.preempt_frs())


def _victims(targets: list[Target]) -> list[tuple[Any, str]]:
    return [(t.wl.key, t.reason) for t in targets]


def _search(s: Any) -> list[tuple[Any, str]] | None:
    ctx = _context(s)
    if ctx is None:
        return None
    usage_before = {name: dict(q.usage) for name, q in s.cache.cqs.items()}
    found = _victims(classic_targets(ctx))
    assert {name: dict(q.usage) for name, q in s.cache.cqs.items()} == usage_before  # simulation undone
    return found


@st.composite
def _cohort_tree(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int]]:
    """cq (the preemptor's), other, third (in a sibling cohort when nested) and fourth; random
    quotas, policies and running workloads (equal UIDs, priorities and reservation times included,
    some marked evicted); and which running workloads have a preemption issued already."""
    nested = draw(st.booleans())
    objs: list[dict[str, Any]] = [flavor("f")]
    if nested:
        objs += [cohort("root"), cohort("co", parent="root"), cohort("co2", parent="root")]
    names = ("cq", "other", "third", "fourth")
    for name in names:
        limit = draw(st.sampled_from([None, 0, 2]))
        nominal = draw(st.integers(0, 4))
        queue = CQ(name).set("cohortName", "co2" if nested and name in ("third", "fourth") else "co")
        queue.flavor("f", cpu=(nominal, limit) if limit is not None else nominal)
        queue.preemption(
            within=draw(st.sampled_from(POLICIES)),
            reclaim=draw(st.sampled_from(POLICIES)),
            borrow=draw(st.sampled_from(["Never", "LowerPriority"])),
            threshold=draw(st.sampled_from([None, 1])),
        )
        objs += [queue.obj(), local_queue("ns", f"lq-{name}", name)]
    running = draw(st.integers(1, 12))
    for i in range(running):
        owner = draw(st.sampled_from(names))
        cpu = draw(st.integers(1, 3))
        objs.append(
            admitted(
                workload(
                    f"run{i}",
                    queue=f"lq-{owner}",
                    cpu=str(cpu),
                    priority=draw(st.integers(0, 2)),
                    created=float(draw(st.integers(0, 3))),
                    uid=draw(st.sampled_from(["", "a", "b", f"u{i}"])),
                ),
                owner,
                {"cpu": "f"},
                {"cpu": str(cpu)},
                at=T0 + draw(st.integers(0, 3)),
                evicted=draw(st.integers(0, 5)) == 0,
            )
        )
    objs.append(
        workload(
            "w",
            queue="lq-cq",
            cpu=str(draw(st.integers(1, 6))),
            priority=draw(st.integers(0, 3)),
            created=float(draw(st.integers(0, 3))),
        )
    )
    issued = draw(st.lists(st.integers(0, running - 1), max_size=3))
    return objs, issued


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cohort_tree())
def test_lazy_search_finds_the_victims_of_the_full_sort(case: tuple[list[dict[str, Any]], list[int]]) -> None:
    objs, issued = case
    s = make_scheduler(*objs)
    s.expectations.update(("ns", f"run{i}") for i in issued)
    ctx = _context(s)
    if ctx is None:
        return
    want = _victims(_reference(ctx))
    assert _victims(classic_targets(ctx)) == want
    assert _victims(classic_targets(ctx)) == want  # asked again: the kept rankings give the same


def _cohort_of_two(cq_nominal: int = 2) -> list[dict[str, Any]]:
    """cq (nominal ``cq_nominal``) and other (nominal 0) in cohort co: other's workloads borrow
    cq's quota, so the preemptor in cq reclaims it (reclaimWithinCohort Any)."""
    objs: list[dict[str, Any]] = [flavor("f")]
    for name, nominal in (("cq", cq_nominal), ("other", 0)):
        objs += [
            CQ(name).set("cohortName", "co").flavor("f", cpu=nominal).preemption(reclaim="Any").obj(),
            local_queue("ns", f"lq-{name}", name),
        ]
    return objs


def _running(name: str, at: float, evicted: bool = False) -> dict[str, Any]:
    """A 1-cpu workload of other, reserved at ``at``."""
    return admitted(
        workload(name, queue="lq-other", cpu="1", priority=0), "other", {"cpu": "f"}, {"cpu": "1"}, at=at, evicted=evicted
    )


def test_a_reservation_time_changed_in_place_re_ranks() -> None:
    """The status write that echoes a reservation updates the engine's record in place; when it
    moves the reservation time, the most recently reserved (the first victim) changes. The cohort
    (2 cpu) is full with other's a and b; the preemptor needs 1 cpu: one victim."""
    s = make_scheduler(
        *_cohort_of_two(), _running("a", T0 + 10), _running("b", T0 + 20), workload("w", queue="lq-cq", priority=5)
    )
    record = s.workloads[("ns", "a")]
    assert _search(s) == [(("ns", "b"), "InCohortReclamation")]  # b reserved last
    s.upsert_workload(_running("a", T0 + 30))  # same admission, later QuotaReserved time
    assert s.workloads[("ns", "a")] is record  # refreshed in place, not re-parsed
    assert _search(s) == [(("ns", "a"), "InCohortReclamation")]


def test_an_eviction_mark_set_in_place_re_ranks() -> None:
    """A workload marked evicted while it still holds its quota is the first victim."""
    s = make_scheduler(
        *_cohort_of_two(), _running("a", T0 + 10), _running("b", T0 + 20), workload("w", queue="lq-cq", priority=5)
    )
    record = s.workloads[("ns", "a")]
    assert _search(s) == [(("ns", "b"), "InCohortReclamation")]
    s.upsert_workload(_running("a", T0 + 10, evicted=True))
    assert s.workloads[("ns", "a")] is record and record.evicted  # refreshed in place
    assert _search(s) == [(("ns", "a"), "InCohortReclamation")]


def test_an_admission_and_a_release_re_rank() -> None:
    """A workload admitted after the ranking was kept is a candidate; a released one is not.
    Cohort 3 cpu; other holds a and b; the preemptor needs 2, so 1 more is freed: b (reserved
    last). With c admitted too the cohort is full: c and b go (a stale ranking would give b, a)."""
    s = make_scheduler(
        *_cohort_of_two(3),
        _running("a", T0 + 10),
        _running("b", T0 + 20),
        workload("w", queue="lq-cq", cpu="2", priority=5),
    )
    assert _search(s) == [(("ns", "b"), "InCohortReclamation")]
    s.upsert_workload(_running("c", T0 + 30))
    assert _search(s) == [(("ns", "c"), "InCohortReclamation"), (("ns", "b"), "InCohortReclamation")]
    s.delete_workload("ns", "c")
    assert _search(s) == [(("ns", "b"), "InCohortReclamation")]
