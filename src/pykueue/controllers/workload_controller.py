"""The workload controller: a Workload's lifecycle after the scheduler's decision (Kueue's Workload
lifecycle; requeuing and backoff).

Owns, per workload: the finalizer on deletion/finish; deactivation (``spec.active: false`` → evicted
``Deactivated``/``DeactivatedDueTo…``) and reactivation (Requeued=True ``Reactivated``); backoff expiry
(Requeued=True ``BackoffFinished``); stop policies of its LocalQueue/ClusterQueue (HoldAndDrain evicts,
Hold releases a reservation that is not yet admitted; restart → Requeued=True); admission-check
states and the Admitted condition; check-based eviction/deactivation; waitForPodsReady timeouts with
backoff and ``RequeuingLimitExceeded``; ``maximumExecutionTimeSeconds``; reasons for workloads the
scheduler cannot even queue (missing or stopped LocalQueue/ClusterQueue); releasing the
reservation of evicted workloads that no job integration owns; and finishing (``OwnerNotFound``) a
workload whose job was deleted with ``--cascade=orphan``, so its quota goes back.

Who calls it: ``ControllerManager`` wires informer handlers to :meth:`WorkloadController.enqueue`
and runs its work queue. Timed checks go through :class:`~pykueue.controllers.timers.Timers`, so a
``ManualClock`` drives them in tests.
Invariant: one status write per reconcile pass at most for each step, every write guarded by
``resourceVersion``; a reconcile never acts on a finished workload except to drop its finalizer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pykueue.api.meta.clock import Clock, format_time, parse_time
from pykueue.api.meta.errors import ApiError, Conflict, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer, WorkQueue
from pykueue.controllers import observe
from pykueue.controllers.conditions import (
    FINALIZER,
    condition,
    condition_true,
    has_quota,
    is_active,
    is_admitted,
    is_evicted,
    is_finished,
    transition_time,
)
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.events import EventRecorder
from pykueue.controllers.jobs.framework import JOB_UID_LABEL
from pykueue.controllers.resource_names import WORKLOADS
from pykueue.controllers.status import StatusEdit, update_status
from pykueue.controllers.timers import Timers
from pykueue.controllers.workload_decisions import (
    drain_eviction,
    max_execution_deadline,
    pods_ready_deadline,
    required_checks,
    stop_policy,
    unadmitted_release,
    unqueueable,
)
from pykueue.controllers.workload_status_edits import (
    clear_deactivation_target,
    mark_finished,
    prepare_eviction,
    release_after_eviction,
    set_deactivation_target,
    set_pending,
    set_requeued,
    sync_admitted,
    unset_quota_reservation,
    update_requeue_state,
)
from pykueue.metrics import KueueMetrics
from pykueue.scheduler import Scheduler

__all__ = ["WorkloadController"]

log = logging.getLogger(__name__)
Key = tuple[str, str]


class WorkloadController:
    def __init__(
        self,
        client: Client,
        config: KueueConfig,
        clock: Clock,
        recorder: EventRecorder,
        scheduler: Scheduler,
        workloads: Informer,
        local_queues: Informer,
        cluster_queues: Informer,
        job_owned: Callable[[JSONDict], bool],
        *,
        metrics: KueueMetrics,
    ) -> None:
        self._client = client
        self._metrics = metrics
        self._config = config
        self._clock = clock
        self._recorder = recorder
        self._scheduler = scheduler
        self._workloads = workloads
        self._lqs = local_queues
        self._cqs = cluster_queues
        self._job_owned = job_owned
        self.queue: WorkQueue[Key] = WorkQueue("workloads")
        self.timers: Timers[Key] = Timers(clock, self.queue.add)

    # ------------------------------------------------------------------ wiring

    def enqueue(self, namespace: str, name: str) -> None:
        self.queue.add((namespace, name))

    def on_workload(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype != "DELETED":
            meta = obj.get("metadata") or {}
            self.enqueue(meta.get("namespace", ""), meta.get("name", ""))

    def on_local_queue(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if old is not None and etype == "MODIFIED" and old.get("spec") == obj.get("spec"):
            return
        meta = obj.get("metadata") or {}
        for wl in self._workloads.list(meta.get("namespace", "")):
            if (wl.get("spec") or {}).get("queueName") == meta.get("name"):
                self.enqueue(meta.get("namespace", ""), (wl.get("metadata") or {}).get("name", ""))

    def on_cluster_queue(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if (
            old is not None
            and etype == "MODIFIED"
            and old.get("spec") == obj.get("spec")
            and (old.get("status") or {}).get("conditions") == (obj.get("status") or {}).get("conditions")
        ):
            return
        name = (obj.get("metadata") or {}).get("name", "")
        lqs = {
            ((lq.get("metadata") or {}).get("namespace", ""), (lq.get("metadata") or {}).get("name", ""))
            for lq in self._lqs.list()
            if (lq.get("spec") or {}).get("clusterQueue") == name
        }
        for wl in self._workloads.list():
            meta = wl.get("metadata") or {}
            admission_cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")
            if admission_cq == name or (meta.get("namespace", ""), (wl.get("spec") or {}).get("queueName")) in lqs:
                self.enqueue(meta.get("namespace", ""), meta.get("name", ""))

    # ------------------------------------------------------------------ reconcile

    async def reconcile(self, key: Key) -> float | None:
        wl = self._workloads.get(key[1], key[0])
        if wl is None:
            return None
        try:
            await self._reconcile(wl)
        except NotFound:
            return None
        except Conflict:
            return 0.05  # stale cache; the newer event is already queued
        return None

    async def _write(self, wl: JSONDict, edit: StatusEdit) -> JSONDict | None:
        return await update_status(self._client, WORKLOADS, wl, edit)

    async def _reconcile(self, wl: JSONDict) -> None:
        meta = wl.get("metadata") or {}
        ns = meta.get("namespace", "")
        now = self._clock.now()
        if meta.get("deletionTimestamp"):
            if FINALIZER in (meta.get("finalizers") or []) and (
                not self._job_owned(wl) or not has_quota(wl) or is_finished(wl)
            ):
                await self._drop_finalizer(wl)
            return
        if is_finished(wl):
            if FINALIZER in (meta.get("finalizers") or []) and not self._job_owned(wl):
                await self._drop_finalizer(wl)
            await self._retention(wl, now)
            return
        if _orphaned(wl):
            await self._finish_orphan(wl, now)
            return

        if await self._reconcile_activity(wl, now):
            return

        spec = wl.get("spec") or {}
        lq = self._lqs.get(spec.get("queueName", ""), ns) if spec.get("queueName") else None
        cq_name = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue") or (
            (lq or {}).get("spec") or {}
        ).get("clusterQueue", "")
        cq = self._cqs.get(cq_name) if cq_name else None

        requeued = condition(wl, "Requeued") or {}
        if requeued.get("status") == "False":
            if requeued.get("reason") == "LocalQueueStopped" and lq is not None and stop_policy(lq) == "None":
                await self._write(
                    wl,
                    lambda s, _: set_requeued(
                        s, "LocalQueueRestarted", "The LocalQueue was restarted after being stopped", True, now
                    ),
                )
                return
            if requeued.get("reason") == "ClusterQueueStopped" and cq is not None and stop_policy(cq) == "None":
                await self._write(
                    wl,
                    lambda s, _: set_requeued(
                        s, "ClusterQueueRestarted", "The ClusterQueue was restarted after being stopped", True, now
                    ),
                )
                return

        if has_quota(wl):
            await self._reconcile_reserved(wl, lq, cq, cq_name, now)
        elif is_active(wl):
            await self._reconcile_unqueueable(wl, lq, cq, cq_name, now)

    async def _retention(self, wl: JSONDict, now: float) -> None:
        """``objectRetentionPolicies.workloads.afterFinished``: delete finished workloads when it elapses."""
        retain = self._config.retain_finished_workloads_seconds
        finished_at = transition_time(wl, "Finished")
        if retain is None or finished_at is None:
            return
        meta = wl.get("metadata") or {}
        if finished_at + retain > now:
            self.timers.at(finished_at + retain, (meta.get("namespace", ""), meta.get("name", "")))
            return
        await self._client.delete(WORKLOADS, meta.get("name", ""), meta.get("namespace", ""))
        self._recorder.record(wl, "Normal", "Deleted", "Deleted finished workload due to elapsed retention")

    async def _finish_orphan(self, wl: JSONDict, now: float) -> None:
        """The job this workload was built for is gone but left it behind (``kubectl delete
        --cascade=orphan``): finish it, so its quota goes back, as Kueue does (``OwnerNotFound``)."""
        written = await self._write(
            wl, lambda s, _: mark_finished(s, "OwnerNotFound", "The Workload's owner no longer exists", now)
        )
        if written is not None:
            self._recorder.record(
                written, "Normal", "FinishedWorkload", "Workload is declared finished: its owner no longer exists"
            )

    # -- finalizer ---------------------------------------------------------------------------------

    async def _drop_finalizer(self, wl: JSONDict) -> None:
        meta = wl.get("metadata") or {}
        finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}}
        try:
            await self._client.patch(WORKLOADS, meta["name"], patch, namespace=meta.get("namespace", ""))
        except ApiError as exc:
            if exc.code != 404:
                raise

    # -- active / inactive -------------------------------------------------------------------------

    async def _reconcile_activity(self, wl: JSONDict, now: float) -> bool:
        """Deactivation, reactivation and backoff expiry. True when it wrote (or must wait)."""
        meta = wl.get("metadata") or {}
        status = wl.get("status") or {}
        if not is_active(wl):
            dt = condition(wl, "DeactivationTarget")
            if not is_evicted(wl):
                message = "The workload is deactivated"
                cause = ""
                if dt is not None:
                    cause = dt.get("reason", "")
                    message = f"{message} due to {dt.get('message', '')}"
                event = ""

                def evict(s: JSONDict, _: JSONDict) -> bool:
                    nonlocal event
                    clear_deactivation_target(s)
                    s.pop("requeueState", None)
                    event = prepare_eviction(s, "Deactivated", message, now, underlying_cause=cause)
                    return True

                written = await self._write(wl, evict)
                if written is not None:
                    self._recorder.record(written, "Normal", event, message)
                    observe.evicted(self._metrics, written, "Deactivated", cause, message)
                return True
            if dt is not None or status.get("requeueState"):

                def clean(s: JSONDict, _: JSONDict) -> bool:
                    changed = clear_deactivation_target(s)
                    if s.pop("requeueState", None) is not None:
                        changed = True
                    return changed

                await self._write(wl, clean)
                return True
            if has_quota(wl) and not self._job_owned(wl):
                await self._write(wl, lambda s, _: release_after_eviction(s, now))
                return True
            return False

        if condition_true(wl, "DeactivationTarget"):
            await self._client.patch(
                WORKLOADS, meta["name"], {"spec": {"active": False}}, namespace=meta.get("namespace", "")
            )
            return True
        requeue_at = (status.get("requeueState") or {}).get("requeueAt")
        if requeue_at and not has_quota(wl):
            due = parse_time(requeue_at)
            if due > now:
                self.timers.at(due, (meta.get("namespace", ""), meta["name"]))
                return True
        requeued = condition(wl, "Requeued") or {}
        if requeued.get("status") == "False":
            reason = requeued.get("reason", "")
            if reason == "Deactivated":
                await self._write(
                    wl, lambda s, _: set_requeued(s, "Reactivated", "The workload was reactivated", True, now)
                )
                return True
            if reason in ("PodsReadyTimeout", "AdmissionCheck") and not has_quota(wl):

                def finish_backoff(s: JSONDict, _: JSONDict) -> bool:
                    state = s.get("requeueState")
                    if isinstance(state, dict) and "requeueAt" in state:
                        s["requeueState"] = {k: v for k, v in state.items() if k != "requeueAt"}
                    return set_requeued(s, "BackoffFinished", "The workload backoff was finished", True, now)

                await self._write(wl, finish_backoff)
                return True
        return False

    # -- holding quota -------------------------------------------------------------------------------

    async def _reconcile_reserved(
        self, wl: JSONDict, lq: JSONDict | None, cq: JSONDict | None, cq_name: str, now: float
    ) -> None:
        meta = wl.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        status = wl.get("status") or {}

        # admission checks: states follow the CQ's rules; Admitted follows the states
        required = required_checks(wl, cq)
        current = [c.get("name") for c in status.get("admissionChecks") or []]
        if sorted(current) != required or not is_admitted(wl):
            was_admitted = is_admitted(wl)

            def sync(s: JSONDict, _: JSONDict) -> bool:
                changed = False
                if sorted(c.get("name") for c in s.get("admissionChecks") or []) != required:
                    have = {c.get("name"): c for c in s.get("admissionChecks") or []}
                    s["admissionChecks"] = [
                        have.get(n) or {"name": n, "state": "Pending", "message": "", "lastTransitionTime": _fmt(now)}
                        for n in required
                    ]
                    if not s["admissionChecks"]:
                        s.pop("admissionChecks")
                    changed = True
                if not is_evicted(wl):
                    changed = sync_admitted(s, now) or changed
                return changed

            written = await self._write(wl, sync)
            if written is not None:
                if not was_admitted and is_admitted(written):
                    self._recorder.record(
                        written,
                        "Normal",
                        "Admitted",
                        f"Admitted by ClusterQueue {cq_name}, wait time since reservation "
                        f"was {int(now - (transition_time(wl, 'QuotaReserved') or now))}s",
                    )
                    observe.admitted(self._metrics, written, cq_name, now)
                return

        if not is_evicted(wl):
            if await self._check_based_eviction(wl, now):
                return
            if await self._queue_state_eviction(wl, lq, cq, cq_name, now):
                return
            recheck = [
                t
                for t in (await self._pods_ready_timeout(wl, now), await self._max_execution(wl, now))
                if t is not None
            ]
            if recheck:
                self.timers.at(min(recheck), key)
            return
        if not self._job_owned(wl):
            await self._write(wl, lambda s, _: release_after_eviction(s, now))

    async def _evict(
        self, wl: JSONDict, reason: str, message: str, now: float, *, cause: str = "", extra: StatusEdit | None = None
    ) -> None:
        event = ""

        def edit(s: JSONDict, obj: JSONDict) -> bool:
            nonlocal event
            if is_evicted(obj) or not has_quota(obj):
                return False
            if extra is not None:
                extra(s, obj)
            event = prepare_eviction(s, reason, message, now, underlying_cause=cause)
            return True

        written = await self._write(wl, edit)
        if written is not None:
            self._recorder.record(written, "Normal", event, message)
            observe.evicted(self._metrics, written, reason, cause, message)

    async def _check_based_eviction(self, wl: JSONDict, now: float) -> bool:
        checks = (wl.get("status") or {}).get("admissionChecks") or []
        rejected = [c for c in checks if c.get("state") == "Rejected"]
        if rejected:
            names = ",".join(c.get("name", "") for c in rejected)
            written = await self._write(
                wl,
                lambda s, _: set_deactivation_target(
                    s, "AdmissionCheck", f"Admission check(s): {names}, were rejected", now
                ),
            )
            if written is not None:
                self._recorder.record(
                    written,
                    "Warning",
                    "AdmissionCheckRejected",
                    f"Deactivating workload because AdmissionCheck for {rejected[0].get('name')} "
                    f"was Rejected: {rejected[0].get('message', '')}",
                )
            return True
        retry = [c for c in checks if c.get("state") == "Retry"]
        if retry:

            def set_requeue_at(s: JSONDict, _: JSONDict) -> bool:
                delay = max(int(c.get("requeueAfterSeconds") or 0) for c in retry)
                if delay:
                    state = dict(s.get("requeueState") or {})
                    state["requeueAt"] = _fmt(now + delay)
                    s["requeueState"] = state
                return True

            await self._evict(wl, "AdmissionCheck", "At least one admission check is false", now, extra=set_requeue_at)
            return True
        return False

    async def _queue_state_eviction(
        self, wl: JSONDict, lq: JSONDict | None, cq: JSONDict | None, cq_name: str, now: float
    ) -> bool:
        if is_admitted(wl):
            drain = drain_eviction(lq, cq)
            if drain is None:
                return False
            await self._evict(wl, drain.reason, drain.message, now)
            return True
        release = unadmitted_release(wl, lq, cq, cq_name)
        if release is None:
            return False
        await self._write(wl, lambda s, _: unset_quota_reservation(s, release.reason, release.message, now))
        return True

    async def _pods_ready_timeout(self, wl: JSONDict, now: float) -> float | None:
        cfg = self._config.wait_for_pods_ready
        deadline = pods_ready_deadline(wl, cfg, now)
        if deadline is None or deadline.due > now:
            return deadline.due if deadline is not None else None
        meta = wl.get("metadata") or {}
        strategy = cfg.requeuing_strategy
        count = int(((wl.get("status") or {}).get("requeueState") or {}).get("count") or 0)
        if strategy.backoff_limit_count is not None and count + 1 > strategy.backoff_limit_count:
            await self._write(
                wl,
                lambda s, _: set_deactivation_target(
                    s, "RequeuingLimitExceeded", "exceeding the maximum number of re-queuing retries", now
                ),
            )
            return None
        message = f"Exceeded the PodsReady timeout {meta.get('namespace', '')}/{meta.get('name', '')}"

        def backoff(s: JSONDict, _: JSONDict) -> bool:
            update_requeue_state(s, strategy.backoff_base_seconds, strategy.backoff_max_seconds, now)
            return True

        await self._evict(wl, "PodsReadyTimeout", message, now, cause=deadline.cause, extra=backoff)
        return None

    async def _max_execution(self, wl: JSONDict, now: float) -> float | None:
        deadline = max_execution_deadline(wl)
        if deadline is None or deadline.due > now:
            return deadline.due if deadline is not None else None
        limit = int((wl.get("spec") or {}).get("maximumExecutionTimeSeconds") or 0)
        if condition_true(wl, "DeactivationTarget"):
            return None

        def deactivate(s: JSONDict, _: JSONDict) -> bool:
            set_deactivation_target(s, "MaximumExecutionTimeExceeded", "exceeding the maximum execution time", now)
            s.pop("accumulatedPastExecutionTimeSeconds", None)
            return True

        written = await self._write(wl, deactivate)
        if written is not None:
            self._recorder.record(
                written, "Warning", "MaximumExecutionTimeExceeded", f"The maximum execution time ({limit}s) exceeded"
            )
        return None

    # -- not queueable at all ----------------------------------------------------------------------------

    async def _reconcile_unqueueable(
        self, wl: JSONDict, lq: JSONDict | None, cq: JSONDict | None, cq_name: str, now: float
    ) -> None:
        """Reasons the engine never reports because it cannot even queue the workload."""
        cq_active = cq is not None and self._scheduler.cluster_queue_active(cq_name)[0]
        verdict = unqueueable(wl, lq, cq, cq_name, cq_active)
        if verdict is None:
            return
        reason, message = verdict.reason, verdict.message
        written = await self._write(
            wl, lambda s, obj: False if has_quota(obj) else set_pending(s, reason, message, None, now)
        )
        if written is not None:
            self._recorder.record(written, "Warning", reason, message)


def _fmt(seconds: float) -> str:
    return format_time(seconds)


def _orphaned(wl: JSONDict) -> bool:
    """Built for a job (it carries the job's uid) but owned by nothing any more."""
    meta = wl.get("metadata") or {}
    return not meta.get("ownerReferences") and bool((meta.get("labels") or {}).get(JOB_UID_LABEL))
