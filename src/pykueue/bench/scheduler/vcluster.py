"""A cluster in virtual time around the production engine: the event loop both simulators share.

Owns the discrete-event simulation of what the controllers and the job runner do around
:class:`pykueue.scheduler.Scheduler`, with a ``ManualClock``: workload creations at their instants,
finishes ``runtime`` after admission, and scheduling cycles after each batch of simultaneous events
(repeated at the same instant while they admit or preempt, so a preemptor gets its freed quota
without waiting for an unrelated event). A preempted workload is evicted and requeued at once (the
runner's and workload controller's job) and restarts its full runtime when admitted again; its
pending finish is ignored. Scheduling and API calls take no virtual time, unless the two latencies
a real cluster adds are given (both 0 by default, which ``bench scheduler --virtual-time`` keeps):
``eviction_ms``, how long a preempted workload keeps its quota (``Evicted=True`` while still
reserved, as the engine sees it until the workload controller releases it; the preemptor waits
meanwhile and is not given the victims again), and ``finish_ms``, how long past its runtime a
workload holds its quota (a real runner sees the admission late and the scheduler sees the finish
late). A third is how coarse a creation's timestamp is: Kubernetes stamps ``creationTimestamp`` in
whole seconds, which is the trace's own resolution when a cluster runs at the trace's pace, but
``stamp_ms`` (default 0: the creation's instant, at second precision) lets a replay stamp in
coarser steps, as a real-time run at a time scale of S stamps S trace seconds (creations, and the
conditions' transition times the engine orders by: evictions, admissions): workloads of one
priority created within one step then tie in queue order, which their uids decide.

Who calls it: ``bench scheduler --virtual-time`` (``virtual.py``) and ``pykueue simulate``
(``pykueue.simulate.replay``). What they measure is theirs: an :class:`Observer` sees every
transition (created, admitted, evicted, finished, still pending with its reason) in time order, and
``instant`` once after the cycles of each instant. Engine time (wall and CPU inside engine calls)
is metered apart.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Any

from pykueue.api.meta.clock import ManualClock, format_time
from pykueue.scheduler import Admit, Pending, Preempt, Scheduler, SchedulerConfig

__all__ = ["START_S", "Observer", "VirtualCluster", "conditions"]

START_S = 1_700_000_000
_CREATE, _FINISH, _RELEASE, _TICK = 0, 1, 2, 3
MAX_CYCLES_PER_INSTANT = 1_000
MAX_IDLE_TICKS = 600
"""After the last event, how many 1 s ticks to wait for a timed requeue before giving up."""


class Observer:
    """What a simulator records; every method is a no-op here. ``key`` is ``namespace/name``."""

    def created(self, key: str, now_ms: int) -> None:
        pass

    def admitted(self, key: str, now_ms: int, admit: Admit) -> None:
        pass

    def evicted(self, key: str, now_ms: int, preempt: Preempt) -> None:
        pass

    def finished(self, key: str, now_ms: int) -> None:
        pass

    def pending(self, now_ms: int, pending: Pending) -> None:
        pass

    def instant(self, now_ms: int, touched_namespaces: set[str]) -> None:
        pass


class _Meter:
    """Wall (and, when asked, CPU) time inside engine calls. ``process_time`` is a system call that
    costs ~100 us on some virtual machines, so a replay that does not report CPU skips it."""

    def __init__(self, cpu: bool = True) -> None:
        self.wall = 0.0
        self.cpu = 0.0
        self.measure_cpu = cpu

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if not self.measure_cpu:
            w0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                self.wall += time.perf_counter() - w0
        w0, c0 = time.perf_counter(), time.process_time()
        try:
            return fn(*args)
        finally:
            self.wall += time.perf_counter() - w0
            self.cpu += time.process_time() - c0


def conditions(now_s: float, *types: tuple[str, str, str]) -> list[dict[str, Any]]:
    when = format_time(now_s)
    return [{"type": t, "status": s, "reason": r, "message": "", "lastTransitionTime": when} for t, s, r in types]


def _holds_quota(obj: dict[str, Any]) -> bool:
    status = obj.get("status") or {}
    return bool(status.get("admission")) and any(
        c["type"] == "QuotaReserved" and c["status"] == "True" for c in status.get("conditions") or ()
    )


class VirtualCluster:
    """The engine, a virtual clock and the workloads' lifecycle; time is ms since ``start_s``."""

    def __init__(
        self,
        config: SchedulerConfig,
        observer: Observer,
        *,
        start_s: float = START_S,
        meter_cpu: bool = True,
        eviction_ms: int = 0,
        finish_ms: int = 0,
        stamp_ms: int = 0,
        stamp_phase_ms: int = 0,
    ) -> None:
        self.eviction_ms = eviction_ms
        self.stamp_ms = stamp_ms
        self.stamp_phase_ms = stamp_phase_ms
        """Where the steps of ``stamp_ms`` start: a real run's seconds begin wherever its clock was."""
        self.finish_ms = finish_ms
        self.evicting: dict[str, str] = {}
        """Preempted workloads still holding their quota (only with ``eviction_ms``), with the reason."""
        self.start_s = start_s
        self.clock = ManualClock(start=float(start_s))
        self.engine = Scheduler(config, clock=self.clock)
        self.meter = _Meter(meter_cpu)
        self.observer = observer
        self.objs: dict[str, dict[str, Any]] = {}
        self.runtime_ms: dict[str, int] = {}
        self.finish_at: dict[str, int] = {}
        self.events: list[tuple[int, int, int, str]] = []
        self.seq = 0
        self.cycles = self.admissions = self.preemptions = 0
        self.touched: set[str] = set()
        self.last_activity_ms = 0

    # ------------------------------------------------------------------ input
    def apply(self, upsert: Callable[[dict[str, Any]], None], obj: dict[str, Any]) -> None:
        """Feed a non-workload object (``engine.upsert_cluster_queue`` and friends), metered."""
        self.meter.call(upsert, obj)

    def submit(self, at_ms: int, obj: dict[str, Any], runtime_ms: int) -> str:
        """Create ``obj`` (a Workload without creationTimestamp) at ``at_ms``; it runs ``runtime_ms``."""
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        self.objs[key] = obj
        self.runtime_ms[key] = runtime_ms
        self._push(at_ms, _CREATE, key)
        return key

    def admit_running(self, obj: dict[str, Any], remaining_ms: int) -> str:
        """Load a workload that already holds quota (its status says so); it finishes in ``remaining_ms``."""
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        self._upsert(key, obj)
        self.runtime_ms[key] = remaining_ms
        self.finish_at[key] = remaining_ms
        self._push(remaining_ms, _FINISH, key)
        return key

    def load_pending(self, obj: dict[str, Any], runtime_ms: int) -> str:
        """Load a workload that is already waiting (created before the start)."""
        meta = obj["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        self.runtime_ms[key] = runtime_ms
        self._upsert(key, obj)
        return key

    def tick(self, at_ms: int) -> None:
        """Make sure a scheduling cycle runs at ``at_ms`` (e.g. for workloads loaded already pending)."""
        self._push(at_ms, _TICK, "")

    def _push(self, at_ms: int, kind: int, key: str) -> None:
        heapq.heappush(self.events, (at_ms, kind, self.seq, key))
        self.seq += 1

    def _upsert(self, key: str, obj: dict[str, Any]) -> None:
        self.objs[key] = obj
        self.meter.call(self.engine.upsert_workload, obj)
        self.touched.add(key.partition("/")[0])

    # ------------------------------------------------------------------ events
    def _stamp_s(self, now_ms: int) -> float:
        """The time the cluster writes into timestamps at ``now_ms`` (in ``stamp_ms`` steps if given)."""
        if self.stamp_ms <= 0:
            return self.start_s + now_ms / 1000
        step = (now_ms - self.stamp_phase_ms) // self.stamp_ms
        return self.start_s + (step * self.stamp_ms + self.stamp_phase_ms) / 1000

    def _apply_event(self, now_ms: int, kind: int, key: str) -> None:
        if kind == _TICK:
            return
        now_s = self._stamp_s(now_ms)
        self.last_activity_ms = now_ms
        if kind == _RELEASE:
            self._release(key, now_s, self.evicting.pop(key))
            return
        if kind == _CREATE:
            obj = self.objs[key]
            meta = {"uid": key, **obj["metadata"], "creationTimestamp": format_time(now_s)}
            self.observer.created(key, now_ms)
            self._upsert(key, {**obj, "metadata": meta})
        elif self.finish_at.get(key) == now_ms:  # finish, unless evicted since it was admitted
            del self.finish_at[key]
            obj = self.objs[key]
            status = {
                **obj["status"],
                "conditions": [*obj["status"]["conditions"], *conditions(now_s, ("Finished", "True", "ByTest"))],
            }
            self._upsert(key, {**obj, "status": status})
            self.observer.finished(key, now_ms)

    def _cycle(self, now_ms: int) -> bool:
        result = self.meter.call(self.engine.schedule)
        self.cycles += 1
        now_s = self._stamp_s(now_ms)
        evicted = False
        for pre in result.preempted:
            key = f"{pre.namespace}/{pre.name}"
            if key in self.evicting or not _holds_quota(self.objs[key]):
                # as in a real cluster, whose eviction of a workload already Evicted or not holding quota
                # writes nothing: a workload on its way out is not evicted or counted twice, and one the
                # same cycle admits (the engine can pick a workload it has just assumed) stays admitted
                continue
            evicted = True
            self.preemptions += 1
            self.finish_at.pop(key, None)
            self.observer.evicted(key, now_ms, pre)
            if self.eviction_ms <= 0:
                # the eviction completes at once: quota released, requeued (runner + workload controller)
                self._release(key, now_s, pre.reason)
                continue
            obj = self.objs[key]
            held = [c for c in obj["status"]["conditions"] if c["type"] not in ("Evicted", "Preempted")]
            marks = conditions(now_s, ("Evicted", "True", "Preempted"), ("Preempted", "True", pre.reason))
            self._upsert(key, {**obj, "status": {**obj["status"], "conditions": [*held, *marks]}})
            self.evicting[key] = pre.reason
            self._push(now_ms + self.eviction_ms, _RELEASE, key)
        for adm in result.admitted:
            key = f"{adm.namespace}/{adm.name}"
            self.admissions += 1
            obj = self.objs[key]
            status = {
                "admission": adm.admission,
                "conditions": conditions(
                    now_s, ("QuotaReserved", "True", "QuotaReserved"), ("Admitted", "True", "Admitted")
                ),
            }
            self._upsert(key, {**obj, "status": status})
            self.observer.admitted(key, now_ms, adm)
            self.last_activity_ms = now_ms
            finish = now_ms + self.runtime_ms[key] + self.finish_ms
            self.finish_at[key] = finish
            self._push(finish, _FINISH, key)
        for pend in result.pending:
            self.observer.pending(now_ms, pend)
        return bool(result.admitted) or evicted

    def _release(self, key: str, now_s: float, reason: str) -> None:
        """The evicted workload gives its quota back and is requeued (runner + workload controller)."""
        self._upsert(
            key,
            {
                **self.objs[key],
                "status": {
                    "conditions": conditions(
                        now_s,
                        ("Evicted", "True", "Preempted"),
                        ("Preempted", "True", reason),
                        ("QuotaReserved", "False", "Pending"),
                        ("Requeued", "True", "Preempted"),
                    )
                },
            },
        )

    def run(
        self, expect_more: Callable[[], bool], *, until_ms: int | None = None, stop: Callable[[], bool] | None = None
    ) -> float:
        """Play every event (up to ``until_ms``); returns the virtual time of the last activity (ms).

        ``expect_more`` says whether queued work may still be admitted by a timed requeue once no
        event is left (then 1 s ticks are played, at most ``MAX_IDLE_TICKS``); ``stop`` ends the run
        early after any instant.
        """
        idle_ticks = 0
        while self.events:
            now_ms = self.events[0][0]
            if until_ms is not None and now_ms > until_ms:
                break
            self.clock.set(max(self.start_s + now_ms / 1000, self.clock.now()))
            while self.events and self.events[0][0] == now_ms:
                _, kind, _, key = heapq.heappop(self.events)
                self._apply_event(now_ms, kind, key)
            for _ in range(MAX_CYCLES_PER_INSTANT):
                if not self._cycle(now_ms):
                    break
            self.observer.instant(now_ms, self.touched)
            self.touched = set()
            if stop is not None and stop():
                break
            if not self.events and expect_more() and idle_ticks < MAX_IDLE_TICKS:
                # nothing left to happen but work still queued: a timed requeue may still fire
                idle_ticks += 1
                self._push(now_ms + 1000, _TICK, "")
        return float(self.last_activity_ms)
