"""What Kueue's metrics, the admission log line and the request metrics cost per decision (µs).

Times, with ``timeit``, the calls the controllers and the API server make once per admission,
eviction, preemption, scheduling cycle and HTTP request, with the log going to a file the way
``pykueue up`` writes it. ``python scripts/metrics_cost.py`` (numbers in docs/performance.md).
"""

from __future__ import annotations

import logging
import tempfile
import time
import timeit

from prometheus_client import CollectorRegistry

from pykueue.cli.logsetup import configure_logging
from pykueue.controllers import observe
from pykueue.metrics import ApiServerMetrics, KueueMetrics, request_labels

ROUNDS = 20_000
WORKLOAD = {
    "metadata": {"namespace": "ns-1", "name": "wl-12345", "creationTimestamp": "2026-12-01T10:00:00Z"},
    "spec": {"queueName": "lq-1", "priorityClassRef": {"name": "high"}},
    "status": {
        "admission": {"clusterQueue": "cq-1", "podSetAssignments": [{"name": "main", "flavors": {"cpu": "default"}}]},
        "conditions": [{"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2026-12-01T10:00:05Z"}],
        "schedulingStats": {"evictions": [{"reason": "Preempted", "underlyingCause": "", "count": 1}]},
    },
}
STATUS_PATH = "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns-1/workloads/wl-1/status"


def main() -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".log") as sink:
        configure_logging("info", "text")
        handler = logging.getLogger().handlers[0]
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(sink)
        registry = CollectorRegistry()
        kueue, apiserver = KueueMetrics(registry), ApiServerMetrics(registry)
        now = time.time()
        cases = {
            "admission (metrics + log line)": lambda: observe.quota_reserved(
                kueue, WORKLOAD, "cq-1", now, admitted_too=True
            ),
            "eviction (metrics + log line)": lambda: observe.evicted(kueue, WORKLOAD, "Preempted", "", "message"),
            "preemption (metrics + log line)": lambda: observe.preempted(
                kueue, WORKLOAD, "ns/x", "cq-2", "InClusterQueue"
            ),
            "scheduling cycle": lambda: kueue.admission_attempt(True, 0.001),
            "HTTP request": lambda: apiserver.observe(
                request_labels("PATCH", STATUS_PATH, {}, "application/merge-patch+json"), False, 200, 0.001
            ),
        }
        for name, call in cases.items():
            print(f"{name}: {timeit.timeit(call, number=ROUNDS) / ROUNDS * 1e6:.1f} µs")
        logging.getLogger().setLevel(logging.WARNING)
        took = timeit.timeit(
            lambda: observe.quota_reserved(kueue, WORKLOAD, "cq-1", now, admitted_too=True), number=ROUNDS
        )
        print(f"admission (metrics only, log level warning): {took / ROUNDS * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
