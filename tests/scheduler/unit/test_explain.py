"""``explain``: each reason a workload waits, with the numbers and the blocking workloads' names,
computed by the engine rebuilt from the objects (pykueue.scheduler.explain)."""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.clock import format_time
from pykueue.scheduler.explain import explain_workload, load_engine
from pykueue.testing.builders.scheduler_shortcuts import CQ, T0, admitted, flavor, local_queue, namespace, workload

NOW = T0 + 1000


def explain(name: str, *objs: dict[str, Any]) -> dict[str, Any]:
    objects = [namespace("ns"), *objs]
    s, refused = load_engine(objects, NOW)
    assert refused == []
    return explain_workload(s, objects, "ns", name)


def numbers(answer: dict[str, Any], flavor_name: str, resource: str = "cpu") -> dict[str, Any]:
    entry = next(f for f in answer["flavors"] if f["flavor"] == flavor_name)
    return dict(next(r for r in entry["resources"] if r["resource"] == resource))


def text(answer: dict[str, Any]) -> str:
    return "\n".join(answer["sentences"])


def test_insufficient_quota_names_the_holder_and_the_cpu_to_free() -> None:
    holder = admitted(workload("holder", cpu="3", priority=10), "cq", {"cpu": "f"}, {"cpu": "3"})
    answer = explain(
        "want",
        flavor("f"),
        CQ("cq").flavor("f", cpu=4).obj(),
        local_queue("ns", "lq", "cq"),
        holder,
        workload("want", cpu="3", created=T0 + 5),
    )
    assert answer["state"] == "pending"
    got = numbers(answer, "f")
    assert (got["requested"], got["used"], got["nominal"], got["available"], got["missing"]) == (
        3000,
        3000,
        4000,
        1000,
        2000,
    )
    assert got["limitedBy"] == []
    assert [h["workload"] for h in answer["holders"]] == ["ns/holder"]
    assert answer["holders"][0]["amount"] == 3000
    assert answer["position"] == {"inClusterQueue": 0, "inLocalQueue": 0, "clusterQueue": "cq", "localQueue": "lq"}
    assert answer["engine"]["preemptionPossible"] is False
    assert "withinClusterQueue is Never" in text(answer)
    assert answer["smallestChange"] == "Smallest change: admitted when 2 cpu are freed in ClusterQueue cq (flavor f)."


def test_borrowing_limit_reached() -> None:
    own = admitted(workload("own", cpu="2"), "a", {"cpu": "f"}, {"cpu": "2"})
    answer = explain(
        "want",
        flavor("f"),
        CQ("a").cohort("team").flavor("f", cpu=(2, 2)).obj(),
        CQ("b").cohort("team").flavor("f", cpu=4).obj(),
        local_queue("ns", "lq", "a"),
        own,
        workload("want", cpu="3"),
    )
    got = numbers(answer, "f")
    assert (
        got["requested"],
        got["used"],
        got["nominal"],
        got["borrowingLimit"],
        got["available"],
        got["maximumCapacity"],
        got["missing"],
    ) == (3000, 2000, 2000, 2000, 2000, 4000, 1000)
    assert got["limitedBy"] == ["borrowingLimit"]
    assert "limited by its borrowingLimit 2" in text(answer)
    assert [h["workload"] for h in answer["holders"]] == ["ns/own"]
    assert "borrowingLimit for cpu in flavor f is raised by 1" in answer["smallestChange"]
    # with nothing running the same limit caps what it could ever get
    never = explain(
        "want",
        flavor("f"),
        CQ("a").cohort("team").flavor("f", cpu=(2, 1)).obj(),
        CQ("b").cohort("team").flavor("f", cpu=4).obj(),
        local_queue("ns", "lq", "a"),
        workload("want", cpu="4"),
    )
    assert numbers(never, "f")["limitedBy"] == ["maximumCapacity", "borrowingLimit"]
    assert "it can never get 4 cpu of flavor f here (at most 3)" in never["smallestChange"]


def test_a_peers_lending_limit() -> None:
    own = admitted(workload("own", cpu="1"), "a", {"cpu": "f"}, {"cpu": "1"})
    answer = explain(
        "want",
        flavor("f"),
        CQ("a").cohort("team").flavor("f", cpu=2).obj(),
        CQ("b").cohort("team").flavor("f", cpu=(4, None, 1)).obj(),
        local_queue("ns", "lq", "a"),
        own,
        workload("want", cpu="3"),
    )
    got = numbers(answer, "f")
    assert (got["used"], got["available"], got["borrowableFromCohort"], got["missing"]) == (1000, 2000, 1000, 1000)
    assert got["limitedBy"] == ["lendingLimit"]
    assert got["peerLendingLimits"] == [{"clusterQueue": "b", "lendingLimit": 1000, "nominal": 4000, "withheld": 3000}]
    assert "ClusterQueue b lends at most 1 of its nominal 4 (lendingLimit), keeping 3 unused" in text(answer)
    assert "admitted when 1 cpu are freed in cohort team" in answer["smallestChange"]


def test_preemption_forbidden_by_policy_and_allowed_when_it_is_not() -> None:
    holder = admitted(workload("holder", cpu="4", priority=10), "cq", {"cpu": "f"}, {"cpu": "4"})
    cq = CQ("cq").flavor("f", cpu=4).preemption(within="LowerPriority")
    answer = explain(
        "want", flavor("f"), cq.obj(), local_queue("ns", "lq", "cq"), holder, workload("want", cpu="2", priority=5)
    )
    assert answer["engine"]["preemptionPossible"] is False
    [reason] = answer["engine"]["forbiddenBy"]
    assert reason == (
        "withinClusterQueue is LowerPriority and no workload holding the quota in ClusterQueue cq "
        "(ns/holder) has a priority below its own (5)"
    )
    low = admitted(workload("low", cpu="4", priority=1), "cq", {"cpu": "f"}, {"cpu": "4"})
    allowed = explain(
        "want", flavor("f"), cq.obj(), local_queue("ns", "lq", "cq"), low, workload("want", cpu="2", priority=5)
    )
    assert allowed["engine"]["preemptionTargets"] == [{"workload": "ns/low", "reason": "InClusterQueue"}]
    assert "smallestChange" not in allowed


def test_preemption_allowed_by_policy_but_not_enough() -> None:
    low = admitted(workload("low", cpu="1", priority=1), "cq", {"cpu": "f"}, {"cpu": "1"})
    high = admitted(workload("high", cpu="3", priority=10), "cq", {"cpu": "f"}, {"cpu": "3"})
    cq = CQ("cq").flavor("f", cpu=4).preemption(within="LowerPriority")
    answer = explain(
        "want", flavor("f"), cq.obj(), local_queue("ns", "lq", "cq"), low, high, workload("want", cpu="3", priority=5)
    )
    assert [h["workload"] for h in answer["holders"]] == ["ns/high", "ns/low"]
    assert answer["engine"]["forbiddenBy"] == [
        "evicting every workload its preemption policies allow (ns/low) would still not free enough"
    ]
    assert "admitted when 3 cpu are freed in ClusterQueue cq" in answer["smallestChange"]


def test_reclaim_forbidden_names_the_borrower() -> None:
    borrower = admitted(workload("borrower", queue="lq-b", cpu="4"), "b", {"cpu": "f"}, {"cpu": "4"})
    answer = explain(
        "want",
        flavor("f"),
        CQ("a").cohort("team").flavor("f", cpu=2).obj(),
        CQ("b").cohort("team").flavor("f", cpu=2).obj(),
        local_queue("ns", "lq", "a"),
        local_queue("ns", "lq-b", "b"),
        borrower,
        workload("want", cpu="2"),
    )
    assert [(h["workload"], h["clusterQueue"], h["borrowing"]) for h in answer["holders"]] == [
        ("ns/borrower", "b", True)
    ]
    assert answer["engine"]["forbiddenBy"] == [
        "reclaimWithinCohort is Never, so it may not reclaim the quota borrowed by ns/borrower (ClusterQueue b)"
    ]


def test_no_matching_flavor_because_of_a_taint() -> None:
    tainted = flavor("gpu", taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}])
    answer = explain(
        "want", tainted, CQ("cq").flavor("gpu", cpu=8).obj(), local_queue("ns", "lq", "cq"), workload("want", cpu="1")
    )
    [entry] = answer["flavors"]
    assert entry["eligible"] is False
    assert entry["reason"] == "untolerated taint {nvidia.com/gpu true NoSchedule <nil>} in flavor gpu"
    assert answer["engine"] == {"mode": "NO_FIT", "preemptionPossible": False}
    assert answer["smallestChange"].startswith("No flavor of ClusterQueue cq can host it (untolerated taint")


def test_inactive_cluster_queue() -> None:
    answer = explain(
        "want", CQ("cq").flavor("missing", cpu=8).obj(), local_queue("ns", "lq", "cq"), workload("want", cpu="1")
    )
    assert answer["clusterQueue"] == {"name": "cq", "active": False, "reason": "FlavorNotFound"}
    assert "ClusterQueue cq is inactive (FlavorNotFound)" in text(answer)
    assert "missing" in text(answer)
    stopped = explain(
        "want",
        flavor("f"),
        CQ("cq").flavor("f", cpu=8).set("stopPolicy", "Hold").obj(),
        local_queue("ns", "lq", "cq"),
        workload("want", cpu="1"),
    )
    assert stopped["clusterQueue"]["reason"] == "Stopped"


def test_waiting_for_preempted_victims_to_leave() -> None:
    victim = admitted(workload("victim", cpu="4", priority=1), "cq", {"cpu": "f"}, {"cpu": "4"})
    message = (
        "Preempted to accommodate a workload (UID: uid-want, JobUID: UNKNOWN) due to prioritization in the ClusterQueue"
    )
    victim["status"]["conditions"] += [
        {"type": "Evicted", "status": "True", "reason": "Preempted", "message": message},
        {"type": "Preempted", "status": "True", "reason": "InClusterQueue", "message": message},
    ]
    want = workload("want", cpu="4", priority=10)
    want["status"] = {
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "False",
                "reason": "WaitingForPreemptedWorkloads",
                "message": "Pending the preemption",
            }
        ]
    }
    objs = [
        flavor("f"),
        CQ("cq").flavor("f", cpu=4).preemption(within="LowerPriority").obj(),
        local_queue("ns", "lq", "cq"),
        victim,
        want,
    ]
    answer = explain("want", *objs)
    assert answer["waitingFor"] == ["ns/victim"]
    assert (
        "Waiting for the workloads preempted to make room for it to release their quota: ns/victim."
        in answer["sentences"]
    )
    # the victim's side: by whom, under which policy
    evicted = explain("victim", *objs)
    assert evicted["eviction"]["preemptedBy"] == "ns/want"
    assert evicted["eviction"]["policy"] == "withinClusterQueue"
    assert (
        "Preempted by ns/want (ClusterQueue cq), reason InClusterQueue, under the withinClusterQueue policy "
        "(withinClusterQueue: LowerPriority)." in evicted["sentences"]
    )


def test_strict_fifo_blocked_behind_its_head() -> None:
    holder = admitted(workload("holder", cpu="2"), "cq", {"cpu": "f"}, {"cpu": "2"})
    objs = [
        flavor("f"),
        CQ("cq").strategy("StrictFIFO").flavor("f", cpu=4).obj(),
        local_queue("ns", "lq", "cq"),
        holder,
        workload("head", cpu="3", priority=5, created=T0),
        workload("small", cpu="1", created=T0 + 1),
    ]
    answer = explain("small", *objs)
    assert answer["position"]["inClusterQueue"] == 1
    assert answer["blockedBy"] == {"workload": "ns/head", "priority": 5}
    assert "StrictFIFO: it waits behind the head ns/head (priority 5)" in text(answer)
    assert answer["engine"]["mode"] == "FIT"
    head = explain("head", *objs)
    assert "blockedBy" not in head
    assert numbers(head, "f")["missing"] == 1000


def test_admitted_workload_flavors_borrowing_and_wait() -> None:
    wl = workload("in", cpu="3", created=T0)
    done = admitted(wl, "a", {"cpu": "f"}, {"cpu": "3"}, at=T0 + 90)
    answer = explain(
        "in",
        flavor("f"),
        CQ("a").cohort("team").flavor("f", cpu=2).obj(),
        CQ("b").cohort("team").flavor("f", cpu=4).obj(),
        local_queue("ns", "lq", "a"),
        done,
    )
    assert answer["state"] == "admitted"
    assert answer["admission"]["borrowing"] is True
    assert answer["admission"]["waitedSeconds"] == 90
    assert answer["admission"]["at"] == format_time(T0 + 90)
    assert "Admitted by ClusterQueue a: pod set main (1 pods): cpu in f, using 3 cpu." in answer["sentences"]
    assert "borrowing 1 cpu of flavor f from cohort team" in text(answer)


def test_workloads_that_are_not_queued_say_why() -> None:
    base = [flavor("f"), CQ("cq").flavor("f", cpu=8).obj()]
    stopped = explain("want", *base, local_queue("ns", "lq", "cq"), workload("want", active=False))
    assert stopped["sentences"] == [
        "Stopped: spec.active is false, so it is not queued (resume it with `kubectl kueue resume workload`)."
    ]
    no_lq = explain("want", *base, workload("want", queue="missing"))
    assert no_lq["sentences"] == ["LocalQueue missing does not exist in namespace ns."]
    held = explain("want", *base, local_queue("ns", "lq", "cq", stopPolicy="Hold"), workload("want"))
    assert held["sentences"] == ["LocalQueue lq is stopped (stopPolicy Hold)."]
    no_cq = explain("want", flavor("f"), local_queue("ns", "lq", "gone"), workload("want"))
    assert no_cq["sentences"] == ["ClusterQueue gone (of LocalQueue lq) does not exist."]
