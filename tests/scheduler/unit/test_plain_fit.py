"""The flavor-assignment fast path (``plain_fit``) answers exactly like the general assigner.

``plain_fit`` either declines (None: the caller runs ``FlavorAssigner``) or returns an
``Assignment`` equal field by field — flavors in the same order, modes, reasons, borrowing,
usage, mode — to what ``FlavorAssigner.assign()`` computes for the same workload and quota state.
The property test drives random quota trees, usage, pod sets, taints and borrowing limits; the
targeted tests pin down that the fast path really is taken for the common shape and declined for
each condition it does not cover.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.scheduler.algorithm.flavor_assigner import Assignment, FlavorAssigner, Mode, plain_fit, plain_no_fit
from pykueue.testing.builders.scheduler_shortcuts import CQ, admitted, flavor, local_queue, make_scheduler, workload

TAINT = [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]


def _snapshot(a: Assignment) -> tuple[Any, ...]:
    """Every field, dicts in insertion order, and the ``status.admission`` it renders (as JSON text,
    so key order counts too)."""
    return (
        json.dumps(a.to_admission("cq")),
        a.mode,
        a.borrowing,
        list(a.usage.items()),
        [
            (
                ps.name,
                ps.count,
                list(ps.requests.items()),
                list(ps.flavors.items()),
                list(ps.modes.items()),
                ps.reasons,
                ps.no_fit_reason,
                ps.mode,
            )
            for ps in a.podsets
        ],
    )


def _both(s: Any, cq_name: str = "cq", key: tuple[str, str] = ("ns", "w")) -> tuple[Assignment, Assignment | None]:
    s.cache.ensure_fresh()
    cq = s.cache.cqs[cq_name]
    wl = s.workloads[key]
    general = FlavorAssigner(wl, cq, s.cache.flavors, s.preemptor.oracle, eligibility=s.eligibility).assign()
    return general, plain_fit(wl, cq, s.eligibility)


def _common(**kw: Any) -> Any:
    return make_scheduler(
        flavor("rf"),
        CQ("cq").set("cohortName", "co").flavor("rf", cpu=4).obj(),
        CQ("other").set("cohortName", "co").flavor("rf", cpu=4).obj(),
        local_queue("ns", "lq", "cq"),
        workload("w", **kw),
    )


def test_common_shape_takes_the_fast_path_with_the_general_answer() -> None:
    s = _common(cpu="2")
    general, fast = _both(s)
    assert fast is not None
    assert _snapshot(fast) == _snapshot(general)
    assert list(fast.usage.items()) == [(("rf", "cpu"), 2000)]


def test_plan_is_reused_per_pod_set_and_dropped_when_the_cq_spec_changes() -> None:
    s = _common(cpu="1")
    _both(s)
    cq = s.cache.cqs["cq"]
    ps = s.workloads[("ns", "w")].podsets[0]
    assert cq.plans[id(ps)][0] is ps
    s.upsert_cluster_queue(CQ("cq").set("cohortName", "co").group("cpu", "pods").flavor("rf", cpu=4, pods=2).obj())
    s.cache.ensure_fresh()
    assert s.cache.cqs["cq"].plans == {}
    general, fast = _both(s)  # "pods" is covered now: the plan must count it
    assert fast is not None
    assert _snapshot(fast) == _snapshot(general)
    assert fast.usage == {("rf", "cpu"): 1000, ("rf", "pods"): 1}


def test_needs_borrowing_declines() -> None:
    s = _common(cpu="5")  # fits only by borrowing from "other"
    general, fast = _both(s)
    assert fast is None
    assert general.borrowing > 0


def test_untolerated_taint_on_first_flavor_declines() -> None:
    s = make_scheduler(
        flavor("tainted", taints=TAINT),
        flavor("plain"),
        CQ("cq").flavor("tainted", cpu=4).flavor("plain", cpu=4).obj(),
        local_queue("ns", "lq", "cq"),
        workload("w", cpu="1"),
    )
    general, fast = _both(s)
    assert fast is None
    assert general.podsets[0].flavors == {"cpu": "plain"}


def test_unknown_eligibility_declines_until_the_general_path_memoised_it() -> None:
    s = _common(cpu="1")
    s.cache.ensure_fresh()
    cq, wl = s.cache.cqs["cq"], s.workloads[("ns", "w")]
    assert plain_fit(wl, cq, s.eligibility) is None  # first sight of this (pod template, flavor)
    general, fast = _both(s)
    assert fast is not None
    assert _snapshot(fast) == _snapshot(general)


def test_resources_in_two_groups_decline() -> None:
    cq = CQ("cq").group("cpu").flavor("a", cpu=4).group("memory").flavor("b", memory="4Gi").obj()
    s = make_scheduler(
        flavor("a"), flavor("b"), cq, local_queue("ns", "lq", "cq"), workload("w", cpu="1", requests={"memory": "1Gi"})
    )
    general, fast = _both(s)
    assert fast is None
    assert general.podsets[0].flavors == {"cpu": "a", "memory": "b"}


def test_two_pod_sets_decline() -> None:
    ps = [
        {
            "name": n,
            "count": 1,
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
        }
        for n in ("driver", "workers")
    ]
    s = _common(podsets=ps)
    _general, fast = _both(s)
    assert fast is None


@st.composite
def _situation(draw: st.DrawFn) -> Any:
    resources = draw(st.sampled_from([("cpu",), ("cpu", "memory"), ("cpu", "pods"), ("cpu", "memory", "pods")]))
    two_flavors = draw(st.booleans())
    tainted = draw(st.booleans())
    cohort = draw(st.booleans())
    borrowing_limit = draw(st.sampled_from([None, 0, 1, 4]))

    def quotas() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for r in resources:
            nominal = draw(st.integers(0, 6))
            q = f"{nominal}Gi" if r == "memory" else nominal
            out[r] = (q, borrowing_limit) if cohort and borrowing_limit is not None and r != "memory" else q
        return out

    cq = CQ("cq")
    if cohort:
        cq.set("cohortName", "co")
    policies = draw(
        st.sampled_from(
            [
                None,
                {"withinClusterQueue": "LowerPriority"},
                {"reclaimWithinCohort": "Any"},
                {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}},
            ]
        )
    )
    if policies is not None:
        cq.set("preemption", policies)
    cq.group(*resources).flavor("f1", **quotas())
    if two_flavors:
        cq.flavor("f2", **quotas())
    objs: list[dict[str, Any]] = [
        flavor("f1", taints=TAINT if tainted else None),
        flavor("f2"),
        cq.obj(),
        local_queue("ns", "lq", "cq"),
    ]
    if cohort:
        objs.append(CQ("other").set("cohortName", "co").group(*resources).flavor("f1", **quotas()).obj())
        objs.append(local_queue("ns", "lq2", "other"))
    for i in range(draw(st.integers(0, 3))):  # running workloads using quota in either CQ
        owner = draw(st.sampled_from(["cq", "other"] if cohort else ["cq"]))
        fname = draw(st.sampled_from(["f1", "f2"] if two_flavors and owner == "cq" else ["f1"]))
        cpu = draw(st.integers(0, 5))
        objs.append(
            admitted(
                workload(f"run{i}", queue="lq" if owner == "cq" else "lq2", cpu=str(cpu)),
                owner,
                {"cpu": fname},
                {"cpu": str(cpu)},
            )
        )
    requests: dict[str, str] = {}
    if "memory" in resources and draw(st.booleans()):
        requests["memory"] = f"{draw(st.integers(0, 3))}Gi"
    if draw(st.booleans()):
        requests["example.com/gpu"] = "1"  # not covered by the CQ
    count = draw(st.integers(0, 3))
    objs.append(workload("w", cpu=str(draw(st.integers(0, 3))), count=count, requests=requests))
    return objs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_situation())
def test_fast_path_equals_general_assigner(objs: list[dict[str, Any]]) -> None:
    s = make_scheduler(*objs)
    general, fast = _both(s)  # the general path runs first and memoises flavor eligibility
    if fast is not None:
        assert _snapshot(fast) == _snapshot(general)
    fast_again = plain_fit(s.workloads[("ns", "w")], s.cache.cqs["cq"], s.eligibility)
    assert (fast_again is None) == (fast is None)


def _both_failing(s: Any) -> tuple[Assignment, Assignment | None]:
    s.cache.ensure_fresh()
    cq = s.cache.cqs["cq"]
    wl = s.workloads[("ns", "w")]
    general = FlavorAssigner(wl, cq, s.cache.flavors, s.preemptor.oracle, eligibility=s.eligibility).assign()
    return general, plain_no_fit(wl, cq, s.eligibility, s.preemptor.oracle)


def test_a_head_short_of_quota_takes_the_failure_fast_path_with_the_general_answer() -> None:
    """Quota exhausted in the CQ and its cohort: the common failing head, NoCandidates (the
    oracle is asked: nominal covers the request) without preemption policies."""
    s = make_scheduler(
        flavor("rf"),
        CQ("cq").set("cohortName", "co").flavor("rf", cpu=2).obj(),
        CQ("other").set("cohortName", "co").flavor("rf", cpu=2).obj(),
        local_queue("ns", "lq", "cq"),
        local_queue("ns", "lq2", "other"),
        admitted(workload("mine", cpu="2"), "cq", {"cpu": "rf"}, {"cpu": "2"}),
        admitted(workload("theirs", queue="lq2", cpu="2"), "other", {"cpu": "rf"}, {"cpu": "2"}),
        workload("w", cpu="1"),
    )
    general, fast = _both_failing(s)
    assert fast is not None
    assert _snapshot(fast) == _snapshot(general)
    assert fast.mode == Mode.PREEMPT  # no candidates: the cycle reports WaitingForQuota
    assert fast.podsets[0].reasons == ["insufficient unused quota for cpu in flavor rf, 1 more needed"]


@st.composite
def _short_of_quota(draw: st.DrawFn) -> Any:
    """One flavor, quota mostly used by running workloads of both CQs, random priorities and
    preemption policies: the situations the failure fast path is for, and its neighbours."""
    resources = draw(st.sampled_from([("cpu",), ("cpu", "memory"), ("cpu", "pods")]))
    cohort = draw(st.booleans())
    borrowing_limit = draw(st.sampled_from([None, 0, 1]))
    policies = draw(
        st.sampled_from(
            [
                None,
                {"withinClusterQueue": "LowerPriority"},
                {"withinClusterQueue": "LowerOrNewerEqualPriority"},
                {"reclaimWithinCohort": "Any"},
                {"reclaimWithinCohort": "LowerPriority"},
                {"reclaimWithinCohort": "Any", "borrowWithinCohort": {"policy": "LowerPriority"}},
            ]
        )
    )

    def quotas() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for r in resources:
            nominal = draw(st.integers(1, 4))
            q = f"{nominal}Gi" if r == "memory" else nominal
            out[r] = (q, borrowing_limit) if cohort and borrowing_limit is not None and r == "cpu" else q
        return out

    cq = CQ("cq").group(*resources).flavor("f1", **quotas())
    if cohort:
        cq.set("cohortName", "co")
    if policies is not None:
        cq.set("preemption", policies)
    objs: list[dict[str, Any]] = [flavor("f1"), cq.obj(), local_queue("ns", "lq", "cq")]
    if cohort:
        objs.append(CQ("other").set("cohortName", "co").group(*resources).flavor("f1", **quotas()).obj())
        objs.append(local_queue("ns", "lq2", "other"))
    for i in range(draw(st.integers(1, 4))):
        owner = draw(st.sampled_from(["cq", "other"] if cohort else ["cq"]))
        cpu = draw(st.integers(1, 3))
        objs.append(
            admitted(
                workload(
                    f"run{i}", queue="lq" if owner == "cq" else "lq2", cpu=str(cpu), priority=draw(st.integers(0, 2))
                ),
                owner,
                {"cpu": "f1"},
                {"cpu": str(cpu)},
            )
        )
    requests = {"memory": f"{draw(st.integers(0, 2))}Gi"} if "memory" in resources and draw(st.booleans()) else {}
    objs.append(
        workload(
            "w",
            cpu=str(draw(st.integers(1, 4))),
            count=draw(st.integers(1, 2)),
            requests=requests,
            priority=draw(st.integers(0, 2)),
        )
    )
    return objs


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_short_of_quota(), _situation()))
def test_failure_fast_path_equals_general_assigner(objs: list[dict[str, Any]]) -> None:
    s = make_scheduler(*objs)
    general, fast = _both_failing(s)  # the general path runs first and memoises flavor eligibility
    if fast is not None:
        assert _snapshot(fast) == _snapshot(general)
        assert fast.mode != Mode.FIT


def test_failure_fast_path_stops_at_the_first_resource_nothing_can_free() -> None:
    """cpu is short beyond the CQ's nominal quota (no oracle: nothing to reclaim), memory is short
    too: like the general path, only cpu is reported and nothing is assigned."""
    s = make_scheduler(
        flavor("f1"),
        CQ("cq").set("cohortName", "co").group("cpu", "memory").flavor("f1", cpu=1, memory="1Gi").obj(),
        CQ("other").set("cohortName", "co").group("cpu", "memory").flavor("f1", cpu=4, memory="4Gi").obj(),
        local_queue("ns", "lq", "cq"),
        local_queue("ns", "lq2", "other"),
        admitted(
            workload("theirs", queue="lq2", cpu="4", requests={"memory": "4Gi"}),
            "other",
            {"cpu": "f1", "memory": "f1"},
            {"cpu": "4", "memory": "4Gi"},
        ),
        workload("w", cpu="2", requests={"memory": "2Gi"}),
    )
    general, fast = _both_failing(s)
    assert fast is not None
    assert _snapshot(fast) == _snapshot(general)
    assert fast.mode == Mode.NO_FIT
    assert fast.podsets[0].reasons == ["insufficient unused quota for cpu in flavor f1, 1 more needed"]
