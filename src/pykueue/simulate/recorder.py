"""What a replay observes: each workload's life and each ClusterQueue's usage, as exact step series.

Owns :class:`ReplayRecorder`, the :class:`~pykueue.bench.scheduler.vcluster.Observer` of a trace
replay. Per workload (:class:`WorkloadRecord`): submit and first-admission time, ClusterQueue,
LocalQueue, priority class, flavors, evictions, finish, and the last pending reason the engine
gave. Per ClusterQueue: the admitted usage per (flavor, resource), integrated over time, with its
change points (for plots), and the pending count (queue length) at every change.

Who calls it: ``replay`` creates one per run; ``metrics`` and ``plots`` read it. Invariant: all
amounts are the API's integer amounts (``pykueue.api.meta.quantity``, cpu in milli); time is ms from
the start of the trace and only moves forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pykueue.api.meta.quantity import to_amount
from pykueue.bench.scheduler.vcluster import Observer
from pykueue.scheduler import Admit, Pending, Preempt

__all__ = ["CQSeries", "ReplayRecorder", "WorkloadRecord"]

FlavorResource = tuple[str, str]


@dataclass(slots=True)
class WorkloadRecord:
    key: str
    local_queue: str
    cluster_queue: str
    priority_class: str
    klass: str
    submit_ms: int
    runtime_ms: int
    admitted_ms: int | None = None
    finished_ms: int | None = None
    evictions: int = 0
    flavors: str = ""
    admission: dict | None = None
    """``status.admission`` of the first admission (the ETA accuracy measurement rebuilds states from it)."""
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    running: bool = False
    since_ms: int = 0
    used: dict[FlavorResource, float] = field(default_factory=dict)
    """Amount × ms held, over all its admissions (for utilisation per LocalQueue and class)."""
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class CQSeries:
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    integral: dict[FlavorResource, float] = field(default_factory=dict)
    """amount × ms."""
    last_ms: int = 0
    points: list[tuple[int, dict[FlavorResource, int]]] = field(default_factory=list)
    """(time, usage after it) at every change."""
    pending: int = 0
    pending_points: list[tuple[int, int]] = field(default_factory=list)

    def advance(self, now_ms: int) -> None:
        if now_ms > self.last_ms:
            span = now_ms - self.last_ms
            for fr, amount in self.usage.items():
                if amount:
                    self.integral[fr] = self.integral.get(fr, 0.0) + amount * span
            self.last_ms = now_ms


def _usage_of(admit: Admit) -> tuple[dict[FlavorResource, int], str]:
    usage: dict[FlavorResource, int] = {}
    flavors: set[str] = set()
    for psa in admit.admission.get("podSetAssignments") or ():
        assigned = psa.get("flavors") or {}
        for res, qty in (psa.get("resourceUsage") or {}).items():
            flavor = assigned.get(res, "")
            flavors.add(flavor)
            usage[(flavor, res)] = usage.get((flavor, res), 0) + to_amount(res, qty)
    return usage, ",".join(sorted(f for f in flavors if f))


def _release(rec: WorkloadRecord, now_ms: int) -> None:
    span = now_ms - rec.since_ms
    for fr, amount in rec.usage.items():
        rec.used[fr] = rec.used.get(fr, 0.0) + amount * span


class ReplayRecorder(Observer):
    def __init__(self, records: dict[str, WorkloadRecord], cluster_queues: list[str]) -> None:
        self.records = records
        self.cqs: dict[str, CQSeries] = {name: CQSeries() for name in cluster_queues}
        self.end_ms = 0

    def _cq(self, name: str) -> CQSeries | None:
        return self.cqs.get(name)

    def _pending(self, cq_name: str, now_ms: int, delta: int) -> None:
        cq = self._cq(cq_name)
        if cq is not None:
            cq.pending += delta
            cq.pending_points.append((now_ms, cq.pending))

    def _change(self, cq_name: str, now_ms: int, usage: dict[FlavorResource, int], sign: int) -> None:
        cq = self._cq(cq_name)
        if cq is None:
            return
        cq.advance(now_ms)
        for fr, amount in usage.items():
            cq.usage[fr] = cq.usage.get(fr, 0) + sign * amount
        if cq.points and cq.points[-1][0] == now_ms:
            cq.points[-1] = (now_ms, dict(cq.usage))
        else:
            cq.points.append((now_ms, dict(cq.usage)))

    def created(self, key: str, now_ms: int) -> None:
        self._pending(self.records[key].cluster_queue, now_ms, +1)
        self.end_ms = max(self.end_ms, now_ms)

    def admitted(self, key: str, now_ms: int, admit: Admit) -> None:
        rec = self.records[key]
        if rec.admitted_ms is None:
            rec.admitted_ms = now_ms
            rec.admission = admit.admission
        rec.cluster_queue = admit.cluster_queue
        rec.usage, rec.flavors = _usage_of(admit)
        rec.running = True
        rec.since_ms = now_ms
        rec.reason = rec.message = ""
        self._pending(admit.cluster_queue, now_ms, -1)
        self._change(admit.cluster_queue, now_ms, rec.usage, +1)

    def evicted(self, key: str, now_ms: int, preempt: Preempt) -> None:
        rec = self.records[key]
        rec.evictions += 1
        if rec.running:
            rec.running = False
            _release(rec, now_ms)
            self._change(rec.cluster_queue, now_ms, rec.usage, -1)
            self._pending(rec.cluster_queue, now_ms, +1)

    def finished(self, key: str, now_ms: int) -> None:
        rec = self.records[key]
        rec.finished_ms = now_ms
        if rec.running:
            rec.running = False
            _release(rec, now_ms)
            self._change(rec.cluster_queue, now_ms, rec.usage, -1)
        self.end_ms = max(self.end_ms, now_ms)

    def pending(self, now_ms: int, pending: Pending) -> None:
        rec = self.records.get(f"{pending.namespace}/{pending.name}")
        if rec is not None:
            rec.reason, rec.message = pending.reason, pending.message

    def close(self, end_ms: int) -> None:
        """Integrate every series up to ``end_ms`` (the end of the replay)."""
        self.end_ms = max(self.end_ms, end_ms)
        for cq in self.cqs.values():
            cq.advance(self.end_ms)
