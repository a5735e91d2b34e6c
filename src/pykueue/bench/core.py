"""``pykueue bench core``: how fast the scheduler engine makes admission decisions.

Owns two measurements of ``pykueue.scheduler.Scheduler`` driven in process, with an injected
virtual clock and the workload controller's feedback (admitted status echoed back, finished
workloads reported), but no API server:

* **Scaling**: N pending 1-cpu workloads over M ClusterQueues in C cohorts (each CQ nominal 4 cpu).
  Every cycle admits what fits; the workloads admitted by the previous cycle then finish, so the
  run is a steady stream of decisions until the queues drain. Run for N/10, N/5, N/2 and N; the
  per-decision cost at N over N/10 shows whether a decision gets dearer as queues grow (ideal: 1).
* **Baseline shape** (Kueue's scheduler baseline): 5 cohorts x 6 CQs (nominal 20, borrowingLimit 100, reclaim Any,
  withinClusterQueue LowerPriority), per CQ 350 small / 100 medium / 50 large workloads arriving
  and running in virtual time, reporting the makespan against the theoretical lower bound (66.84 s).

Who calls it: ``pykueue.cli.bench`` (``pykueue bench core``) and its test. Invariant: only time
spent inside engine calls is charged to decisions (``time.perf_counter`` for wall,
``time.process_time`` for CPU; both injectable so the test is exact): ``schedule()`` and the two
write-backs a controller makes per admission (the admitted status echoed back, then Finished),
reported per phase. Building the workload dicts and the initial queueing are not charged.
Ratios come from one run of the command; each measurement runs in a fresh interpreter (``isolate``,
as the CLI does) so no row inherits the heap the previous rows fragmented. The write-backs of one
cycle are timed as one call (the meter's clock reads cost about a microsecond each). Collections
that start outside engine calls are reported beside the charged time, not in it. The full size is
run a second time with ``gc.freeze()`` after setup (what a long-running controller does after its
initial sync) and both rates are printed: the last line (``decisions/s``) is the unfrozen run. The
CPU rate (decisions per CPU second) is printed next to the wall rate because on a shared machine
wall time also counts other processes.
"""

from __future__ import annotations

import gc
import heapq
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from pykueue.api.meta.clock import ManualClock, format_time
from pykueue.scheduler import Scheduler, SchedulerConfig

__all__ = ["BaselineResult", "ScaleResult", "fresh_process", "run_baseline", "run_core", "run_scale"]

API = "kueue.x-k8s.io/v1beta2"
START = 1_700_000_000.0
NOMINAL_PER_CQ = 4


@dataclass(frozen=True, slots=True)
class ScaleResult:
    workloads: int
    decisions: int
    cycles: int
    wall_s: float
    cpu_s: float
    schedule_cpu_s: float = 0.0
    """CPU inside ``schedule()`` (part of ``cpu_s``)."""
    upsert_cpu_s: float = 0.0
    """CPU inside the write-back ``upsert_workload`` calls: admitted status and finish (rest of ``cpu_s``)."""
    gc_cpu_s: float = 0.0
    """CPU the garbage collector took during those calls (included above; always process time)."""
    gc_outside_cpu_s: float = 0.0
    """CPU of collections that ran during the drain but outside engine calls (not included above):
    started by allocations of the benchmark's own stand-in for the API server (the status objects
    it builds), which the engine's allocations also count towards."""

    @property
    def per_second(self) -> float:
        return self.decisions / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_per_second(self) -> float:
        """Decisions per CPU second: the rate on a core of its own (wall counts other processes too)."""
        return self.decisions / self.cpu_s if self.cpu_s > 0 else 0.0

    @property
    def wall_us(self) -> float:
        return self.wall_s * 1e6 / self.decisions if self.decisions else 0.0

    @property
    def cpu_us(self) -> float:
        return self.cpu_s * 1e6 / self.decisions if self.decisions else 0.0

    @property
    def schedule_cpu_us(self) -> float:
        return self.schedule_cpu_s * 1e6 / self.decisions if self.decisions else 0.0

    @property
    def upsert_cpu_us(self) -> float:
        return self.upsert_cpu_s * 1e6 / self.decisions if self.decisions else 0.0

    @property
    def gc_cpu_us(self) -> float:
        return self.gc_cpu_s * 1e6 / self.decisions if self.decisions else 0.0

    @property
    def gc_outside_cpu_us(self) -> float:
        return self.gc_outside_cpu_s * 1e6 / self.decisions if self.decisions else 0.0


_R = TypeVar("_R")
Timer = Callable[[], float]
"""A clock read: ``time.perf_counter`` (wall) or ``time.process_time`` (CPU); tests inject fakes."""
WALL: Timer = time.perf_counter
CPU: Timer = time.process_time


class _Meter:
    """Accumulates wall and CPU time spent inside engine calls, in total and per phase, and the
    garbage collector's share of it (a collection runs inside whichever call allocates)."""

    def __init__(self, wall: Timer = WALL, cpu: Timer = CPU) -> None:
        self._wall_fn = wall
        self._cpu_fn = cpu
        self.wall = 0.0
        self.cpu = 0.0
        self.phase_cpu: dict[str, float] = {}
        self.gc_cpu = 0.0
        self.gc_outside_cpu = 0.0
        self._inside = False
        self._gc_start = 0.0

    def call(self, phase: str, fn: Callable[..., Any], *args: Any) -> Any:
        wall_fn, cpu_fn = self._wall_fn, self._cpu_fn
        w0, c0 = wall_fn(), cpu_fn()
        self._inside = True
        try:
            return fn(*args)
        finally:
            self._inside = False
            cpu = cpu_fn() - c0
            self.wall += wall_fn() - w0
            self.cpu += cpu
            self.phase_cpu[phase] = self.phase_cpu.get(phase, 0.0) + cpu

    def _on_gc(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.process_time()
        elif self._inside:
            self.gc_cpu += time.process_time() - self._gc_start
        else:
            self.gc_outside_cpu += time.process_time() - self._gc_start

    def __enter__(self) -> _Meter:
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self._on_gc)


def _cq(
    name: str, cohort: str, nominal: str, borrowing_limit: str | None = None, preemption: dict[str, str] | None = None
) -> dict[str, Any]:
    res: dict[str, Any] = {"name": "cpu", "nominalQuota": nominal}
    if borrowing_limit is not None:
        res["borrowingLimit"] = borrowing_limit
    spec: dict[str, Any] = {
        "cohortName": cohort,
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "rf", "resources": [res]}]}],
    }
    if preemption:
        spec["preemption"] = preemption
    return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def _setup(s: Scheduler, cq_objs: list[dict[str, Any]]) -> None:
    s.upsert_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    s.upsert_resource_flavor({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "rf"}})
    for cq in cq_objs:
        name = cq["metadata"]["name"]
        s.upsert_cluster_queue(cq)
        s.upsert_local_queue(
            {
                "apiVersion": API,
                "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": "bench"},
                "spec": {"clusterQueue": name},
            }
        )


def _pod_sets(cpu: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "main",
            "count": 1,
            "template": {
                "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}
            },
        }
    ]


def _workload(name: str, queue: str, created: float, priority: int, pod_sets: list[dict[str, Any]]) -> dict[str, Any]:
    # pod_sets is shared between workloads: the engine treats input dicts as read-only
    return {
        "apiVersion": API,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "bench", "uid": name, "creationTimestamp": format_time(created)},
        "spec": {"queueName": queue, "priority": priority, "podSets": pod_sets},
    }


def _with_status(wl: dict[str, Any], admission: dict[str, Any], now: float, finished: bool) -> dict[str, Any]:
    when = format_time(now)
    conds = [
        {
            "type": "QuotaReserved",
            "status": "True",
            "reason": "QuotaReserved",
            "message": "",
            "lastTransitionTime": when,
        },
        {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "", "lastTransitionTime": when},
    ]
    if finished:
        conds.append(
            {"type": "Finished", "status": "True", "reason": "Succeeded", "message": "", "lastTransitionTime": when}
        )
    return {**wl, "status": {"admission": admission, "conditions": conds}}


def run_scale(
    workloads: int, cqs: int, cohorts: int, *, wall_clock: Timer = WALL, cpu_clock: Timer = CPU, freeze_gc: bool = False
) -> ScaleResult:
    """Drain ``workloads`` 1-cpu workloads through ``cqs`` CQs; finished work frees quota each cycle.

    ``freeze_gc``: after setup (the informer cache's initial sync: every workload dict built and
    queued), ``gc.freeze()`` moves the long-lived objects out of the collector's generations, as a
    long-running controller does after its initial sync; without it every full collection during
    the run walks all of them. Unfrozen again when the run ends.
    """
    clock = ManualClock(start=START)
    s = Scheduler(SchedulerConfig(), clock=clock)
    _setup(s, [_cq(f"cq-{i}", f"cohort-{i % max(cohorts, 1)}", str(NOMINAL_PER_CQ)) for i in range(cqs)])
    pod_sets = _pod_sets("1")
    objs: dict[tuple[str, str], dict[str, Any]] = {}
    for i in range(workloads):  # the initial queueing is not charged to decisions
        wl = _workload(f"wl-{i:07d}", f"cq-{i % cqs}", START - workloads + i, 0, pod_sets)
        objs[("bench", wl["metadata"]["name"])] = wl
        s.upsert_workload(wl)
    if freeze_gc:
        gc.collect()
        gc.freeze()
    meter = _Meter(wall_clock, cpu_clock)
    try:
        with meter:
            decisions, cycles = _drain(s, meter, clock, objs, workloads)
    finally:
        if freeze_gc:
            gc.unfreeze()
    return ScaleResult(
        workloads,
        decisions,
        cycles,
        meter.wall,
        meter.cpu,
        meter.phase_cpu.get("schedule", 0.0),
        meter.phase_cpu.get("upsert", 0.0),
        meter.gc_cpu,
        meter.gc_outside_cpu,
    )


def _drain(
    s: Scheduler, meter: _Meter, clock: ManualClock, objs: dict[tuple[str, str], dict[str, Any]], workloads: int
) -> tuple[int, int]:
    """Schedule until every workload was admitted; the previous cycle's admissions finish each cycle."""
    decisions = cycles = 0
    running: list[tuple[dict[str, Any], dict[str, Any]]] = []
    idle_cycles = 0
    while decisions < workloads and idle_cycles < 3:
        result = meter.call("schedule", s.schedule)
        cycles += 1
        now = clock.now()
        # the previous cycle's work completes, then the controller writes this cycle's admissions
        # and the engine sees them back; the objects are built first (the API server's work, not
        # the engine's) and handed over in one timed call, so the meter's own clock reads (~1 us
        # each) are paid once per cycle instead of once per write
        writes = [_with_status(wl, admission, now, finished=True) for wl, admission in running]
        running = [(objs[(adm.namespace, adm.name)], adm.admission) for adm in result.admitted]
        writes.extend(_with_status(wl, admission, now, finished=False) for wl, admission in running)
        if writes:
            meter.call("upsert", _upsert_all, s, writes)
        decisions += len(result.admitted)
        idle_cycles = 0 if result.admitted else idle_cycles + 1
        clock.advance(1.0)
    return decisions, cycles


def _upsert_all(s: Scheduler, objs: list[dict[str, Any]]) -> None:
    upsert = s.upsert_workload
    for obj in objs:
        upsert(obj)


@dataclass(frozen=True, slots=True)
class BaselineResult:
    workloads: int
    admissions: int
    preemptions: int
    cycles: int
    makespan_s: float
    avg_time_to_admission_ms: dict[str, int]
    cq_usage_pct: float
    wall_s: float
    cpu_s: float


# (class, count per CQ, interval s, runtime s, priority, cpu) — Kueue's scheduler performance baseline
BASELINE_CLASSES = (
    ("small", 350, 0.1, 0.2, 50, 1),
    ("medium", 100, 0.5, 0.5, 100, 5),
    ("large", 50, 1.2, 1.0, 200, 20),
)
BASELINE_LOWER_BOUND_S = 66.84
# Kueue's rangespec thresholds for the average time to admission, for comparison
KUEUE_MAX_AVG_TIME_TO_ADMISSION_MS = {"small": 260_000, "medium": 90_000, "large": 23_000}


def run_baseline(scale: float = 1.0, *, wall_clock: Timer = WALL, cpu_clock: Timer = CPU) -> BaselineResult:
    """Kueue's scheduler performance baseline in virtual time; ``scale`` shrinks the per-class counts (tests)."""
    clock = ManualClock(start=START)
    s = Scheduler(SchedulerConfig(), clock=clock)
    preemption = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    names = [f"cq-{c}-{q}" for c in range(5) for q in range(6)]
    _setup(s, [_cq(n, f"cohort-{n.split('-')[1]}", "20", "100", preemption) for n in names])
    events: list[tuple[float, int, str, str]] = []  # (time, seq, kind, key)
    info: dict[str, tuple[dict[str, Any], str, float, float]] = {}  # key -> (obj, class, runtime, created)
    seq = 0
    for cq in names:
        for cls, count, interval, runtime, priority, cpu in BASELINE_CLASSES:
            pod_sets = _pod_sets(str(cpu))
            for i in range(max(1, round(count * scale))):
                created = START + interval * (i + 1)
                name = f"{cq}-{cls}-{i}"
                info[name] = (_workload(name, cq, created, priority, pod_sets), cls, runtime, created)
                heapq.heappush(events, (created, seq, "create", name))
                seq += 1
    meter = _Meter(wall_clock, cpu_clock)
    finish_at: dict[str, float] = {}
    admissions = preemptions = cycles = 0
    first_admit: dict[str, float] = {}
    last_admit: dict[str, float] = {}
    busy_cpu_s = 0.0
    last_finish = START
    while events:
        now = events[0][0]
        clock.set(max(now, clock.now()))
        while events and events[0][0] <= now:
            at, _, kind, key = heapq.heappop(events)
            if kind == "create":
                meter.call("upsert", s.upsert_workload, info[key][0])
            elif kind == "finish" and finish_at.get(key) == at:  # not preempted since it was admitted
                del finish_at[key]
                obj = info[key][0]
                finished = {
                    **obj,
                    "status": {
                        **obj["status"],
                        "conditions": [
                            *obj["status"]["conditions"],
                            {
                                "type": "Finished",
                                "status": "True",
                                "reason": "Succeeded",
                                "message": "",
                                "lastTransitionTime": format_time(now),
                            },
                        ],
                    },
                }
                info[key] = (finished, *info[key][1:])
                meter.call("upsert", s.upsert_workload, finished)
                last_finish = max(last_finish, now)
        result = meter.call("schedule", s.schedule)
        cycles += 1
        for pre in result.preempted:
            key = pre.name
            preemptions += 1
            started = finish_at.pop(key, None)
            if started is not None:
                busy_cpu_s -= (started - now) * _cpu_of(info[key][1])  # the unrun part is given back
            obj = info[key][0]
            evicted = {
                **obj,
                "status": {
                    "conditions": [
                        {
                            "type": "Evicted",
                            "status": "True",
                            "reason": "Preempted",
                            "message": pre.message,
                            "lastTransitionTime": format_time(now),
                        },
                        {
                            "type": "Requeued",
                            "status": "True",
                            "reason": "Preempted",
                            "message": "",
                            "lastTransitionTime": format_time(now),
                        },
                    ]
                },
            }
            info[key] = (evicted, *info[key][1:])
            meter.call("upsert", s.upsert_workload, evicted)
        for adm in result.admitted:
            admissions += 1
            obj, cls, runtime, created = info[adm.name]
            admitted = _with_status(obj, adm.admission, now, finished=False)
            info[adm.name] = (admitted, cls, runtime, created)
            meter.call("upsert", s.upsert_workload, admitted)
            first_admit.setdefault(adm.name, now)
            last_admit[adm.name] = now
            finish_at[adm.name] = now + runtime
            busy_cpu_s += runtime * _cpu_of(cls)
            heapq.heappush(events, (now + runtime, seq, "finish", adm.name))
            seq += 1
        if not events and any(s.cluster_queue_usage(n).pending_workloads for n in names):
            if cycles > 10 * len(info) + 1000:
                break  # a stuck queue would otherwise spin forever; the report shows the shortfall
            heapq.heappush(events, (clock.now() + 1.0, seq, "tick", ""))  # let timed requeues fire
            seq += 1
    makespan = last_finish - START
    per_class: dict[str, list[float]] = {}
    for key, (_obj, cls, _rt, created) in info.items():
        per_class.setdefault(cls, []).append((last_admit[key] - created) if key in last_admit else 0.0)
    avg = {cls: int(sum(v) * 1000 // len(v)) for cls, v in per_class.items()}
    capacity = 5 * 6 * 20 * makespan
    return BaselineResult(
        len(info),
        admissions,
        preemptions,
        cycles,
        makespan,
        avg,
        100.0 * busy_cpu_s / capacity if capacity else 0.0,
        meter.wall,
        meter.cpu,
    )


def _cpu_of(cls: str) -> int:
    return next(c[5] for c in BASELINE_CLASSES if c[0] == cls)


def fresh_process(isolate: bool, fn: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
    """Run one measurement, in a new interpreter when ``isolate``: each size then starts from the
    heap a controller has after its initial sync, not from the fragments the benchmark's earlier
    (smaller) runs left behind; in one process the 100k run measured 20-30 % slower for that
    reason alone, which also skewed the growth ratio between sizes."""
    if not isolate:
        return fn(*args, **kwargs)
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(fn, *args, **kwargs).result()


def run_core(
    workloads: int = 100_000,
    cqs: int = 1_000,
    cohorts: int = 10,
    *,
    baseline_scale: float = 1.0,
    out: Callable[[str], None] = print,
    wall_clock: Timer = WALL,
    cpu_clock: Timer = CPU,
    isolate: bool = False,
) -> float:
    """Print the report; return (and print last) decisions/s of the full-size run.

    ``wall_clock``/``cpu_clock`` are the clocks read around engine calls (tests inject deterministic
    ones, in process); ``isolate`` runs every measurement in a fresh interpreter (the CLI does).
    """
    out(
        f"pykueue bench core: {workloads} workloads of 1 cpu, {cqs} ClusterQueues ({NOMINAL_PER_CQ} cpu each) "
        f"in {cohorts} cohorts; finished work frees quota every cycle"
    )
    out("  per decision: schedule() plus the two write-backs a controller does (admitted status, finish);")
    out("  gc_cpu_us: the garbage collector's part of that time (collections that start inside engine calls);")
    out("  gc_out_us: collections during the run outside engine calls (not charged: started by the benchmark's")
    out("  own stand-in for the API server's objects)" + ("; each run in a fresh interpreter" if isolate else ""))
    sizes = sorted({max(1, workloads // 10), max(1, workloads // 5), max(1, workloads // 2), workloads})
    out(
        f"{'workloads':>10} {'decisions':>10} {'cycles':>7} {'wall_s':>9} {'cpu_s':>9} {'decisions/s':>12} "
        f"{'us/decision':>12} {'cpu_us/decision':>16} {'schedule_cpu_us':>16} {'upsert_cpu_us':>14} {'gc_cpu_us':>10} "
        f"{'gc_out_us':>10}"
    )
    results = []
    for n in sizes:
        r = fresh_process(isolate, run_scale, n, cqs, cohorts, wall_clock=wall_clock, cpu_clock=cpu_clock)
        results.append(r)
        out(
            f"{r.workloads:>10} {r.decisions:>10} {r.cycles:>7} {r.wall_s:>9.3f} {r.cpu_s:>9.3f} "
            f"{r.per_second:>12.1f} {r.wall_us:>12.2f} {r.cpu_us:>16.2f} {r.schedule_cpu_us:>16.2f} "
            f"{r.upsert_cpu_us:>14.2f} {r.gc_cpu_us:>10.2f} {r.gc_outside_cpu_us:>10.2f}"
        )
    first, last = results[0], results[-1]
    wall_ratio = last.wall_us / first.wall_us if first.wall_us else 0.0
    cpu_ratio = last.cpu_us / first.cpu_us if first.cpu_us else 0.0
    out(f"per-decision cost ratio {last.workloads} vs {first.workloads}: wall {wall_ratio:.3f}, cpu {cpu_ratio:.3f}")
    b = fresh_process(isolate, run_baseline, baseline_scale, wall_clock=wall_clock, cpu_clock=cpu_clock)
    out(
        f"baseline shape (Kueue's scheduler baseline, scale {baseline_scale:g}): 5 cohorts x 6 CQs, "
        f"{b.workloads} workloads, virtual time"
    )
    bound = (
        f" (lower bound {BASELINE_LOWER_BOUND_S}; ratio {b.makespan_s / BASELINE_LOWER_BOUND_S:.3f})"
        if baseline_scale == 1.0
        else ""
    )
    out(f"  makespan_s: {b.makespan_s:.2f}{bound}")
    for cls, avg in b.avg_time_to_admission_ms.items():
        out(
            f"  class {cls}: avg time to admission {avg} ms (Kueue's threshold "
            f"{KUEUE_MAX_AVG_TIME_TO_ADMISSION_MS[cls]} ms)"
        )
    out(f"  cq usage: {b.cq_usage_pct:.1f}%")
    rate = b.admissions / b.wall_s if b.wall_s > 0 else 0.0
    out(
        f"  decisions: {b.admissions} admissions, {b.preemptions} preemptions, {b.cycles} cycles in "
        f"{b.wall_s:.3f} s wall / {b.cpu_s:.3f} s cpu ({rate:.1f} admissions/s)"
    )
    frozen = fresh_process(
        isolate, run_scale, workloads, cqs, cohorts, wall_clock=wall_clock, cpu_clock=cpu_clock, freeze_gc=True
    )
    out(
        f"with gc.freeze() after setup (as a controller does after its initial sync), {frozen.workloads} "
        f"workloads: cpu_us/decision {frozen.cpu_us:.2f} (gc {frozen.gc_cpu_us:.2f}), "
        f"{frozen.cpu_per_second:.1f} decisions per cpu second, decisions/s {frozen.per_second:.1f}"
    )
    out(
        f"decisions per cpu second ({last.workloads} workloads; wall also counts other processes): "
        f"{last.cpu_per_second:.1f}"
    )
    out(f"decisions/s with gc.freeze() after setup: {frozen.per_second:.1f}")
    out(f"decisions/s: {last.per_second:.1f}")
    return last.per_second
