"""Quota primitives of Kueue's cohort tree: SubtreeQuota, localQuota, Usage, Available, PotentialAvailable."""

from __future__ import annotations

from pykueue.scheduler import ManualClock, Scheduler
from pykueue.scheduler.state.cohort_tree import find_height_of_lowest_subtree_that_fits
from pykueue.testing.builders.scheduler_shortcuts import CQ, T0, cohort, flavor, local_queue, namespace, workload

FlavorResource = ("f", "cpu")


def cohort_quota(nominal: int, bl: int | None = None, ll: int | None = None) -> list[dict[str, object]]:
    res: dict[str, object] = {"name": "cpu", "nominalQuota": str(nominal)}
    if bl is not None:
        res["borrowingLimit"] = str(bl)
    if ll is not None:
        res["lendingLimit"] = str(ll)
    return [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [res]}]}]


def worked_example() -> Scheduler:
    s = Scheduler(clock=ManualClock(T0))
    s.upsert_resource_flavor(flavor("f"))
    s.upsert_cohort(cohort("R"))
    s.upsert_cohort(cohort("C", parent="R", groups=cohort_quota(4, bl=2, ll=1)))
    s.upsert_cluster_queue(CQ("A").cohort("C").flavor("f", cpu=(6, None, 2)).obj())
    s.upsert_cluster_queue(CQ("B").cohort("C").flavor("f", cpu=3).obj())
    s.upsert_cluster_queue(CQ("D").cohort("R").flavor("f", cpu=5).obj())
    s.cache.ensure_fresh()
    return s


def milli(n: int) -> int:
    return n * 1000


def test_worked_example_subtree_and_local_quota() -> None:
    s = worked_example()
    c = s.cache
    a, b, d = c.cqs["A"], c.cqs["B"], c.cqs["D"]
    cc, r = c.cohorts["C"], c.cohorts["R"]
    assert (a.subtree[FlavorResource], a.local[FlavorResource]) == (milli(6), milli(4))
    assert (b.subtree[FlavorResource], b.local.get(FlavorResource, 0)) == (milli(3), 0)
    assert (cc.subtree[FlavorResource], cc.local[FlavorResource]) == (milli(9), milli(8))
    assert (d.subtree[FlavorResource], d.local.get(FlavorResource, 0)) == (milli(5), 0)
    assert r.subtree[FlavorResource] == milli(6)


def test_worked_example_idle_available() -> None:
    s = worked_example()
    c = s.cache
    assert c.cohorts["R"].available(FlavorResource) == milli(6)
    assert c.cohorts["C"].available(FlavorResource) == milli(11)
    assert c.cqs["A"].available(FlavorResource) == milli(15)
    assert c.cqs["B"].available(FlavorResource) == milli(11)
    assert c.cqs["D"].available(FlavorResource) == milli(6)
    assert c.cqs["A"].potential_available(FlavorResource) == milli(15)


def test_worked_example_with_d_using_five() -> None:
    s = worked_example()
    c = s.cache
    c.cqs["D"].add_usage({FlavorResource: milli(5)})
    assert c.cohorts["R"].usage[FlavorResource] == milli(5)  # D has no local quota: all usage bubbles up
    assert c.cohorts["R"].available(FlavorResource) == milli(1)
    assert c.cohorts["C"].available(FlavorResource) == milli(9)
    assert c.cqs["A"].available(FlavorResource) == milli(13)
    c.cqs["D"].add_usage({FlavorResource: milli(5)}, -1)
    assert c.cohorts["R"].usage[FlavorResource] == 0


def test_worked_example_borrowing_levels() -> None:
    s = worked_example()
    a = s.cache.cqs["A"]
    assert find_height_of_lowest_subtree_that_fits(a, FlavorResource, milli(5)) == (0, True)
    assert find_height_of_lowest_subtree_that_fits(a, FlavorResource, milli(10))[0] == 1
    assert find_height_of_lowest_subtree_that_fits(a, FlavorResource, milli(14))[0] == 2


def test_usage_within_local_quota_does_not_reach_the_cohort() -> None:
    s = worked_example()
    a = s.cache.cqs["A"]
    a.add_usage({FlavorResource: milli(3)})
    assert s.cache.cohorts["C"].usage.get(FlavorResource, 0) == 0
    a.add_usage({FlavorResource: milli(2)})  # 5 > local quota 4: 1 spills into C
    assert s.cache.cohorts["C"].usage[FlavorResource] == milli(1)
    assert s.cache.cohorts["R"].usage.get(FlavorResource, 0) == 0  # C's local quota (8) absorbs it


def flat(
    a_limits: tuple[int | None, int | None] = (None, None), b_limits: tuple[int | None, int | None] = (None, None)
) -> Scheduler:
    s = Scheduler(clock=ManualClock(T0))
    s.upsert_resource_flavor(flavor("f"))
    s.upsert_cluster_queue(CQ("A").cohort("co").flavor("f", cpu=(9, *a_limits)).obj())
    s.upsert_cluster_queue(CQ("B").cohort("co").flavor("f", cpu=(12, *b_limits)).obj())
    s.cache.ensure_fresh()
    return s


def test_flat_cohort_a9_b12() -> None:
    assert flat().cache.cqs["A"].available(FlavorResource) == milli(21)
    assert flat(a_limits=(1, None)).cache.cqs["A"].available(FlavorResource) == milli(10)
    lend = flat(b_limits=(None, 1)).cache
    assert lend.cqs["A"].available(FlavorResource) == milli(10)
    assert lend.cqs["B"].available(FlavorResource) == milli(12 + 9)
    assert lend.cqs["A"].potential_available(FlavorResource) == milli(10)


def test_flat_cohort_admits_up_to_borrowing_limit() -> None:
    s = Scheduler(clock=ManualClock(T0))
    s.upsert_namespace(namespace("ns"))
    s.upsert_resource_flavor(flavor("f"))
    s.upsert_cluster_queue(CQ("A").cohort("co").flavor("f", cpu=(9, 1)).obj())
    s.upsert_cluster_queue(CQ("B").cohort("co").flavor("f", cpu=12).obj())
    s.upsert_local_queue(local_queue("ns", "lq", "A"))
    s.upsert_workload(workload("big", cpu="11"))
    s.upsert_workload(workload("ten", cpu="10", created=T0 + 1))
    result = s.schedule()
    assert [a.name for a in result.admitted] == ["ten"]
    assert result.admitted[0].borrowing is True
    big = next(p for p in result.pending if p.name == "big")
    assert big.reason == "ExceedsMaxQuota"
    assert big.message == (
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f, "
        "previously considered podsets requests (0) + current podset request (11) > "
        "maximum capacity (10)"
    )


def test_cohort_cycle_makes_members_inactive() -> None:
    s = Scheduler(clock=ManualClock(T0))
    s.upsert_resource_flavor(flavor("f"))
    s.upsert_cohort(cohort("x", parent="y"))
    s.upsert_cohort(cohort("y", parent="x"))
    s.upsert_cluster_queue(CQ("A").cohort("x").flavor("f", cpu=1).obj())
    s.upsert_cluster_queue(CQ("B").cohort("other").flavor("f", cpu=1).obj())
    assert s.cluster_queue_active("A")[0] is False
    assert s.cluster_queue_active("B") == (True, "Ready", "Can admit new workloads")
    s.upsert_cohort(cohort("y"))
    assert s.cluster_queue_active("A")[0] is True
