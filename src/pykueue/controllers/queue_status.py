"""Status of ClusterQueues, LocalQueues and Cohorts; finalizers of ClusterQueues and ResourceFlavors.

Owns: ``status`` of CQs (pending/reserving/admitted counts, flavorsReservation, flavorsUsage with
``borrowed``, the ``Active`` condition with Kueue's reasons and messages, fairSharing.weightedShare)
taken from the scheduler's read side; ``status`` of LQs (counts and flavor totals, also from the
scheduler's read side; ``Active`` = Ready / Stopped / ClusterQueueDoesNotExist /
ClusterQueueIsInactive); Cohort ``fairSharing``; and the ``resource-in-use`` finalizer: added
when no webhook did (cluster mode), removed once a deleted CQ holds no reservation or a deleted RF
is referenced by no CQ.

Who calls it: ``ControllerManager`` routes informer events to :meth:`QueueStatusWriter.mark_*` and
runs :meth:`QueueStatusWriter.run`.
Invariant: writes are coalesced — a queue is written at most once per ``interval`` (100 ms; longer
under load, when flushes are expensive) and only when its computed status differs from the cached one.
"""

from __future__ import annotations

import asyncio
import logging

from pykueue.api.meta.clock import Clock
from pykueue.api.meta.errors import ApiError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.quantity import format_amount
from pykueue.client import Client, GroupVersionResource, Informer
from pykueue.controllers.conditions import FINALIZER, set_condition
from pykueue.controllers.resource_names import CLUSTER_QUEUES, COHORTS, LOCAL_QUEUES, RESOURCE_FLAVORS
from pykueue.controllers.status import update_status
from pykueue.scheduler import Scheduler

__all__ = ["QueueStatusWriter"]

log = logging.getLogger(__name__)
BUDGET_FACTOR = 9.0
"""After a flush that took t seconds the writer pauses at least BUDGET_FACTOR * t (see run())."""
Usage = dict[str, dict[str, tuple[int, int]]]


def _flavor_order(cq: JSONDict) -> list[tuple[str, list[str]]]:
    out = []
    for group in (cq.get("spec") or {}).get("resourceGroups") or []:
        resources = list(group.get("coveredResources") or [])
        for flavor in group.get("flavors") or []:
            out.append((flavor.get("name", ""), resources))
    return out


def _flavor_list(order: list[tuple[str, list[str]]], usage: Usage, *, borrowed: bool) -> list[JSONDict]:
    seen = {f for f, _ in order}
    extra = [(f, sorted(r)) for f, r in usage.items() if f not in seen]
    out = []
    for flavor, resources in order + extra:
        entries = []
        for res in resources:
            total, borrow = usage.get(flavor, {}).get(res, (0, 0))
            entry: JSONDict = {"name": res, "total": format_amount(res, total)}
            if borrowed:
                entry["borrowed"] = format_amount(res, borrow)
            entries.append(entry)
        out.append({"name": flavor, "resources": entries})
    return out


class QueueStatusWriter:
    def __init__(
        self,
        client: Client,
        clock: Clock,
        scheduler: Scheduler,
        *,
        fair_sharing: bool,
        cluster_queues: Informer,
        local_queues: Informer,
        cohorts: Informer,
        flavors: Informer,
        interval: float = 0.1,
    ) -> None:
        self._client = client
        self._clock = clock
        self._scheduler = scheduler
        self._fair = fair_sharing
        self._cqs = cluster_queues
        self._lqs = local_queues
        self._cohorts = cohorts
        self._flavors = flavors
        # A LocalQueue's status comes from the engine (Scheduler.local_queue_usage), which reads only
        # its ClusterQueue's quota holders and its own pending workloads, never every Workload.
        self._interval = interval
        self._dirty_cq: set[str] = set()
        self._dirty_lq: set[tuple[str, str]] = set()
        self._dirty_cohort: set[str] = set()
        self._dirty_rf: set[str] = set()
        self._wake = asyncio.Event()

    # ------------------------------------------------------------------ marking

    def _kick(self) -> None:
        self._wake.set()

    def mark_all(self) -> None:
        self._dirty_cq.update(c["metadata"]["name"] for c in self._cqs.list())
        self._dirty_lq.update((q["metadata"].get("namespace", ""), q["metadata"]["name"]) for q in self._lqs.list())
        self._dirty_cohort.update(c["metadata"]["name"] for c in self._cohorts.list())
        self._kick()

    def on_cluster_queue(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        name = obj["metadata"]["name"]
        if etype != "DELETED":
            self._dirty_cq.add(name)
        if (
            old is None
            or old.get("spec") != obj.get("spec")
            or etype == "DELETED"
            or ((old.get("status") or {}).get("conditions") != (obj.get("status") or {}).get("conditions"))
        ):
            for lq in self._lqs.list():
                if (lq.get("spec") or {}).get("clusterQueue") == name:
                    self._dirty_lq.add((lq["metadata"].get("namespace", ""), lq["metadata"]["name"]))
            self._dirty_rf.update(f for f, _ in _flavor_order(obj))
            if old is not None:
                self._dirty_rf.update(f for f, _ in _flavor_order(old))
            # other CQs' Active condition may depend on this one through cohorts; cheap to recheck
            self._dirty_cq.update(c["metadata"]["name"] for c in self._cqs.list())
        self._kick()

    def on_local_queue(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype != "DELETED":
            self._dirty_lq.add((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
            cq = (obj.get("spec") or {}).get("clusterQueue")
            if cq:
                self._dirty_cq.add(cq)
        self._kick()

    def on_cohort(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype != "DELETED":
            self._dirty_cohort.add(obj["metadata"]["name"])
        self._dirty_cq.update(c["metadata"]["name"] for c in self._cqs.list())
        self._kick()

    def on_flavor(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype != "DELETED":
            self._dirty_rf.add(obj["metadata"]["name"])
        self._dirty_cq.update(c["metadata"]["name"] for c in self._cqs.list())
        self._kick()

    def on_workload(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        for wl in (obj, old):
            if wl is None:
                continue
            ns = wl["metadata"].get("namespace", "")
            queue = (wl.get("spec") or {}).get("queueName")
            if queue:
                self._dirty_lq.add((ns, queue))
                lq = self._lqs.get(queue, ns)
                if lq is not None and (lq.get("spec") or {}).get("clusterQueue"):
                    self._dirty_cq.add(lq["spec"]["clusterQueue"])
            admitted_cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")
            if admitted_cq:
                self._dirty_cq.add(admitted_cq)
        if self._fair:
            self._dirty_cohort.update(c["metadata"]["name"] for c in self._cohorts.list())
        self._kick()

    # ------------------------------------------------------------------ writing

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            started = loop.time()
            try:
                await self.flush()
            except Exception:
                log.exception("writing queue status failed")
            # Under load every queue is dirty at every flush: pausing BUDGET_FACTOR times as long as
            # the flush took keeps status writes to ~1/(1+BUDGET_FACTOR) of the loop's time.
            await asyncio.sleep(max(self._interval, BUDGET_FACTOR * (loop.time() - started)))

    async def flush(self) -> None:
        cqs, self._dirty_cq = self._dirty_cq, set()
        lqs, self._dirty_lq = self._dirty_lq, set()
        cohorts, self._dirty_cohort = self._dirty_cohort, set()
        rfs, self._dirty_rf = self._dirty_rf, set()
        jobs = [self._write_cq(n) for n in sorted(cqs)] + [self._write_lq(ns, n) for ns, n in sorted(lqs)]
        jobs += [self._write_cohort(n) for n in sorted(cohorts)] + [self._finalize_rf(n) for n in sorted(rfs)]
        results = await asyncio.gather(*jobs, return_exceptions=True)
        for result in results:
            if isinstance(result, ApiError) and result.code == 409:
                self.mark_all()  # raced with another writer: recompute next round
            elif isinstance(result, BaseException) and not isinstance(result, ApiError):
                log.error("queue status write failed: %r", result)

    async def _write_cq(self, name: str) -> None:
        cq = self._cqs.get(name)
        if cq is None:
            return
        try:
            usage = self._scheduler.cluster_queue_usage(name)
            active, reason, message = self._scheduler.cluster_queue_active(name)
        except KeyError:
            return
        order = _flavor_order(cq)
        share = self._scheduler.weighted_share("ClusterQueue", name) if self._fair else None
        now = self._clock.now()

        def edit(s: JSONDict, _: JSONDict) -> bool:
            s["pendingWorkloads"] = usage.pending_workloads
            s["reservingWorkloads"] = usage.reserving_workloads
            s["admittedWorkloads"] = usage.admitted_workloads
            s["flavorsReservation"] = _flavor_list(order, usage.reservation, borrowed=True)
            s["flavorsUsage"] = _flavor_list(order, usage.usage, borrowed=True)
            set_condition(s.setdefault("conditions", []), "Active", "True" if active else "False", reason, message, now)
            if share is not None:
                s["fairSharing"] = {"weightedShare": share}
            return True

        written = await update_status(self._client, CLUSTER_QUEUES, cq, edit)
        meta = cq.get("metadata") or {}
        if not meta.get("deletionTimestamp") and FINALIZER not in (meta.get("finalizers") or []):
            await self._add_finalizer(CLUSTER_QUEUES, written or cq)  # no webhook added it (cluster mode)
        elif (
            meta.get("deletionTimestamp")
            and FINALIZER in (meta.get("finalizers") or [])
            and usage.reserving_workloads == 0
        ):
            current = written or cq
            await self._client.patch(
                CLUSTER_QUEUES,
                name,
                {
                    "metadata": {
                        "finalizers": [f for f in meta.get("finalizers") or [] if f != FINALIZER],
                        "resourceVersion": (current.get("metadata") or {}).get("resourceVersion"),
                    }
                },
            )

    def _lq_usage(self, namespace: str, name: str) -> tuple[int, int, int, Usage, Usage]:
        """The engine's incremental view (O(workloads holding quota in the CQ)); scanning the
        LocalQueue's Workloads per write cost 25-60 % of the server with deep queues."""
        usage = self._scheduler.local_queue_usage(namespace, name)
        return (
            usage.pending_workloads,
            usage.reserving_workloads,
            usage.admitted_workloads,
            usage.reservation,
            usage.usage,
        )

    async def _write_lq(self, namespace: str, name: str) -> None:
        lq = self._lqs.get(name, namespace)
        if lq is None:
            return
        spec = lq.get("spec") or {}
        cq_name = spec.get("clusterQueue", "")
        cq = self._cqs.get(cq_name)
        if (spec.get("stopPolicy") or "None") != "None":
            active, reason, message = "False", "Stopped", "LocalQueue is stopped"
        elif cq is None:
            active, reason = "False", "ClusterQueueDoesNotExist"
            message = "Can't submit new workloads to clusterQueue"
        else:
            try:
                cq_active = self._scheduler.cluster_queue_active(cq_name)[0]
            except KeyError:
                cq_active = False
            if cq_active:
                active, reason, message = "True", "Ready", "Can submit new workloads to localQueue"
            else:
                active, reason = "False", "ClusterQueueIsInactive"
                message = "Can't submit new workloads to clusterQueue"
        pending, reserving, admitted, reserved, used = self._lq_usage(namespace, name)
        order = _flavor_order(cq) if cq is not None else []
        now = self._clock.now()

        def edit(s: JSONDict, _: JSONDict) -> bool:
            s["pendingWorkloads"] = pending
            s["reservingWorkloads"] = reserving
            s["admittedWorkloads"] = admitted
            s["flavorsReservation"] = _flavor_list(
                [o for o in order if o[0] in reserved] or [], reserved, borrowed=False
            )
            s["flavorsUsage"] = _flavor_list([o for o in order if o[0] in used] or [], used, borrowed=False)
            set_condition(s.setdefault("conditions", []), "Active", active, reason, message, now)
            return True

        await update_status(self._client, LOCAL_QUEUES, lq, edit)

    async def _write_cohort(self, name: str) -> None:
        if not self._fair:
            return
        cohort = self._cohorts.get(name)
        if cohort is None:
            return
        try:
            share = self._scheduler.weighted_share("Cohort", name)
        except KeyError:
            return
        await update_status(
            self._client, COHORTS, cohort, lambda s, _: s.update(fairSharing={"weightedShare": share}) is None
        )

    async def _add_finalizer(self, res: GroupVersionResource, obj: JSONDict) -> None:
        meta = obj.get("metadata") or {}
        await self._client.patch(
            res,
            meta["name"],
            {
                "metadata": {
                    "finalizers": [*(meta.get("finalizers") or []), FINALIZER],
                    "resourceVersion": meta.get("resourceVersion"),
                }
            },
        )

    async def _finalize_rf(self, name: str) -> None:
        rf = self._flavors.get(name)
        if rf is None:
            return
        meta = rf.get("metadata") or {}
        if not meta.get("deletionTimestamp"):
            if FINALIZER not in (meta.get("finalizers") or []):
                await self._add_finalizer(RESOURCE_FLAVORS, rf)
            return
        if FINALIZER not in (meta.get("finalizers") or []):
            return
        if any(name in {f for f, _ in _flavor_order(cq)} for cq in self._cqs.list()):
            return
        await self._client.patch(
            RESOURCE_FLAVORS,
            name,
            {
                "metadata": {
                    "finalizers": [f for f in meta.get("finalizers") or [] if f != FINALIZER],
                    "resourceVersion": meta.get("resourceVersion"),
                }
            },
        )
