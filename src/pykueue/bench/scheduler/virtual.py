"""``bench scheduler --virtual-time``: Kueue's benchmark driven through the pure engine, no API.

Owns a discrete-event simulation around :class:`pykueue.scheduler.Scheduler` with a
``ManualClock``: workload creations at their generator instants, finishes ``runtimeMs`` after
admission, and scheduling cycles after each batch of simultaneous events (repeated at the same
instant while they admit or preempt, so a preemptor gets its freed quota without waiting for an
unrelated event). A preempted workload is evicted and requeued at once (the runner's and workload
controller's job) and restarts its full runtime when admitted again; its pending finish is
ignored. Scheduling and API calls take no virtual time, so the virtual wall time is what the
scheduling *decisions* cost in makespan: compare it with the §6.4 bound.

Who calls it: the CLI and the tests. Invariant: the recorder sees exactly the transitions the
runner would observe (admitted, evicted, finished, CQ usage after each instant), in time order.
Engine time (wall and CPU inside engine calls) is metered separately from the whole run.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pykueue.api.clock import ManualClock, format_time
from pykueue.bench.scheduler.config import Plan, WorkloadPlan
from pykueue.bench.scheduler.objects import cluster_queue, local_queue, namespace, resource_flavor, workload
from pykueue.bench.scheduler.recorder import CQSample, Recorder
from pykueue.scheduler import Scheduler, SchedulerConfig

__all__ = ["SimResult", "simulate"]

START_S = 1_700_000_000
_CREATE, _FINISH, _TICK = 0, 1, 2
MAX_CYCLES_PER_INSTANT = 1_000
MAX_IDLE_TICKS = 600
"""After the last event, how many 1 s ticks to wait for a timed requeue before giving up."""


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


class _Meter:
    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        w0, c0 = time.perf_counter(), time.process_time()
        try:
            return fn(*args)
        finally:
            self.wall += time.perf_counter() - w0
            self.cpu += time.process_time() - c0


def _conditions(now_s: float, *types: tuple[str, str, str]) -> list[dict[str, Any]]:
    when = format_time(now_s)
    return [{"type": t, "status": s, "reason": r, "message": "", "lastTransitionTime": when} for t, s, r in types]


class _Sim:
    def __init__(self, plan: Plan, config: SchedulerConfig) -> None:
        self.plan = plan
        self.clock = ManualClock(start=float(START_S))
        self.engine = Scheduler(config, clock=self.clock)
        self.meter = _Meter()
        self.rec = Recorder()
        self.cq_class = {cq.name: cq.class_name for cq in plan.cluster_queues}
        self.cq_nominal = {cq.name: cq.nominal_milli for cq in plan.cluster_queues}
        self.objs: dict[str, dict[str, Any]] = {}
        self.plans: dict[str, WorkloadPlan] = {}
        self.finish_at: dict[str, int] = {}
        self.events: list[tuple[int, int, int, str]] = []
        self.seq = 0
        self.cycles = self.admissions = self.preemptions = 0
        self.touched: set[str] = set()
        self.last_activity_ms = 0

    def _key(self, w: WorkloadPlan) -> str:
        return f"{w.namespace}/{w.name}"

    def setup(self) -> None:
        e = self.engine
        self.meter.call(e.upsert_resource_flavor, resource_flavor(self.plan.resource_flavor))
        for cq in self.plan.cluster_queues:
            self.meter.call(e.upsert_namespace, namespace(cq.name))
            self.meter.call(e.upsert_cluster_queue, cluster_queue(cq, self.plan.resource_flavor))
            self.meter.call(e.upsert_local_queue, local_queue(cq.name))
            self.rec.cluster_queue(cq.name, cq.class_name, 0, CQSample(0, cq.nominal_milli, 0, 0))
        for w in self.plan.workloads:
            key = self._key(w)
            self.plans[key] = w
            self._push(w.created_ms, _CREATE, key)

    def _push(self, at_ms: int, kind: int, key: str) -> None:
        heapq.heappush(self.events, (at_ms, kind, self.seq, key))
        self.seq += 1

    def _upsert(self, key: str, obj: dict[str, Any]) -> None:
        self.objs[key] = obj
        self.meter.call(self.engine.upsert_workload, obj)
        self.touched.add(self.plans[key].namespace)

    def _apply_event(self, now_ms: int, kind: int, key: str) -> None:
        if kind == _TICK:
            return
        w = self.plans[key]
        now_s = START_S + now_ms / 1000
        self.last_activity_ms = now_ms
        if kind == _CREATE:
            self.rec.created(key, w.class_name, now_ms)
            self._upsert(key, workload(w, format_time(now_s)))
        elif self.finish_at.get(key) == now_ms:  # finish, unless evicted since it was admitted
            del self.finish_at[key]
            obj = self.objs[key]
            status = {**obj["status"], "conditions": [*obj["status"]["conditions"],
                                                      *_conditions(now_s, ("Finished", "True", "ByTest"))]}
            self._upsert(key, {**obj, "status": status})
            self.rec.finished(key, now_ms)

    def _cycle(self, now_ms: int) -> bool:
        result = self.meter.call(self.engine.schedule)
        self.cycles += 1
        now_s = START_S + now_ms / 1000
        for pre in result.preempted:
            key = f"{pre.namespace}/{pre.name}"
            self.preemptions += 1
            self.finish_at.pop(key, None)
            self.rec.evicted(key, now_ms)
            obj = self.objs[key]
            # the eviction completes at once: quota released, requeued (runner + workload controller)
            self._upsert(key, {**obj, "status": {"conditions": _conditions(
                now_s, ("Evicted", "True", "Preempted"), ("Preempted", "True", pre.reason),
                ("QuotaReserved", "False", "Pending"), ("Requeued", "True", "Preempted"))}})
        for adm in result.admitted:
            key = f"{adm.namespace}/{adm.name}"
            self.admissions += 1
            obj = self.objs[key]
            status = {"admission": adm.admission, "conditions": _conditions(
                now_s, ("QuotaReserved", "True", "QuotaReserved"), ("Admitted", "True", "Admitted"))}
            self._upsert(key, {**obj, "status": status})
            self.rec.admitted(key, now_ms)
            self.last_activity_ms = now_ms
            finish = now_ms + self.plans[key].runtime_ms
            self.finish_at[key] = finish
            self._push(finish, _FINISH, key)
        return bool(result.admitted or result.preempted)

    def _record_queues(self, now_ms: int) -> None:
        for name in sorted(self.touched):
            u = self.engine.cluster_queue_usage(name)
            cpu = sum(v.get("cpu", (0, 0))[0] for v in u.usage.values())
            self.rec.cluster_queue(name, self.cq_class[name], now_ms,
                                   CQSample(cpu, self.cq_nominal[name], u.pending_workloads, u.reserving_workloads))
        self.touched.clear()

    def run(self) -> float:
        idle_ticks = 0
        while self.events:
            now_ms = self.events[0][0]
            self.clock.set(max(START_S + now_ms / 1000, self.clock.now()))
            while self.events and self.events[0][0] == now_ms:
                _, kind, _, key = heapq.heappop(self.events)
                self._apply_event(now_ms, kind, key)
            for _ in range(MAX_CYCLES_PER_INSTANT):
                if not self._cycle(now_ms):
                    break
            self._record_queues(now_ms)
            if not self.events and self.rec.expect_more() and idle_ticks < MAX_IDLE_TICKS:
                # nothing left to happen but work still queued: a timed requeue may still fire
                idle_ticks += 1
                self._push(now_ms + 1000, _TICK, "")
        self.rec.generation_done = True
        return float(self.last_activity_ms)


def simulate(plan: Plan, config: SchedulerConfig | None = None) -> SimResult:
    """Run ``plan`` to completion in virtual time."""
    w0, c0 = time.perf_counter(), time.process_time()
    sim = _Sim(plan, config or SchedulerConfig())
    sim.setup()
    wall_ms = sim.run()
    stuck = sum(1 for w in sim.rec.workloads.values() if not w.ever_admitted)
    return SimResult(sim.rec, wall_ms, sim.cycles, sim.admissions, sim.preemptions, sim.meter.wall, sim.meter.cpu,
                     time.perf_counter() - w0, time.process_time() - c0, stuck)
