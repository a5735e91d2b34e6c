"""Flavor assignment: flavor order, eligibility, modes, fungibility, messages with numbers."""

from __future__ import annotations

from typing import Any

import pytest

from pykueue.scheduler.algorithm.flavor_assigner import WORST, Granular, is_preferred
from pykueue.testing.builders.scheduler_shortcuts import (
    CQ,
    T0,
    admitted,
    by_name,
    flavor,
    local_queue,
    make_scheduler,
    workload,
)

LQ = local_queue("ns", "lq", "cq")


def flavors_of(admit: Any) -> dict[str, str]:
    return admit.admission["podSetAssignments"][0]["flavors"]


def test_first_flavor_with_room_is_taken_in_listed_order() -> None:
    s = make_scheduler(
        flavor("a"), flavor("b"), CQ("cq").flavor("a", cpu=1).flavor("b", cpu=4).obj(), LQ, workload("w", cpu="2")
    )
    [admit] = s.schedule().admitted
    assert flavors_of(admit) == {"cpu": "b"}
    assert admit.admission["podSetAssignments"][0]["resourceUsage"] == {"cpu": "2"}


def test_insufficient_unused_quota_message_has_the_missing_amount() -> None:
    s = make_scheduler(
        flavor("default-flavor"),
        CQ("cq").flavor("default-flavor", cpu=4).obj(),
        LQ,
        admitted(workload("running", cpu="2"), "cq", {"cpu": "default-flavor"}, {"cpu": "2"}),
        workload("w", cpu="4"),
    )
    [pending] = s.schedule().pending
    assert pending.reason == "WaitingForQuota"
    assert pending.message == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
        "flavor default-flavor, 2 more needed"
    )
    assert pending.resource_requests == [{"name": "main", "resources": {"cpu": "4"}}]


def test_exceeds_max_quota_message_and_reason() -> None:
    s = make_scheduler(flavor("f"), CQ("cq").flavor("f", cpu=4).obj(), LQ, workload("w", cpu="5"))
    [pending] = s.schedule().pending
    assert pending.reason == "ExceedsMaxQuota"
    assert pending.message == (
        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f, "
        "previously considered podsets requests (0) + current podset request (5) > "
        "maximum capacity (4)"
    )


def test_previous_pod_sets_usage_counts_for_later_pod_sets() -> None:
    ps = [
        {
            "name": n,
            "count": 1,
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}},
        }
        for n in ("driver", "workers")
    ]
    s = make_scheduler(flavor("f"), CQ("cq").flavor("f", cpu=4).obj(), LQ, workload("w", podsets=ps))
    [pending] = s.schedule().pending
    assert pending.message == (
        "couldn't assign flavors to pod set workers: insufficient quota for cpu in "
        "flavor f, previously considered podsets requests (3) + current podset request "
        "(3) > maximum capacity (4)"
    )


def test_resource_not_covered_by_the_cluster_queue() -> None:
    s = make_scheduler(
        flavor("f"), CQ("cq").flavor("f", cpu=4).obj(), LQ, workload("w", requests={"nvidia.com/gpu": "1"})
    )
    [pending] = s.schedule().pending
    assert pending.reason == "NoMatchingFlavor"
    assert pending.message == (
        "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in ClusterQueue"
    )


def test_zero_request_for_an_uncovered_resource_is_ignored() -> None:
    s = make_scheduler(
        flavor("f"), CQ("cq").flavor("f", cpu=4).obj(), LQ, workload("w", requests={"nvidia.com/gpu": "0"})
    )
    assert [a.name for a in s.schedule().admitted] == ["w"]


def test_untolerated_taint_skips_the_flavor() -> None:
    tainted = flavor("spot", taints=[{"key": "instance", "value": "spot", "effect": "NoSchedule"}])
    s = make_scheduler(tainted, CQ("cq").flavor("spot", cpu=4).obj(), LQ, workload("w"))
    [pending] = s.schedule().pending
    assert pending.reason == "NoMatchingFlavor"
    assert pending.message == (
        "couldn't assign flavors to pod set main: untolerated taint {instance spot NoSchedule <nil>} in flavor spot"
    )


def test_toleration_on_the_pod_or_the_flavor_allows_a_tainted_flavor() -> None:
    taint = [{"key": "instance", "value": "spot", "effect": "NoSchedule"}]
    toleration = [{"key": "instance", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}]
    ps = [
        {
            "name": "main",
            "count": 1,
            "template": {
                "spec": {
                    "tolerations": toleration,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                }
            },
        }
    ]
    s = make_scheduler(
        flavor("spot", taints=taint), CQ("cq").flavor("spot", cpu=4).obj(), LQ, workload("w", podsets=ps)
    )
    assert len(s.schedule().admitted) == 1
    s = make_scheduler(
        flavor("spot", taints=taint, tolerations=toleration), CQ("cq").flavor("spot", cpu=4).obj(), LQ, workload("w")
    )
    assert len(s.schedule().admitted) == 1


def test_prefer_no_schedule_taint_is_ignored() -> None:
    s = make_scheduler(
        flavor("f", taints=[{"key": "k", "effect": "PreferNoSchedule"}]),
        CQ("cq").flavor("f", cpu=4).obj(),
        LQ,
        workload("w"),
    )
    assert len(s.schedule().admitted) == 1


@pytest.mark.parametrize(
    ("selector", "affinity", "want"),
    [
        pytest.param({"zone": "b"}, None, "b", id="node-selector-picks-matching-flavor"),
        pytest.param({"other-key": "x"}, None, "a", id="keys-unknown-to-the-flavor-are-ignored"),
        pytest.param({}, [[{"key": "zone", "operator": "In", "values": ["b"]}]], "b", id="required-affinity"),
        pytest.param({}, [[{"key": "zone", "operator": "NotIn", "values": ["a"]}]], "b", id="affinity-not-in"),
        pytest.param(
            {},
            [[{"key": "unknown", "operator": "In", "values": ["x"]}]],
            "a",
            id="term-empty-after-filtering-matches-everything",
        ),
    ],
)
def test_node_selector_and_affinity_restricted_to_flavor_label_keys(
    selector: dict[str, str], affinity: Any, want: str
) -> None:
    spec: dict[str, Any] = {
        "nodeSelector": selector,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
    }
    if affinity:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": t} for t in affinity]
                }
            }
        }
    s = make_scheduler(
        flavor("a", labels={"zone": "a"}),
        flavor("b", labels={"zone": "b"}),
        CQ("cq").flavor("a", cpu=4).flavor("b", cpu=4).obj(),
        LQ,
        workload("w", podsets=[{"name": "main", "count": 1, "template": {"spec": spec}}]),
    )
    [admit] = s.schedule().admitted
    assert flavors_of(admit) == {"cpu": want}


def test_affinity_mismatch_message() -> None:
    spec = {"nodeSelector": {"zone": "c"}, "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    s = make_scheduler(
        flavor("a", labels={"zone": "a"}),
        CQ("cq").flavor("a", cpu=4).obj(),
        LQ,
        workload("w", podsets=[{"name": "main", "count": 1, "template": {"spec": spec}}]),
    )
    [pending] = s.schedule().pending
    assert pending.message == "couldn't assign flavors to pod set main: flavor a doesn't match node affinity"
    assert pending.reason == "NoMatchingFlavor"


def test_all_resources_of_a_group_get_the_same_flavor() -> None:
    cq = CQ("cq").group("cpu", "memory").flavor("a", cpu=1, memory="1Gi").flavor("b", cpu=4, memory="4Gi")
    s = make_scheduler(flavor("a"), flavor("b"), cq.obj(), LQ, workload("w", requests={"cpu": "500m", "memory": "2Gi"}))
    [admit] = s.schedule().admitted
    assert flavors_of(admit) == {"cpu": "b", "memory": "b"}
    assert admit.admission["podSetAssignments"][0]["resourceUsage"] == {"cpu": "500m", "memory": "2Gi"}


def test_independent_resource_groups_choose_flavors_separately() -> None:
    cq = (
        CQ("cq")
        .group("cpu")
        .flavor("c1", cpu=4)
        .group("nvidia.com/gpu")
        .flavor("g1", nvidia_com_gpu=0)
        .flavor("g2", nvidia_com_gpu=2)
    )
    s = make_scheduler(
        flavor("c1"),
        flavor("g1"),
        flavor("g2"),
        cq.obj(),
        LQ,
        workload("w", requests={"cpu": "1", "nvidia.com/gpu": "1"}),
    )
    [admit] = s.schedule().admitted
    assert flavors_of(admit) == {"cpu": "c1", "nvidia.com/gpu": "g2"}


def test_pods_resource_counts_pods_when_covered() -> None:
    cq = CQ("cq").group("cpu", "pods").flavor("f", cpu=10, pods=2)
    s = make_scheduler(flavor("f"), cq.obj(), LQ, workload("w", cpu="1", count=3))
    [pending] = s.schedule().pending
    assert "insufficient quota for pods in flavor f" in pending.message
    s = make_scheduler(flavor("f"), cq.obj(), LQ, workload("w", cpu="1", count=2))
    [admit] = s.schedule().admitted
    assert admit.admission["podSetAssignments"][0]["resourceUsage"] == {"cpu": "2", "pods": "2"}


def borrowing_world(when_can_borrow: str) -> Any:
    cq = CQ("cq").cohort("co").flavor("a", cpu=1).flavor("b", cpu=4).fungibility(borrow=when_can_borrow)
    other = CQ("other").cohort("co").flavor("a", cpu=10)
    return make_scheduler(flavor("a"), flavor("b"), cq.obj(), other.obj(), LQ, workload("w", cpu="2"))


def test_when_can_borrow_may_stop_search_borrows_in_the_first_flavor() -> None:
    [admit] = borrowing_world("MayStopSearch").schedule().admitted
    assert flavors_of(admit) == {"cpu": "a"}
    assert admit.borrowing is True


def test_when_can_borrow_try_next_flavor_prefers_a_flavor_without_borrowing() -> None:
    [admit] = borrowing_world("TryNextFlavor").schedule().admitted
    assert flavors_of(admit) == {"cpu": "b"}
    assert admit.borrowing is False


def preemption_world(
    when_can_preempt: str,
    preference: str | None = None,
    when_can_borrow: str = "MayStopSearch",
) -> Any:
    cq = (
        CQ("cq")
        .cohort("co")
        .flavor("a", cpu=2)
        .flavor("b", cpu=0)
        .preemption(within="LowerPriority")
        .fungibility(borrow=when_can_borrow, preempt=when_can_preempt, preference=preference)
    )
    other = CQ("other").cohort("co").flavor("b", cpu=4)
    return make_scheduler(
        flavor("a"),
        flavor("b"),
        cq.obj(),
        other.obj(),
        LQ,
        admitted(workload("low", cpu="2", priority=0), "cq", {"cpu": "a"}, {"cpu": "2"}),
        workload("high", cpu="2", priority=5, created=T0 + 5),
    )


def test_when_can_preempt_try_next_flavor_borrows_instead_of_preempting() -> None:
    result = preemption_world("TryNextFlavor").schedule()
    assert [flavors_of(a) for a in result.admitted] == [{"cpu": "b"}]
    assert result.preempted == []


def test_when_can_preempt_may_stop_search_preempts_in_the_first_flavor() -> None:
    result = preemption_world("MayStopSearch").schedule()
    assert result.admitted == []
    assert [(p.name, p.reason) for p in result.preempted] == [("low", "InClusterQueue")]
    pending = by_name(result.pending)["high"]
    assert pending.reason == "WaitingForPreemptedWorkloads"
    assert pending.message.endswith("Pending the preemption of 1 workload(s)")


def test_preference_preemption_over_borrowing_picks_the_non_borrowing_flavor() -> None:
    result = preemption_world("TryNextFlavor", "PreemptionOverBorrowing", "TryNextFlavor").schedule()
    assert result.admitted == []
    assert [p.name for p in result.preempted] == ["low"]


@pytest.mark.parametrize(
    ("a", "b", "preference", "want"),
    [
        pytest.param((Granular.FIT, 1), (Granular.PREEMPT, 0), None, True, id="fit-beats-preempt-by-default"),
        pytest.param(
            (Granular.FIT, 1),
            (Granular.PREEMPT, 0),
            "PreemptionOverBorrowing",
            False,
            id="lower-borrowing-first-with-preemption-over-borrowing",
        ),
        pytest.param((Granular.RECLAIM, 0), (Granular.PREEMPT, 0), None, True, id="reclaim-beats-preempt"),
        pytest.param(
            (Granular.NO_CANDIDATES, 0),
            (Granular.PREEMPT, 3),
            "PreemptionOverBorrowing",
            False,
            id="no-candidates-ranks-below-viable",
        ),
        pytest.param((Granular.NO_FIT, 0), WORST, None, False, id="no-fit-never-preferred"),
        pytest.param((Granular.NO_CANDIDATES, 0), WORST, None, True, id="anything-beats-no-fit"),
        pytest.param((Granular.FIT, 0), (Granular.FIT, 1), None, True, id="same-mode-lower-borrowing"),
    ],
)
def test_is_preferred_ordering(a: Any, b: Any, preference: str | None, want: bool) -> None:
    assert is_preferred(a, b, preference) is want


def test_missing_flavor_makes_the_cluster_queue_inactive() -> None:
    s = make_scheduler(CQ("cq").flavor("gone", cpu=4).flavor("also-gone", cpu=1).obj(), LQ, workload("w"))
    assert s.cluster_queue_active("cq") == (
        False,
        "FlavorNotFound",
        "Can't admit new workloads: references missing ResourceFlavor(s): gone,also-gone.",
    )
    [pending] = s.schedule().pending
    assert (pending.reason, pending.message) == ("Suspended", "ClusterQueue cq is inactive")
    s.upsert_resource_flavor(flavor("gone"))
    s.upsert_resource_flavor(flavor("also-gone"))
    assert [a.name for a in s.schedule().admitted] == ["w"]
