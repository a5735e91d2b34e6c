"""Kueue's event metrics (``kueue_*`` counters and histograms), on a registry handed in.

Owns the metric families that count things as they happen: admission attempts and their duration,
quota reservations and admissions with their wait times, evictions (every one, and the first per
workload, reason and cause) and preemptions. Names, labels, types and buckets are Kueue's; the
gauges Kueue derives from its cache (pending, reserving, quotas, ...) are read at scrape time by
:mod:`.queue_gauges` instead, so keeping them costs the controllers nothing.

Who calls it: the controllers (the scheduler loop and the workload controller) through
:class:`KueueMetrics`, which the process that runs them creates on its registry — the embedded API
server's in one process, the controller process's own otherwise. Nothing here is module-global:
two registries never share a series.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["ADMISSION_ATTEMPT_BUCKETS", "KueueMetrics", "exponential_buckets"]


def exponential_buckets(count: int) -> tuple[float, ...]:
    """Kueue's wait-time buckets: 1, then 2.5 doubling (``count`` buckets before +Inf)."""
    return (1.0, *(2.5 * 2**k for k in range(count - 1)))


ADMISSION_ATTEMPT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Prometheus' default buckets, which Kueue's admission attempt histogram uses."""

_CQ = ("cluster_queue", "priority_class", "replica_role")
_LQ = ("name", "namespace", "priority_class", "replica_role")


class KueueMetrics:
    """Kueue's counters and histograms, registered on ``registry``.

    ``replica_role`` is Kueue's label for leader election; pykueue runs one replica: ``standalone``.
    """

    def __init__(self, registry: CollectorRegistry, *, replica_role: str = "standalone") -> None:
        self.registry = registry
        self.role = replica_role
        ns = "kueue"
        exp14, exp16 = exponential_buckets(14), exponential_buckets(16)
        r = registry
        self.attempts = Counter(
            "admission_attempts_total",
            "The total number of attempts to admit workloads. "
            "Each admission attempt might try to admit more than one workload. 'result' is "
            "'success' when at least one workload was admitted, else 'inadmissible'.",
            ("result", "replica_role"),
            namespace=ns,
            registry=r,
        )
        self.attempt_duration = Histogram(
            "admission_attempt_duration_seconds",
            "The latency of an admission attempt, by 'result' (success or inadmissible).",
            ("result", "replica_role"),
            namespace=ns,
            registry=r,
            buckets=ADMISSION_ATTEMPT_BUCKETS,
        )
        self.quota_reserved = Counter(
            "quota_reserved_workloads_total",
            "The total number of quota reserved workloads per 'cluster_queue'",
            _CQ,
            namespace=ns,
            registry=r,
        )
        self.quota_reserved_wait = Histogram(
            "quota_reserved_wait_time_seconds",
            "The time between a workload was created or requeued until it got quota reservation, per 'cluster_queue'",
            _CQ,
            namespace=ns,
            registry=r,
            buckets=exp14,
        )
        self.admitted = Counter(
            "admitted_workloads_total",
            "The total number of admitted workloads per 'cluster_queue'",
            _CQ,
            namespace=ns,
            registry=r,
        )
        self.admission_wait = Histogram(
            "admission_wait_time_seconds",
            "The time between a workload was created or requeued until admission, per 'cluster_queue'",
            _CQ,
            namespace=ns,
            registry=r,
            buckets=exp16,
        )
        self.checks_wait = Histogram(
            "admission_checks_wait_time_seconds",
            "The time from when a workload got the quota reservation until admission, per 'cluster_queue'",
            _CQ,
            namespace=ns,
            registry=r,
            buckets=exp14,
        )
        evicted_labels = ("cluster_queue", "reason", "underlying_cause", "priority_class", "replica_role")
        self.evicted = Counter(
            "evicted_workloads_total",
            "The number of evicted workloads per 'cluster_queue', "
            "by 'reason' (Preempted, PodsReadyTimeout, AdmissionCheck, ClusterQueueStopped, "
            "LocalQueueStopped, Deactivated, ...) and 'underlying_cause'",
            evicted_labels,
            namespace=ns,
            registry=r,
        )
        self.evicted_once = Counter(
            "evicted_workloads_once_total",
            "The number of unique workload evictions "
            "per 'cluster_queue' (the first eviction of a workload for a reason and "
            "cause)",
            evicted_labels,
            namespace=ns,
            registry=r,
        )
        self.preempted = Counter(
            "preempted_workloads_total",
            "The number of preempted workloads per "
            "'preempting_cluster_queue', by 'reason' (InClusterQueue, InCohortReclamation, "
            "InCohortFairSharing, InCohortReclaimWhileBorrowing)",
            ("preempting_cluster_queue", "reason", "replica_role"),
            namespace=ns,
            registry=r,
        )
        self.lq_quota_reserved = Counter(
            "local_queue_quota_reserved_workloads_total",
            "The total number of quota reserved workloads per 'local_queue'",
            _LQ,
            namespace=ns,
            registry=r,
        )
        self.lq_quota_reserved_wait = Histogram(
            "local_queue_quota_reserved_wait_time_seconds",
            "The time between a workload was created or requeued until it got quota reservation, per 'local_queue'",
            _LQ,
            namespace=ns,
            registry=r,
            buckets=exp14,
        )
        self.lq_admitted = Counter(
            "local_queue_admitted_workloads_total",
            "The total number of admitted workloads per 'local_queue'",
            _LQ,
            namespace=ns,
            registry=r,
        )
        self.lq_admission_wait = Histogram(
            "local_queue_admission_wait_time_seconds",
            "The time between a workload was created or requeued until admission, per 'local_queue'",
            _LQ,
            namespace=ns,
            registry=r,
            buckets=exp16,
        )
        self.lq_checks_wait = Histogram(
            "local_queue_admission_checks_wait_time_seconds",
            "The time from when a workload got the quota reservation until admission, per 'local_queue'",
            _LQ,
            namespace=ns,
            registry=r,
            buckets=exp14,
        )
        self.lq_evicted = Counter(
            "local_queue_evicted_workloads_total",
            "The number of evicted workloads per 'local_queue', by 'reason' and 'underlying_cause'",
            ("name", "namespace", "reason", "underlying_cause", "priority_class", "replica_role"),
            namespace=ns,
            registry=r,
        )

        self._queue_series: dict[tuple[str, ...], tuple[Any, ...]] = {}
        """Labelled series per (kind, queue, ..., priority class): looked up once, then reused."""

    # ------------------------------------------------------------------ events

    def _cq(self, cluster_queue: str, priority_class: str) -> tuple[Any, ...]:
        key = ("cq", cluster_queue, priority_class)
        series = self._queue_series.get(key)
        if series is None:
            labels = (cluster_queue, priority_class, self.role)
            series = self._queue_series[key] = tuple(
                m.labels(*labels)
                for m in (
                    self.quota_reserved,
                    self.quota_reserved_wait,
                    self.admitted,
                    self.admission_wait,
                    self.checks_wait,
                )
            )
        return series

    def _lq(self, namespace: str, local_queue: str, priority_class: str) -> tuple[Any, ...]:
        key = ("lq", namespace, local_queue, priority_class)
        series = self._queue_series.get(key)
        if series is None:
            labels = (local_queue, namespace, priority_class, self.role)
            series = self._queue_series[key] = tuple(
                m.labels(*labels)
                for m in (
                    self.lq_quota_reserved,
                    self.lq_quota_reserved_wait,
                    self.lq_admitted,
                    self.lq_admission_wait,
                    self.lq_checks_wait,
                )
            )
        return series

    def admission_attempt(self, success: bool, seconds: float) -> None:
        """One scheduling cycle that had heads to look at."""
        key = ("attempt", "success" if success else "inadmissible")
        series = self._queue_series.get(key)
        if series is None:
            series = self._queue_series[key] = (
                self.attempts.labels(key[1], self.role),
                self.attempt_duration.labels(key[1], self.role),
            )
        series[0].inc()
        series[1].observe(seconds)

    def quota_reserved_workload(
        self, cluster_queue: str, namespace: str, local_queue: str, priority_class: str, waited: float
    ) -> None:
        series = self._cq(cluster_queue, priority_class)
        series[0].inc()
        series[1].observe(waited)
        if local_queue:
            series = self._lq(namespace, local_queue, priority_class)
            series[0].inc()
            series[1].observe(waited)

    def admitted_workload(
        self,
        cluster_queue: str,
        namespace: str,
        local_queue: str,
        priority_class: str,
        waited: float,
        checks_waited: float,
    ) -> None:
        """Admitted: ``waited`` since queued, ``checks_waited`` since quota was reserved (0 without checks)."""
        series = self._cq(cluster_queue, priority_class)
        series[2].inc()
        series[3].observe(waited)
        series[4].observe(checks_waited)
        if local_queue:
            series = self._lq(namespace, local_queue, priority_class)
            series[2].inc()
            series[3].observe(waited)
            series[4].observe(checks_waited)

    def evicted_workload(
        self,
        cluster_queue: str,
        namespace: str,
        local_queue: str,
        reason: str,
        cause: str,
        priority_class: str,
        *,
        first: bool,
    ) -> None:
        """An eviction was written; ``first``: the workload's first for this reason and cause."""
        self.evicted.labels(cluster_queue, reason, cause, priority_class, self.role).inc()
        if first:
            self.evicted_once.labels(cluster_queue, reason, cause, priority_class, self.role).inc()
        if local_queue:
            self.lq_evicted.labels(local_queue, namespace, reason, cause, priority_class, self.role).inc()

    def preempted_workload(self, preempting_cluster_queue: str, reason: str) -> None:
        self.preempted.labels(preempting_cluster_queue, reason, self.role).inc()

    # ------------------------------------------------------------------ clean-up

    def forget_cluster_queue(self, name: str) -> None:
        """A deleted ClusterQueue's series go away with it (as Kueue clears them)."""
        for metric in (
            self.quota_reserved,
            self.quota_reserved_wait,
            self.admitted,
            self.admission_wait,
            self.checks_wait,
            self.evicted,
            self.evicted_once,
        ):
            metric.remove_by_labels({"cluster_queue": name})
        self.preempted.remove_by_labels({"preempting_cluster_queue": name})
        self._queue_series = {k: v for k, v in self._queue_series.items() if k[:2] != ("cq", name)}

    def forget_local_queue(self, namespace: str, name: str) -> None:
        for metric in (
            self.lq_quota_reserved,
            self.lq_quota_reserved_wait,
            self.lq_admitted,
            self.lq_admission_wait,
            self.lq_checks_wait,
            self.lq_evicted,
        ):
            metric.remove_by_labels({"name": name, "namespace": namespace})
        self._queue_series = {k: v for k, v in self._queue_series.items() if k[:3] != ("lq", namespace, name)}
