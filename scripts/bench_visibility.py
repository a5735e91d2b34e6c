"""Time the visibility API's answer (in process, from the engine) for deep ClusterQueues.

    .venv/bin/python scripts/bench_visibility.py [--pending 10000 50000]

Fills one ClusterQueue without quota with N pending workloads spread over three LocalQueues and
seven priorities, then prints the best of five answers for a whole default page (1,000), a short
page (10), and the same for one LocalQueue: what a ``kubectl get --raw .../pendingworkloads`` costs
the server's event loop (or the controller process's) before JSON encoding.
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

from pykueue.api.meta.clock import ManualClock, format_time
from pykueue.apiserver.visibility import EngineBackend, PendingQuery
from pykueue.scheduler import Scheduler, SchedulerConfig

T0 = 1_700_000_000.0


def _engine(pending: int) -> Scheduler:
    s = Scheduler(SchedulerConfig(), clock=ManualClock(T0 + pending + 10))
    s.upsert_namespace({"metadata": {"name": "ns"}})
    s.upsert_resource_flavor({"metadata": {"name": "f"}, "spec": {}})
    s.upsert_cluster_queue(
        {
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "0"}]}],
                    }
                ],
            },
        }
    )
    for i in range(3):
        s.upsert_local_queue({"metadata": {"namespace": "ns", "name": f"lq{i}"}, "spec": {"clusterQueue": "cq"}})
    for i in range(pending):
        wl: dict[str, Any] = {
            "metadata": {"namespace": "ns", "name": f"w{i}", "uid": f"u{i}", "creationTimestamp": format_time(T0 + i)},
            "spec": {
                "queueName": f"lq{i % 3}",
                "priority": i % 7,
                "podSets": [
                    {
                        "name": "main",
                        "count": 1,
                        "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}},
                    }
                ],
            },
        }
        s.upsert_workload(wl)
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, nargs="+", default=[10_000, 50_000])
    args = parser.parse_args()
    for pending in args.pending:
        backend = EngineBackend(_engine(pending))
        gc.collect()
        gc.freeze()
        for query in (
            PendingQuery("v1beta2", "cq"),
            PendingQuery("v1beta2", "cq", limit=10),
            PendingQuery("v1beta2", "lq1", "ns"),
            PendingQuery("v1beta2", "lq1", "ns", limit=10),
        ):
            best = float("inf")
            for _ in range(5):
                start = time.perf_counter()
                backend.answer(query)
                best = min(best, time.perf_counter() - start)
            where = f"LocalQueue {query.queue}" if query.namespace else f"ClusterQueue {query.queue}"
            print(f"{pending:>7} pending  {where:<16} limit {query.limit:>5}: {best * 1000:8.1f} ms")
        gc.unfreeze()


if __name__ == "__main__":
    main()
