"""``bench scheduler --virtual-time``: Kueue's benchmark driven through the pure engine, no API.

Owns the feed of Kueue's recorder from :class:`vcluster.VirtualCluster` (the discrete-event
simulation around :class:`pykueue.scheduler.Scheduler` with a ``ManualClock``, shared with
``pykueue simulate``): workload creations at their generator instants, finishes ``runtimeMs`` after
admission, and scheduling cycles after each batch of simultaneous events (repeated at the same
instant while they admit or preempt, so a preemptor gets its freed quota without waiting for an
unrelated event). A preempted workload is evicted and requeued at once (the runner's and workload
controller's job) and restarts its full runtime when admitted again; its pending finish is
ignored. Scheduling and API calls take no virtual time, so the virtual wall time is what the
scheduling *decisions* cost in makespan: compare it with the theoretical lower bound.

Who calls it: the CLI and the tests. Invariant: the recorder sees exactly the transitions the
runner would observe (admitted, evicted, finished, CQ usage after each instant), in time order.
Engine time (wall and CPU inside engine calls) is metered separately from the whole run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pykueue.bench.scheduler.config import Plan
from pykueue.bench.scheduler.objects import cluster_queue, local_queue, namespace, resource_flavor, workload
from pykueue.bench.scheduler.recorder import CQSample, Recorder
from pykueue.bench.scheduler.vcluster import START_S, Observer, VirtualCluster
from pykueue.scheduler import Admit, Preempt, SchedulerConfig

__all__ = ["START_S", "SimResult", "simulate"]


@dataclass(frozen=True, slots=True)
class SimResult:
    recorder: Recorder
    wall_ms: float
    """Virtual: from the start of generation to the moment the last ClusterQueue drained."""
    cycles: int
    admissions: int
    preemptions: int
    engine_wall_s: float
    engine_cpu_s: float
    run_wall_s: float
    run_cpu_s: float
    stuck: int
    """Workloads never admitted (0 unless a config asks for more than a queue can ever hold)."""


class _BenchObserver(Observer):
    """Feeds Kueue's recorder: workload transitions and each touched ClusterQueue's usage."""

    def __init__(self, plan: Plan) -> None:
        self.rec = Recorder()
        self.cluster: VirtualCluster | None = None
        self.cq_class = {cq.name: cq.class_name for cq in plan.cluster_queues}
        self.cq_nominal = {cq.name: cq.nominal_milli for cq in plan.cluster_queues}
        self.wl_class = {f"{w.namespace}/{w.name}": w.class_name for w in plan.workloads}

    def created(self, key: str, now_ms: int) -> None:
        self.rec.created(key, self.wl_class[key], now_ms)

    def admitted(self, key: str, now_ms: int, admit: Admit) -> None:
        self.rec.admitted(key, now_ms)

    def evicted(self, key: str, now_ms: int, preempt: Preempt) -> None:
        self.rec.evicted(key, now_ms)

    def finished(self, key: str, now_ms: int) -> None:
        self.rec.finished(key, now_ms)

    def instant(self, now_ms: int, touched_namespaces: set[str]) -> None:
        assert self.cluster is not None
        engine = self.cluster.engine
        for name in sorted(touched_namespaces):  # namespace == ClusterQueue name in Kueue's generator
            u = engine.cluster_queue_usage(name)
            cpu = sum(v.get("cpu", (0, 0))[0] for v in u.usage.values())
            self.rec.cluster_queue(
                name,
                self.cq_class[name],
                now_ms,
                CQSample(cpu, self.cq_nominal[name], u.pending_workloads, u.reserving_workloads),
            )


def simulate(plan: Plan, config: SchedulerConfig | None = None) -> SimResult:
    """Run ``plan`` to completion in virtual time."""
    w0, c0 = time.perf_counter(), time.process_time()
    observer = _BenchObserver(plan)
    cluster = observer.cluster = VirtualCluster(config or SchedulerConfig(), observer)
    e = cluster.engine
    cluster.apply(e.upsert_resource_flavor, resource_flavor(plan.resource_flavor))
    for cq in plan.cluster_queues:
        cluster.apply(e.upsert_namespace, namespace(cq.name))
        cluster.apply(e.upsert_cluster_queue, cluster_queue(cq, plan.resource_flavor))
        cluster.apply(e.upsert_local_queue, local_queue(cq.name))
        observer.rec.cluster_queue(cq.name, cq.class_name, 0, CQSample(0, cq.nominal_milli, 0, 0))
    for w in plan.workloads:
        cluster.submit(w.created_ms, workload(w), w.runtime_ms)
    wall_ms = cluster.run(observer.rec.expect_more)
    observer.rec.generation_done = True
    stuck = sum(1 for w in observer.rec.workloads.values() if not w.ever_admitted)
    return SimResult(
        observer.rec,
        wall_ms,
        cluster.cycles,
        cluster.admissions,
        cluster.preemptions,
        cluster.meter.wall,
        cluster.meter.cpu,
        time.perf_counter() - w0,
        time.process_time() - c0,
        stuck,
    )
