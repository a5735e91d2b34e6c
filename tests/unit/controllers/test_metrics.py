"""Kueue's metrics as the controllers report them: counters on each decision, gauges read at scrape time.

Every test scrapes the registry the way Prometheus would (the text format, parsed back with
prometheus_client's parser), so names, labels and values are checked as a scraper sees them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from tests.waiting import eventually

from pykueue.controllers.config import KueueConfig
from pykueue.controllers.resource_names import CLUSTER_QUEUES, JOBS, WORKLOAD_PRIORITY_CLASSES, WORKLOADS
from pykueue.testing.builders import make_cluster_queue, make_cohort, make_flavor, make_local_queue

from .conftest import Env, cond, make_job

NS = "team-a"
NS_B = "team-b"
ROLE = {"replica_role": "standalone"}


def scrape(registry: CollectorRegistry) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by (sample name, labels)."""
    text = generate_latest(registry).decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(registry: CollectorRegistry, metric: str, /, **labels: str) -> float | None:
    return scrape(registry).get((metric, frozenset({**labels, **ROLE}.items())))


def waiter(registry: CollectorRegistry, metric: str, expected: float, /, **labels: str) -> Any:
    return lambda: value(registry, metric, **labels) == expected or None


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
async def menv(config: KueueConfig, registry: CollectorRegistry) -> AsyncIterator[Env]:
    e = Env(config, metrics=registry)
    await e.start()
    try:
        yield e
    finally:
        await e.stop()


async def _admitted(env: Env, job: str, ns: str = NS) -> Any:
    wl = await env.workload_of_job(job, ns)
    return wl if cond(wl, "Admitted").get("status") == "True" else None


async def _priority_class(env: Env, name: str, value_: int) -> None:
    await env.create(
        WORKLOAD_PRIORITY_CLASSES,
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": name},
            "value": value_,
        },
    )
    await eventually(lambda: env.manager.caches.workload_priority_classes.get(name) is not None or None)


async def test_admission_counts_wait_times_and_pending_gauges(menv: Env, registry: CollectorRegistry) -> None:
    await menv.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await menv.create(JOBS, make_job("first", NS, queue="lq", cpu="3"))
    await eventually(lambda: _admitted(menv, "first"))
    await eventually(waiter(registry, "kueue_admitted_workloads_total", 1, cluster_queue="cq", priority_class=""))
    cq = {"cluster_queue": "cq", "priority_class": ""}
    assert value(registry, "kueue_quota_reserved_workloads_total", **cq) == 1
    assert value(registry, "kueue_quota_reserved_wait_time_seconds_count", **cq) == 1
    assert value(registry, "kueue_admission_wait_time_seconds_count", **cq) == 1
    # no admission checks: admitted in the same write as the reservation, 0 s after it
    assert value(registry, "kueue_admission_checks_wait_time_seconds_count", **cq) == 1
    assert value(registry, "kueue_admission_checks_wait_time_seconds_sum", **cq) == 0
    lq = {"name": "lq", "namespace": NS, "priority_class": ""}
    assert value(registry, "kueue_local_queue_admitted_workloads_total", **lq) == 1
    assert value(registry, "kueue_local_queue_quota_reserved_workloads_total", **lq) == 1
    assert value(registry, "kueue_local_queue_admission_wait_time_seconds_count", **lq) == 1
    assert (value(registry, "kueue_admission_attempts_total", result="success") or 0) >= 1
    # Kueue's wait-time buckets: 1 then 2.5 doubling; 16 for admission, 14 for quota reservation
    assert value(registry, "kueue_admission_wait_time_seconds_bucket", le="40960.0", **cq) == 1
    assert value(registry, "kueue_admission_wait_time_seconds_bucket", le="81920.0", **cq) is None
    assert value(registry, "kueue_quota_reserved_wait_time_seconds_bucket", le="10240.0", **cq) == 1
    assert value(registry, "kueue_quota_reserved_wait_time_seconds_bucket", le="20480.0", **cq) is None

    await menv.create(JOBS, make_job("second", NS, queue="lq", cpu="3"))
    await eventually(
        waiter(registry, "kueue_pending_workloads", 1, cluster_queue="cq", status="inadmissible"),
        what="the second job waits, inadmissible",
    )
    assert value(registry, "kueue_pending_workloads", cluster_queue="cq", status="active") == 0
    assert (value(registry, "kueue_admission_attempts_total", result="inadmissible") or 0) >= 1
    assert value(registry, "kueue_reserving_active_workloads", cluster_queue="cq") == 1
    assert value(registry, "kueue_admitted_active_workloads", cluster_queue="cq") == 1
    assert value(registry, "kueue_local_queue_pending_workloads", name="lq", namespace=NS, status="inadmissible") == 1
    assert value(registry, "kueue_local_queue_reserving_active_workloads", name="lq", namespace=NS) == 1
    assert value(registry, "kueue_local_queue_status", name="lq", namespace=NS, active="True") == 1
    assert value(registry, "kueue_local_queue_status", name="lq", namespace=NS, active="False") == 0
    assert (
        value(
            registry,
            "kueue_local_queue_resource_reservation",
            name="lq",
            namespace=NS,
            flavor="default-flavor",
            resource="cpu",
        )
        == 3
    )

    await menv.finish_job("first", NS)
    await eventually(waiter(registry, "kueue_admitted_workloads_total", 2, **cq), what="the second is admitted")
    assert value(registry, "kueue_pending_workloads", cluster_queue="cq", status="inadmissible") == 0
    assert value(registry, "kueue_admission_wait_time_seconds_count", **cq) == 2


async def test_quota_gauges_per_flavor_with_limits_and_cohorts(menv: Env, registry: CollectorRegistry) -> None:
    await menv.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cohort("root").quota("default-flavor", "cpu", 2).obj(),
        make_cohort("team").parent("root").obj(),
        make_cluster_queue("cq-a")
        .cohort("team")
        .quota("default-flavor", "cpu", 4, borrowing_limit=2, lending_limit=1)
        .quota("default-flavor", "memory", "1Gi")
        .obj(),
        make_cluster_queue("cq-b").cohort("team").quota("default-flavor", "cpu", 6).obj(),
        make_local_queue("lq-a", NS, "cq-a").obj(),
    )
    a = {"cohort": "team", "cluster_queue": "cq-a", "flavor": "default-flavor", "resource": "cpu"}
    await eventually(waiter(registry, "kueue_cluster_queue_nominal_quota", 4, **a))
    assert value(registry, "kueue_cluster_queue_borrowing_limit", **a) == 2
    assert value(registry, "kueue_cluster_queue_lending_limit", **a) == 1
    assert value(registry, "kueue_cluster_queue_nominal_quota", **{**a, "resource": "memory"}) == 1024**3
    b = {**a, "cluster_queue": "cq-b"}
    assert value(registry, "kueue_cluster_queue_borrowing_limit", **b) == math.inf  # no limit: +Inf
    assert value(registry, "kueue_cluster_queue_lending_limit", **b) == math.inf
    assert (
        value(registry, "kueue_cluster_queue_info", cluster_queue="cq-a", parent_cohort="team", root_cohort="root") == 1
    )
    assert value(registry, "kueue_cluster_queue_status", cluster_queue="cq-a", status="active") == 1
    assert value(registry, "kueue_cluster_queue_status", cluster_queue="cq-a", status="pending") == 0
    assert value(registry, "kueue_cohort_info", cohort="team", parent_cohort="root", root_cohort="root") == 1
    # SubtreeQuota: team = lendable of its CQs (1 of cq-a, 6 of cq-b); root = its own 2 + team's 7
    cpu = {"flavor": "default-flavor", "resource": "cpu"}
    assert value(registry, "kueue_cohort_subtree_quota", cohort="team", **cpu) == 7
    assert value(registry, "kueue_cohort_subtree_quota", cohort="root", **cpu) == 9

    await menv.create(JOBS, make_job("big", NS, queue="lq-a", cpu="5"))  # 1 cpu over nominal: borrows
    await eventually(lambda: _admitted(menv, "big"))
    await eventually(waiter(registry, "kueue_cluster_queue_resource_reservation", 5, **a))
    assert value(registry, "kueue_cluster_queue_resource_usage", **a) == 5
    assert value(registry, "kueue_cohort_subtree_admitted_active_workloads", cohort="team") == 1
    assert value(registry, "kueue_cohort_subtree_admitted_active_workloads", cohort="root") == 1
    # beyond cq-a's guaranteed (nominal - lendingLimit = 3): 2 cpu counted in its cohort
    assert value(registry, "kueue_cohort_subtree_resource_reservations", cohort="team", **cpu) == 2

    await menv.client.patch(CLUSTER_QUEUES, "cq-a", {"spec": {"stopPolicy": "Hold"}})
    await eventually(waiter(registry, "kueue_cluster_queue_status", 1, cluster_queue="cq-a", status="pending"))
    await menv.client.delete(CLUSTER_QUEUES, "cq-b")
    await eventually(
        lambda: value(registry, "kueue_cluster_queue_nominal_quota", **b) is None or None,
        what="a deleted ClusterQueue's series go away",
    )


async def test_preemption_in_the_cluster_queue_counts_reason_and_eviction(
    menv: Env, registry: CollectorRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pykueue.admission")
    await menv.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq")
        .quota("default-flavor", "cpu", 4)
        .preemption(within_cluster_queue="LowerPriority")
        .obj(),
        make_local_queue("lq-a", NS, "cq").obj(),
        make_local_queue("lq-b", NS_B, "cq").obj(),
    )
    await _priority_class(menv, "low", 10)
    await _priority_class(menv, "high", 1000)
    await menv.create(JOBS, make_job("low", NS, queue="lq-a", cpu="3", labels={"kueue.x-k8s.io/priority-class": "low"}))
    await eventually(lambda: _admitted(menv, "low"))
    await menv.create(
        JOBS, make_job("high", NS_B, queue="lq-b", cpu="3", labels={"kueue.x-k8s.io/priority-class": "high"})
    )
    await eventually(
        waiter(registry, "kueue_preempted_workloads_total", 1, preempting_cluster_queue="cq", reason="InClusterQueue"),
        what="one preemption counted",
    )
    evicted = {"cluster_queue": "cq", "reason": "Preempted", "underlying_cause": "", "priority_class": "low"}
    assert value(registry, "kueue_evicted_workloads_total", **evicted) == 1
    assert value(registry, "kueue_evicted_workloads_once_total", **evicted) == 1
    assert (
        value(
            registry,
            "kueue_local_queue_evicted_workloads_total",
            name="lq-a",
            namespace=NS,
            reason="Preempted",
            underlying_cause="",
            priority_class="low",
        )
        == 1
    )
    await eventually(lambda: _admitted(menv, "high", NS_B))
    await eventually(waiter(registry, "kueue_admitted_workloads_total", 1, cluster_queue="cq", priority_class="high"))
    # one readable line per decision, with the fields --log-format json shows
    records = [r for r in caplog.records if r.name == "pykueue.admission"]
    (preempted,) = [r for r in records if r.getMessage().startswith("preempted ")]
    assert preempted.getMessage().startswith(f"preempted {NS}/job-low-")
    assert f"in ClusterQueue cq to admit {NS_B}/job-high-" in preempted.getMessage()
    assert preempted.getMessage().endswith("(ClusterQueue cq, InClusterQueue)")
    assert preempted.__dict__["reason"] == "InClusterQueue"
    assert preempted.__dict__["preemptor"].startswith(f"{NS_B}/job-high-")
    (evicted_line,) = [r for r in records if r.getMessage().startswith("evicted ")]
    assert evicted_line.getMessage().startswith(f"evicted {NS}/job-low-")
    assert "from ClusterQueue cq: Preempted (Preempted to accommodate a workload" in evicted_line.getMessage()
    admitted_lines = [r.getMessage() for r in records if r.getMessage().startswith("admitted ")]
    assert len(admitted_lines) == 2
    assert admitted_lines[1].startswith(f"admitted {NS_B}/job-high-")
    assert "in ClusterQueue cq (flavors cpu=default-flavor) after " in admitted_lines[1]


async def test_reclaim_counts_the_preempting_cluster_queue(menv: Env, registry: CollectorRegistry) -> None:
    await menv.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq-a")
        .cohort("team")
        .quota("default-flavor", "cpu", 4)
        .preemption(reclaim_within_cohort="Any")
        .obj(),
        make_cluster_queue("cq-b")
        .cohort("team")
        .quota("default-flavor", "cpu", 4)
        .preemption(reclaim_within_cohort="Any")
        .obj(),
        make_local_queue("lq-a", NS, "cq-a").obj(),
        make_local_queue("lq-b", NS_B, "cq-b").obj(),
    )
    await menv.create(JOBS, make_job("borrower", NS, queue="lq-a", cpu="6"))
    await eventually(lambda: _admitted(menv, "borrower"))
    await menv.create(JOBS, make_job("owner", NS_B, queue="lq-b", cpu="4"))
    await eventually(
        waiter(
            registry,
            "kueue_preempted_workloads_total",
            1,
            preempting_cluster_queue="cq-b",
            reason="InCohortReclamation",
        ),
        what="the reclaim is counted for cq-b",
    )
    assert (
        value(
            registry, "kueue_preempted_workloads_total", preempting_cluster_queue="cq-a", reason="InCohortReclamation"
        )
        is None
    )
    assert (
        value(
            registry,
            "kueue_evicted_workloads_total",
            cluster_queue="cq-a",
            reason="Preempted",
            underlying_cause="",
            priority_class="",
        )
        == 1
    )


async def test_deactivation_and_stopped_queue_evictions_carry_their_reasons(
    menv: Env, registry: CollectorRegistry
) -> None:
    await menv.setup_queues(
        make_flavor("default-flavor").obj(),
        make_cluster_queue("cq").quota("default-flavor", "cpu", 4).obj(),
        make_local_queue("lq", NS, "cq").obj(),
    )
    await menv.create(JOBS, make_job("one", NS, queue="lq", cpu="1"))
    await menv.create(JOBS, make_job("two", NS, queue="lq", cpu="1"))
    await eventually(lambda: _admitted(menv, "one"))
    await eventually(lambda: _admitted(menv, "two"))
    wl = await menv.workload_of_job("one", NS)
    assert wl is not None
    await menv.client.patch(WORKLOADS, wl["metadata"]["name"], {"spec": {"active": False}}, namespace=NS)
    await eventually(
        waiter(
            registry,
            "kueue_evicted_workloads_total",
            1,
            cluster_queue="cq",
            reason="Deactivated",
            underlying_cause="",
            priority_class="",
        ),
        what="deactivation counted",
    )
    await menv.client.patch(CLUSTER_QUEUES, "cq", {"spec": {"stopPolicy": "HoldAndDrain"}})
    await eventually(
        waiter(
            registry,
            "kueue_evicted_workloads_total",
            1,
            cluster_queue="cq",
            reason="ClusterQueueStopped",
            underlying_cause="",
            priority_class="",
        ),
        what="the drained workload counted with the stopped queue's reason",
    )
    assert (
        value(
            registry,
            "kueue_evicted_workloads_total",
            cluster_queue="cq",
            reason="Preempted",
            underlying_cause="",
            priority_class="",
        )
        is None
    )
