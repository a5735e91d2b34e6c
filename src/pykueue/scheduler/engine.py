"""The ``Scheduler`` facade of docs/scheduler-api.md: events in, decisions out, read side.

Owns the routing of API events to the cache and the queue manager, the requeue triggers
(finished/deleted/evicted workloads requeue the inadmissible workloads of their cohort tree; CQ,
cohort, flavor and namespace changes requeue everything), the preemption expectations (victims
reported once, until they release their quota), the assumed admissions (a replay of the object
an admission was made from is ignored) and the multi-head loop. Records are kept for pending and
quota-holding workloads only: a finished workload is released and forgotten, so memory and
per-decision cost follow what is live, not everything ever seen.

Multi-head invariant: ``schedule()`` runs Kueue cycles (``cycle.Round``) back to back. After the
first round only cohort trees in which something changed are run again — an admission, a head
parked as inadmissible (the next head differs), or a newly issued preemption. A tree in which a
round changed nothing would repeat that round exactly (same heads, same quota, same answers), so
skipping it cannot change any later decision: the admissions equal, in order, those of
``heads_per_cycle=1`` called until nothing changes (tests/scheduler/unit/test_multi_admit_equivalence.py).

``schedule()`` disables the cyclic garbage collector while it runs and lets it catch up
afterwards; what an embedder should do about the collector (and what it costs otherwise) is in
docs/performance.md, "The garbage collector and long-lived records".
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pykueue.api.meta.clock import Clock, SystemClock
from pykueue.api.meta.quantity import QuantityError

from . import views
from .algorithm.cycle import Round, RoundContext
from .algorithm.preemption import Preemptor
from .gauges import GaugeSnapshot, gauge_snapshot
from .state import admission_fair_sharing
from .state.cache import Cache
from .state.clusterqueue import ClusterQueue, parse_quotas, parse_weight
from .state.pending_queues import QueueManager
from .state.resource_amounts import RequestPolicy
from .state.workload_info import (
    FINISHED,
    PENDING,
    RESERVED,
    ShapeCache,
    StatusUpdate,
    WorkloadInfo,
    WorkloadKey,
    parse_workload,
    status_only_update,
)
from .types import CycleResult, InvalidObject, Pending, PendingInfo, QueueUsage, SchedulerConfig, SchedulerStats

__all__ = ["Scheduler"]


def _signature(wl: WorkloadInfo) -> tuple[Any, ...]:
    """What decides whether an inadmissible workload deserves another look (Kueue's requeue rules)."""
    return (
        wl.priority,
        wl.timestamp,
        wl.queue_name,
        wl.requeued_false,
        wl.requeue_at,
        wl.failed_checks,
        wl.active,
        wl.gated,
        wl.preemption_gated,
        tuple(
            (ps.name, ps.count, ps.min_count, tuple(sorted(ps.per_pod.items())), ps.reclaimable) for ps in wl.podsets
        ),
    )


class Scheduler:
    def __init__(self, config: SchedulerConfig | None = None, *, clock: Clock | None = None) -> None:
        self.config = config or SchedulerConfig()
        self.clock: Clock = clock or SystemClock()
        self.cache = Cache()
        self.queues = QueueManager()
        self.workloads: dict[WorkloadKey, WorkloadInfo] = {}
        self.expectations: set[WorkloadKey] = set()
        self._unqueued: dict[WorkloadKey, WorkloadInfo] = {}
        """Pending workloads no ClusterQueue queue holds (no LocalQueue, a stopped one, a missing
        ClusterQueue): each gets one Pending record saying why at the next ``schedule()``."""
        self._cq_was_active: dict[str, bool] = {}
        self._cq_was_active_version = -1
        """``cache.version`` when ``_cq_was_active`` was last brought up to date."""
        self._active_memo: tuple[int, dict[str, ClusterQueue]] | None = None
        self._arrived: dict[WorkloadKey, WorkloadInfo] = {}
        self._requeue_all = False
        self._requeue_trees: set[str] = set()
        self.preemptor = Preemptor(
            self.cache, self.config.fair_sharing, self.expectations, self.clock.now, self.afs_usage
        )
        self.stats_rounds = 0
        self.stats_nominations = 0
        self.eligibility: dict[tuple[str, str], str | None] = {}
        self.request_policy = RequestPolicy(
            tuple(self.config.exclude_resource_prefixes),
            tuple((t.input, t.strategy == "Replace", dict(t.outputs)) for t in self.config.resource_transformations),
        )
        self._ns_memo: dict[tuple[str, str], bool] = {}
        self.shapes = ShapeCache()
        """Parsed pod sets per distinct ``spec.podSets``: one parse per job template, not per workload."""
        self.assumed: dict[WorkloadKey, str] = {}
        """Admitted by this engine, status not yet echoed: key -> resourceVersion it was read at."""
        self._round_context = RoundContext(
            config=self.config,
            cache=self.cache,
            queues=self.queues,
            preemptor=self.preemptor,
            eligibility=self.eligibility,
            expectations=self.expectations,
            assumed=self.assumed,
            namespace_matches=self.namespace_matches,
            afs_usage=self.afs_usage,
            on_assumed=self.on_assumed,
            now=self.clock.now,
        )

    # ------------------------------------------------------------------------------ namespaces
    def upsert_namespace(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        self.cache.namespaces[meta["name"]] = dict(meta.get("labels") or {})
        self._requeue_all = True

    def delete_namespace(self, name: str) -> None:
        self.cache.namespaces.pop(name, None)

    # ------------------------------------------------------------------------------ flavors
    def upsert_resource_flavor(self, obj: Mapping[str, Any]) -> None:
        self.cache.flavors[obj["metadata"]["name"]] = obj
        self.cache.version += 1
        self.eligibility.clear()
        self._requeue_all = True

    def delete_resource_flavor(self, name: str) -> None:
        self.cache.flavors.pop(name, None)
        self.cache.version += 1
        self.eligibility.clear()
        self._requeue_all = True

    # ------------------------------------------------------------------------------ cohorts
    def upsert_cohort(self, obj: Mapping[str, Any]) -> None:
        name = obj["metadata"]["name"]
        spec = obj.get("spec") or {}
        with _bad_input("Cohort", name):
            parse_quotas(list(spec.get("resourceGroups") or ()))
            parse_weight(spec)
        self.cache.cohort_specs[name] = spec
        self.cache.mark_dirty()
        self._requeue_all = True

    def delete_cohort(self, name: str) -> None:
        self.cache.cohort_specs.pop(name, None)
        self.cache.mark_dirty()
        self._requeue_all = True

    # ------------------------------------------------------------------------------ cluster queues
    def upsert_cluster_queue(self, obj: Mapping[str, Any]) -> None:
        name = obj["metadata"]["name"]
        cq = self.cache.cqs.get(name)
        created = cq is None
        probe = ClusterQueue(name)
        with _bad_input("ClusterQueue", name):
            probe.load(obj)
        if cq is None:
            cq = probe
            self.cache.cqs[name] = cq
        else:
            cq.load(obj)
        self.queues.upsert_cluster_queue(name, cq.strategy)
        if created:
            self.cache.attach_orphans(cq)
            self._pull_into(name)
        self.cache.mark_dirty()
        self._requeue_all = True

    def delete_cluster_queue(self, name: str) -> None:
        cq = self.cache.cqs.pop(name, None)
        if cq is not None:
            self.cache.detach(cq)
        for wl in self.queues.delete_cluster_queue(name):
            self._unqueued[wl.key] = wl
        self.cache.mark_dirty()
        self._requeue_all = True

    def _pull_into(self, cq_name: str) -> None:
        """Queue the pending workloads of every LocalQueue pointing at ``cq_name``."""
        now = self.clock.now()
        for lq in self.queues.local_queues.values():
            if lq.cq_name != cq_name:
                continue
            for wl in self.queues.pending_of_lq(lq.key):
                if wl.key not in self.queues.location:
                    self.queues.add(wl, now)
                    self._unqueued.pop(wl.key, None)

    # ------------------------------------------------------------------------------ local queues
    def upsert_local_queue(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "default", meta["name"])
        spec = obj.get("spec") or {}
        lq = self.queues.upsert_local_queue(key)
        old_route = (lq.cq_name, lq.stop_policy)
        with _bad_input("LocalQueue", key[1]):
            weight = parse_weight(spec)
        lq.cq_name = spec.get("clusterQueue") or ""
        lq.stop_policy = spec.get("stopPolicy") or "None"
        lq.weight = weight
        admission_fair_sharing.load_status(lq, obj.get("status") or {})
        if old_route != (lq.cq_name, lq.stop_policy):
            self._reroute(key)

    def delete_local_queue(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        if self.queues.delete_local_queue(key):
            self._reroute(key)

    def _reroute(self, lq_key: tuple[str, str]) -> None:
        now = self.clock.now()
        lq = self.queues.local_queues.get(lq_key)
        if lq is not None:
            lq.pending = 0
        for wl in self.queues.pending_of_lq(lq_key):
            self.queues.remove(wl.key)
            if not self.queues.add(wl, now):
                self._unqueued[wl.key] = wl
            else:
                self._unqueued.pop(wl.key, None)

    # ------------------------------------------------------------------------------ workloads
    def upsert_workload(self, obj: Mapping[str, Any]) -> None:
        """Add or replace a Workload; its status decides whether it holds quota or waits.

        Hot path (two calls per admission: the admitted status echoed back, then Finished): the
        echo of a reservation already counted (same spec, same admission) updates the engine's
        record in place without moving usage, other status-only re-parses copy the spec part from
        the previous record, and a finished workload is released and forgotten (nothing about it
        is needed until it changes again).
        """
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "default", meta.get("name", ""))
        version = meta.get("resourceVersion")
        if version and self.assumed.get(key) == version:
            return  # a replay of the object we admitted from: the admission is still in flight
        old = self.workloads.get(key)
        if old is not None:
            was_admitted, was_ready = old.admitted, old.pods_ready
            was_evicted, was_reserved_at = old.evicted, old.quota_reserved_time
            try:  # malformed input raises before anything changed
                quick = status_only_update(
                    old,
                    obj,
                    old.state == RESERVED and self.cache.reserved.get(key) is old,
                    self.config.pods_ready_requeue_by_eviction,
                )
            except _BAD_INPUT as exc:
                raise InvalidObject("Workload", key[1], str(exc)) from exc
            if quick == StatusUpdate.FINISHED:
                self._finish(key, old)
                return
            if quick == StatusUpdate.REFRESHED:  # the echo of a reservation we already count: updated in place
                if self._unqueued:
                    self._unqueued.pop(key, None)
                if self.assumed:
                    self.assumed.pop(key, None)
                if old.admitted != was_admitted or old.pods_ready != was_ready:
                    self.cache.refreshed(old, was_admitted)
                if old.quota_reserved_time != was_reserved_at or old.evicted != was_evicted:
                    self.cache.reranked(old)  # its place among preemption candidates moved
                return
        try:
            wl = parse_workload(
                obj, self.request_policy, self.config.pods_ready_requeue_by_eviction, previous=old, shapes=self.shapes
            )
        except _BAD_INPUT as exc:
            raise InvalidObject("Workload", key[1], str(exc)) from exc
        if self._unqueued:
            self._unqueued.pop(key, None)
        if self.assumed:
            self.assumed.pop(key, None)
        held = self.cache.reserved.get(key)
        if wl.state == RESERVED:
            self.workloads[key] = wl
            if held is not None and held.cq_name == wl.cq_name and (held.usage is wl.usage or held.usage == wl.usage):
                # the status write of a reservation we already count (the usual echo of an Admit)
                self.cache.replace_reserved(held, wl)
                return
            self._leave_queues(key, old)
            self.cache.add_reserved(wl)
            if held is not None and _usage_shrank(held.usage, wl.usage):
                self._requeue_tree_of(wl.cq_name)
            return
        if wl.state == FINISHED:
            self._finish(key, old)
            return
        if held is not None:
            self.cache.remove_reserved(key)
            self.expectations.discard(key)
            self._requeue_tree_of(held.cq_name)
        self.workloads[key] = wl
        if not wl.active or wl.gated:
            self._leave_queues(key, old)
            return
        self._enqueue(wl, old)

    def _finish(self, key: WorkloadKey, old: WorkloadInfo | None) -> None:
        """Release what a finished workload holds and keep no record (it is never queued)."""
        if self._unqueued:
            self._unqueued.pop(key, None)
        if self.assumed:
            self.assumed.pop(key, None)
        held = self.cache.remove_reserved(key)
        if held is not None:
            if self.expectations:
                self.expectations.discard(key)
            self._requeue_tree_of(held.cq_name)
        self.workloads.pop(key, None)
        if old is not None and old.state == RESERVED and key not in self.queues.location:
            return  # an admitted workload's queue entry and LocalQueue tracking went at admission
        self._leave_queues(key, old)

    def _leave_queues(self, key: WorkloadKey, old: WorkloadInfo | None) -> None:
        self.queues.remove(key)
        self.preemptor.forget(key)
        if old is not None:
            self.queues.untrack(old)
        if self._arrived:
            self._arrived.pop(key, None)

    def _enqueue(self, wl: WorkloadInfo, old: WorkloadInfo | None) -> None:
        now = self.clock.now()
        queues = self.queues
        where = queues.location.get(wl.key)
        keep_inadmissible = quiet = False
        sticky = False
        if old is not None and where is not None:
            q = queues.cqs.get(where)
            if q is not None:
                unchanged = _signature(old) == _signature(wl)
                keep_inadmissible = unchanged and wl.key in q.inadmissible
                quiet = unchanged and q.is_inadmissible(wl.key)
                sticky = q.sticky == wl.key
        if old is not None:
            queues.untrack(old)
        queues.track(wl)
        if queues.add(wl, now, immediate=not keep_inadmissible, quiet=quiet):
            if old is None or where is None:
                self._arrived[wl.key] = wl
            if sticky:
                queues.keep_sticky(wl.key)
        else:
            self._unqueued[wl.key] = wl

    def delete_workload(self, namespace: str, name: str) -> None:
        key = (namespace, name)
        self.assumed.pop(key, None)
        old = self.workloads.pop(key, None)
        self._leave_queues(key, old)
        self._unqueued.pop(key, None)
        self.expectations.discard(key)
        held = self.cache.remove_reserved(key)
        if held is not None:
            self._requeue_tree_of(held.cq_name)

    def forget(self, namespace: str, name: str) -> None:
        """The status write of an admission failed: release the assumed quota and requeue."""
        key = (namespace, name)
        self.assumed.pop(key, None)
        held = self.cache.remove_reserved(key)
        if held is None:
            return
        self._requeue_tree_of(held.cq_name)
        obj = held.obj
        wl = parse_workload(obj, self.request_policy, self.config.pods_ready_requeue_by_eviction, shapes=self.shapes)
        if wl.state == RESERVED:
            wl.state = PENDING
            wl.admission = None
            wl.usage = {}
        self.workloads[key] = wl
        if wl.state == PENDING and wl.active and not wl.gated:
            self._enqueue(wl, None)

    def _requeue_tree_of(self, cq_name: str) -> None:
        self._requeue_trees.add(cq_name)

    # ------------------------------------------------------------------------------ scheduling
    def schedule(self) -> CycleResult:
        """Run Kueue cycles until no cohort tree changes (or ``heads_per_cycle`` cycles)."""
        gc_was_enabled = gc.isenabled()
        gc.disable()  # a cycle allocates many short-lived, acyclic records; collect afterwards
        try:
            return self._schedule()
        finally:
            if gc_was_enabled:
                gc.enable()

    def _schedule(self) -> CycleResult:
        self.cache.ensure_fresh()
        self._apply_requeues()
        now = self.clock.now()
        self.queues.wake(now)
        self._ns_memo.clear()
        admitted: list[Any] = []
        preempted: list[Any] = []
        active = self._active_cqs()
        pending: list[Pending] = self._reports_without_round(active)
        limit = self.config.heads_per_cycle
        live = self._live(active, None)
        rounds = 0
        while live:
            rnd = Round(self._round_context)
            rnd.run(live)
            rounds += 1
            self.stats_nominations += rnd.nominations
            admitted.extend(rnd.admitted)
            preempted.extend(rnd.preempted)
            pending.extend(rnd.pending)
            if limit and rounds >= limit:
                break
            live = self._live(active, rnd.changed_trees)
        self.stats_rounds += rounds
        if admitted:
            done = {(a.namespace, a.name) for a in admitted}
            pending = [p for p in _last_per_workload(pending) if (p.namespace, p.name) not in done]
        else:
            pending = _last_per_workload(pending)
        return CycleResult(admitted=admitted, preempted=preempted, pending=pending)

    def _active_cqs(self) -> dict[str, ClusterQueue]:
        """The active ClusterQueues, recomputed only when the cache's shape changed: a cycle used
        to test all of them (1,000 in the large benchmark) even when it admitted one workload."""
        memo = self._active_memo
        if memo is None or memo[0] != self.cache.version:
            cache = self.cache
            memo = self._active_memo = (
                cache.version,
                {name: cq for name, cq in cache.cqs.items() if cache.is_active(cq)},
            )
        return memo[1]

    def stats(self) -> SchedulerStats:
        pushes = sum(q.seq for q in self.queues.cqs.values()) + self.queues.retired_seq
        return SchedulerStats(self.stats_rounds, self.stats_nominations, pushes)

    def _live(self, active: dict[str, ClusterQueue], trees: set[str] | None) -> list[str]:
        """CQs to take a head from in the next round: active, with queued workloads, and (after
        the first round) in a cohort tree whose state changed in the previous round."""
        cqs = self.queues.cqs
        out: list[str] = []
        for name, cq in active.items():
            q = cqs.get(name)
            if q is None or not q.active:
                continue
            if trees is not None and cq.tree_key not in trees:
                continue
            out.append(name)
        return out

    def namespace_matches(self, cq: ClusterQueue, namespace: str) -> bool:
        """Memoised per cycle: namespaces and selectors do not change inside ``schedule``."""
        key = (cq.name, namespace)
        found = self._ns_memo.get(key)
        if found is None:
            found = self._ns_memo[key] = self.cache.namespace_matches(cq, namespace)
        return found

    def _apply_requeues(self) -> None:
        def ns_ok(cq_name: str, wl: WorkloadInfo) -> bool:
            cq = self.cache.cqs.get(cq_name)
            return cq is not None and self.cache.namespace_matches(cq, wl.namespace)

        if self._requeue_all:
            self.queues.queue_inadmissible(list(self.queues.cqs), ns_ok)
        elif self._requeue_trees:
            names: set[str] = set()
            trees: set[str] = set()
            for cq_name in self._requeue_trees:
                cq = self.cache.cqs.get(cq_name)
                if cq is not None and cq.tree_key not in trees:
                    trees.add(cq.tree_key)
                    names.update(c.name for c in self.cache.tree_cqs(cq))
            self.queues.queue_inadmissible(sorted(names), ns_ok)
        self._requeue_all = False
        self._requeue_trees.clear()

    def _reports_without_round(self, active_cqs: Mapping[str, ClusterQueue]) -> list[Pending]:
        """Pending records no round produces: unqueued workloads, arrivals diverted by a failed
        equivalent, and workloads of inactive ClusterQueues."""
        out: list[Pending] = []
        for wl in self._unqueued.values():
            lq = self.queues.local_queues.get(wl.lq_key)
            if lq is None:
                reason, message = "Misconfigured", f"LocalQueue {wl.queue_name} doesn't exist"
            elif lq.stop_policy != "None":
                reason, message = "Suspended", f"LocalQueue {wl.queue_name} is stopped"
            elif lq.cq_name not in self.cache.cqs:
                reason, message = "Misconfigured", f"ClusterQueue {lq.cq_name} doesn't exist"
            else:
                continue
            out.append(Pending(wl.namespace, wl.name, reason, message, wl.resource_requests()))
        self._unqueued.clear()
        for wl, reason in self.queues.take_bypassed():
            out.append(
                Pending(
                    wl.namespace,
                    wl.name,
                    reason,
                    "Bypassed scheduling evaluation because an equivalent workload recently failed",
                    wl.resource_requests(),
                )
            )
        # "ClusterQueue X is inactive": once for everything queued when a CQ turns inactive, and
        # once for each later arrival while it stays inactive (O(changes), never O(pending)).
        reported: set[WorkloadKey] = set()
        if self._cq_was_active_version != self.cache.version:  # activity can only change with the shape
            self._cq_was_active_version = self.cache.version
            for name, q in self.queues.cqs.items():
                cq = self.cache.cqs.get(name)
                if cq is None:
                    continue
                active = name in active_cqs
                if not active and self._cq_was_active.get(name, True):
                    for wl in q.all_pending():
                        reported.add(wl.key)
                        out.append(_inactive(wl, name))
                self._cq_was_active[name] = active
        for key, wl in self._arrived.items():
            where = self.queues.location.get(key)
            cq = self.cache.cqs.get(where) if where is not None else None
            if cq is not None and key not in reported and not self._cq_was_active.get(cq.name, True):
                out.append(_inactive(wl, cq.name))
        self._arrived.clear()
        return out

    # ------------------------------------------------------------------------------ AFS
    def afs_usage(self, wl: WorkloadInfo) -> float:
        return admission_fair_sharing.local_queue_usage(
            self.config.admission_fair_sharing, self.queues.local_queues.get(wl.lq_key)
        )

    def on_assumed(self, wl: WorkloadInfo) -> None:
        cq = self.cache.cqs.get(wl.cq_name)
        if cq is not None and cq.afs:
            admission_fair_sharing.add_entry_penalty(
                self.config.admission_fair_sharing, self.queues.local_queues.get(wl.lq_key), wl.usage
            )

    # ------------------------------------------------------------------------------ read side
    def _afs_usage_if_on(self) -> Callable[[WorkloadInfo], float] | None:
        return self.afs_usage if self.config.admission_fair_sharing is not None else None

    def gauges(self) -> GaugeSnapshot:
        """Every ClusterQueue, LocalQueue and cohort's numbers for Kueue's gauges (scrape time only)."""
        return gauge_snapshot(self.cache, self.queues)

    def pending_workloads(
        self, cluster_queue: str, offset: int = 0, limit: int | None = None, local_queue: tuple[str, str] | None = None
    ) -> list[PendingInfo]:
        return views.pending_workloads(
            self.queues, self.cache, self._afs_usage_if_on(), cluster_queue, offset, limit, local_queue
        )

    def cluster_queue_usage(self, name: str) -> QueueUsage:
        self.cache.ensure_fresh()
        return views.cluster_queue_usage(self.queues, self.cache, name)

    def local_queue_usage(self, namespace: str, name: str) -> QueueUsage:
        """Like ``cluster_queue_usage`` for one LocalQueue (borrowed is always 0)."""
        return views.local_queue_usage(self.queues, self.cache, namespace, name)

    def cluster_queue_active(self, name: str) -> tuple[bool, str, str]:
        self.cache.ensure_fresh()
        cq = self.cache.cqs.get(name)
        if cq is None:
            return False, "NotFound", f"ClusterQueue {name} not found"
        return self.cache.cq_status(cq)

    def weighted_share(self, cq_or_cohort_kind: str, name: str) -> int:
        self.cache.ensure_fresh()
        return views.weighted_share(self.cache, cq_or_cohort_kind, name)


_BAD_INPUT = (QuantityError, ValueError, KeyError, TypeError, AttributeError)


@contextmanager
def _bad_input(kind: str, name: str) -> Iterator[None]:
    """Malformed objects raise InvalidObject (a 400 for the caller), never leave half-applied state."""
    try:
        yield
    except _BAD_INPUT as exc:
        raise InvalidObject(kind, name, str(exc)) from exc


def _inactive(wl: WorkloadInfo, cq_name: str) -> Pending:
    return Pending(wl.namespace, wl.name, "Suspended", f"ClusterQueue {cq_name} is inactive", wl.resource_requests())


def _usage_shrank(old: Mapping[Any, int], new: Mapping[Any, int]) -> bool:
    return any(new.get(fr, 0) < amount for fr, amount in old.items())


def _last_per_workload(pending: list[Pending]) -> list[Pending]:
    """A workload considered in several rounds reports only its final state."""
    last: dict[tuple[str, str], int] = {}
    for index, p in enumerate(pending):
        last[(p.namespace, p.name)] = index
    return [p for index, p in enumerate(pending) if last[(p.namespace, p.name)] == index]
