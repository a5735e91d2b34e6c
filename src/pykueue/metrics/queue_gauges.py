"""Kueue's queue and cohort gauges, computed from the scheduler engine when metrics are scraped.

Owns :class:`QueueGauges`, a prometheus_client collector: on each scrape it takes one
:meth:`~pykueue.scheduler.Scheduler.gauges` of the engine and renders Kueue's gauges from it
(``kueue_pending_workloads``, ``kueue_reserving_active_workloads``, ``kueue_admitted_active_workloads``,
``kueue_cluster_queue_status``, ``kueue_cluster_queue_info``, the ``kueue_cluster_queue_*`` quota,
reservation and usage gauges, the ``kueue_local_queue_*`` gauges and the ``kueue_cohort_*`` ones).
Computing them at scrape time, instead of setting gauges on every change, keeps them exact and
keeps their cost out of the scheduling cycle and the status writers entirely.

Who calls it: whoever runs the controllers registers one on its registry
(``QueueGauges(scheduler).register(registry)``). The collector reads the engine on the event
loop's thread: the scrape handler must call it there (never from a worker thread).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pykueue.scheduler import Scheduler
from pykueue.scheduler.gauges import CohortGauges, LocalQueueGauges

__all__ = ["QueueGauges", "quantity_value"]


def quantity_value(resource: str, amount: int | None) -> float:
    """An engine amount as the quantity's value (cpu in cores); None (no limit) is +Inf."""
    if amount is None:
        return math.inf
    return amount / 1000 if resource == "cpu" else float(amount)


def _family(name: str, documentation: str, labels: Iterable[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"kueue_{name}", documentation, labels=[*labels, "replica_role"])


class QueueGauges(Collector):
    """Renders the engine's queues as Kueue's gauges on every ``collect()``."""

    def __init__(self, scheduler: Scheduler, *, replica_role: str = "standalone") -> None:
        self._scheduler = scheduler
        self._role = replica_role

    def register(self, registry: CollectorRegistry) -> None:
        registry.register(self)

    def describe(self) -> list[Metric]:
        return []  # no names up front: registering must not compute a snapshot

    def collect(self) -> Iterator[Metric]:
        snap = self._scheduler.gauges()
        role = self._role
        cq_lbl = ("cluster_queue",)
        pending = _family(
            "pending_workloads",
            "The number of pending workloads, per 'cluster_queue' and "
            "'status' (active: in the admission queue; inadmissible: waiting for a change that "
            "could make them admissible)",
            ("cluster_queue", "status"),
        )
        reserving = _family(
            "reserving_active_workloads",
            "The number of Workloads that are reserving quota, per 'cluster_queue'",
            cq_lbl,
        )
        admitted = _family(
            "admitted_active_workloads",
            "The number of admitted Workloads that are active (unsuspended and not finished), per 'cluster_queue'",
            cq_lbl,
        )
        status = _family(
            "cluster_queue_status",
            "Reports 'cluster_queue' with its 'status' (pending, active or terminating); 1 for its current status",
            ("cluster_queue", "status"),
        )
        info = _family(
            "cluster_queue_info",
            "Reports 'cluster_queue' with its 'parent_cohort' and 'root_cohort'",
            ("cluster_queue", "parent_cohort", "root_cohort"),
        )
        res_lbl = ("cohort", "cluster_queue", "flavor", "resource")
        nominal = _family(
            "cluster_queue_nominal_quota",
            "Reports the cluster_queue's resource nominal quota within all the flavors",
            res_lbl,
        )
        borrowing = _family(
            "cluster_queue_borrowing_limit",
            "Reports the cluster_queue's resource borrowing limit within all the flavors (+Inf: no limit)",
            res_lbl,
        )
        lending = _family(
            "cluster_queue_lending_limit",
            "Reports the cluster_queue's resource lending limit within all the flavors (+Inf: no limit)",
            res_lbl,
        )
        reservation = _family(
            "cluster_queue_resource_reservation",
            "Reports the cluster_queue's total resource reservation within all the flavors",
            res_lbl,
        )
        usage = _family(
            "cluster_queue_resource_usage",
            "Reports the cluster_queue's total resource usage within all the flavors",
            res_lbl,
        )
        for cq in snap.cluster_queues:
            pending.add_metric([cq.name, "active", role], cq.pending_active)
            pending.add_metric([cq.name, "inadmissible", role], cq.pending_inadmissible)
            reserving.add_metric([cq.name, role], cq.reserving)
            admitted.add_metric([cq.name, role], cq.admitted)
            for value in ("pending", "active", "terminating"):
                status.add_metric([cq.name, value, role], 1.0 if value == cq.status else 0.0)
            info.add_metric([cq.name, cq.cohort, cq.root_cohort, role], 1.0)
            for q in cq.quotas:
                labels = [cq.cohort, cq.name, q.flavor, q.resource, role]
                nominal.add_metric(labels, quantity_value(q.resource, q.nominal))
                borrowing.add_metric(labels, quantity_value(q.resource, q.borrowing_limit))
                lending.add_metric(labels, quantity_value(q.resource, q.lending_limit))
                reservation.add_metric(labels, quantity_value(q.resource, q.reserved))
                usage.add_metric(labels, quantity_value(q.resource, q.used))
        yield from (pending, reserving, admitted, status, info, nominal, borrowing, lending, reservation, usage)
        yield from self._local_queues(snap.local_queues)
        yield from self._cohorts(snap.cohorts)

    def _local_queues(self, lqs: Iterable[LocalQueueGauges]) -> Iterator[Metric]:
        role = self._role
        lq_lbl = ("name", "namespace")
        pending = _family(
            "local_queue_pending_workloads",
            "The number of pending workloads, per 'local_queue' and 'status' (active or inadmissible)",
            (*lq_lbl, "status"),
        )
        reserving = _family(
            "local_queue_reserving_active_workloads",
            "The number of Workloads that are reserving quota, per 'localQueue'",
            lq_lbl,
        )
        admitted = _family(
            "local_queue_admitted_active_workloads",
            "The number of admitted Workloads that are active (unsuspended and not finished), per 'localQueue'",
            lq_lbl,
        )
        status = _family(
            "local_queue_status",
            "Reports 'localQueue' with its 'active' status (True, False or Unknown); 1 for its current status",
            (*lq_lbl, "active"),
        )
        reservation = _family(
            "local_queue_resource_reservation",
            "Reports the localQueue's total resource reservation within all the flavors",
            (*lq_lbl, "flavor", "resource"),
        )
        usage = _family(
            "local_queue_resource_usage",
            "Reports the localQueue's total resource usage within all the flavors",
            (*lq_lbl, "flavor", "resource"),
        )
        for lq in lqs:
            ident = [lq.name, lq.namespace]
            pending.add_metric([*ident, "active", role], lq.pending_active)
            pending.add_metric([*ident, "inadmissible", role], lq.pending_inadmissible)
            reserving.add_metric([*ident, role], lq.reserving)
            admitted.add_metric([*ident, role], lq.admitted)
            current = "True" if lq.active else "False"
            for value in ("True", "False", "Unknown"):
                status.add_metric([*ident, value, role], 1.0 if value == current else 0.0)
            for (flavor, resource), amount in sorted(lq.reserved.items()):
                reservation.add_metric([*ident, flavor, resource, role], quantity_value(resource, amount))
            for (flavor, resource), amount in sorted(lq.used.items()):
                usage.add_metric([*ident, flavor, resource, role], quantity_value(resource, amount))
        yield from (pending, reserving, admitted, status, reservation, usage)

    def _cohorts(self, cohorts: Iterable[CohortGauges]) -> Iterator[Metric]:
        role = self._role
        info = _family(
            "cohort_info",
            "Reports 'cohort' with its 'parent_cohort' and 'root_cohort'",
            ("cohort", "parent_cohort", "root_cohort"),
        )
        admitted = _family(
            "cohort_subtree_admitted_active_workloads",
            "The number of admitted active Workloads in the cohort's subtree",
            ("cohort",),
        )
        quota = _family(
            "cohort_subtree_quota",
            "Reports the cohort's subtree quota (its own plus what its members can lend), per 'flavor' and 'resource'",
            ("cohort", "flavor", "resource"),
        )
        reserved = _family(
            "cohort_subtree_resource_reservations",
            "Reports the reservations in the cohort's "
            "subtree beyond its members' guaranteed quota, per 'flavor' and 'resource'",
            ("cohort", "flavor", "resource"),
        )
        for cohort in cohorts:
            info.add_metric([cohort.name, cohort.parent, cohort.root, role], 1.0)
            admitted.add_metric([cohort.name, role], cohort.admitted)
            for (flavor, resource), amount in sorted(cohort.quota.items()):
                quota.add_metric([cohort.name, flavor, resource, role], quantity_value(resource, amount))
            for (flavor, resource), amount in sorted(cohort.reserved.items()):
                reserved.add_metric([cohort.name, flavor, resource, role], quantity_value(resource, amount))
        yield from (info, admitted, quota, reserved)
