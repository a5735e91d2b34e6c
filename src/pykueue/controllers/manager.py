"""``ControllerManager``: every pykueue controller, wired to one Client and one Scheduler.

Owns: the shared informers (one list+watch per resource), the event recorder, the scheduler loop,
the workload controller, the queue status writer, one job reconciler per enabled integration, and
their background tasks. ``admission_hooks()`` returns what the embedded API server installs so a
managed job is created suspended (Kueue's webhooks), and the ``NotQueued`` warning for labelled
objects that no enabled integration queues (:mod:`pykueue.controllers.unqueued`).

Who calls it: ``cli/`` (embedded ``pykueue up`` and cluster-mode ``pykueue controller``) and the
controller tests: ``ControllerManager(client, config, clock)``, ``await start()``, ``await stop()``.
Invariant: informers of the configuration kinds are synced before Workloads, and Workloads before
jobs, so the scheduler never sees a workload whose queue it has not been told about yet, and a
restart rebuilds the engine's state entirely from the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from prometheus_client import CollectorRegistry

from pykueue.api.meta.clock import Clock, SystemClock
from pykueue.api.meta.errors import NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, GroupVersionResource, Informer, run_workers
from pykueue.controllers.admission_hooks import build_hooks
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.events import EventRecorder
from pykueue.controllers.jobs.framework import Caches
from pykueue.controllers.jobs.reconciler import JobReconciler
from pykueue.controllers.jobs.registry import enabled
from pykueue.controllers.queue_status import QueueStatusWriter
from pykueue.controllers.resource_names import (
    CLUSTER_QUEUES,
    COHORTS,
    LOCAL_QUEUES,
    NAMESPACES,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    WORKLOAD_PRIORITY_CLASSES,
    WORKLOADS,
)
from pykueue.controllers.scheduling import SchedulerLoop
from pykueue.controllers.unqueued import UnqueuedWarner
from pykueue.controllers.workload_controller import WorkloadController
from pykueue.metrics import KueueMetrics, QueueGauges
from pykueue.registry.admission import AdmissionHook
from pykueue.scheduler import Scheduler

__all__ = ["ControllerManager"]

log = logging.getLogger(__name__)

STOP_GRACE = 5.0
"""Seconds ``stop()`` waits for each background piece before giving up on it (and saying so)."""

_CONFIG_KINDS = (
    NAMESPACES,
    RESOURCE_FLAVORS,
    COHORTS,
    CLUSTER_QUEUES,
    LOCAL_QUEUES,
    WORKLOAD_PRIORITY_CLASSES,
    PRIORITY_CLASSES,
)


class ControllerManager:
    def __init__(
        self,
        client: Client,
        config: KueueConfig | None = None,
        clock: Clock | None = None,
        *,
        workers: int = 4,
        metrics_registry: CollectorRegistry | None = None,
    ) -> None:
        self.client = client
        self.config = config or KueueConfig()
        self.clock: Clock = clock or SystemClock()
        self._workers = workers
        self.scheduler = Scheduler(self.config.scheduler_config(), clock=self.clock)
        # Kueue's metrics: on the registry of whoever serves /metrics; a private one (never scraped) otherwise
        self.metrics = KueueMetrics(metrics_registry if metrics_registry is not None else CollectorRegistry())
        if metrics_registry is not None:
            QueueGauges(self.scheduler).register(metrics_registry)
        self.informers: dict[GroupVersionResource, Informer] = {
            res: Informer(client, res) for res in (*_CONFIG_KINDS, WORKLOADS)
        }
        inf = self.informers
        self.caches = Caches(
            workloads=inf[WORKLOADS],
            local_queues=inf[LOCAL_QUEUES],
            namespaces=inf[NAMESPACES],
            flavors=inf[RESOURCE_FLAVORS],
            priority_classes=inf[PRIORITY_CLASSES],
            workload_priority_classes=inf[WORKLOAD_PRIORITY_CLASSES],
        )
        self.recorder = EventRecorder(client, self.clock)
        self.integrations = enabled(self.config.integrations.frameworks)
        self.unqueued = UnqueuedWarner(client, self.recorder, tuple(i.name for i in self.integrations))
        self.job_informers: dict[str, Informer] = {
            i.name: Informer(client, i.res, label_selector=i.label_selector) for i in self.integrations
        }
        self.jobs = [
            JobReconciler(i, client, self.config, self.clock, self.recorder, self.job_informers[i.name], self.caches)
            for i in self.integrations
        ]
        wfpr = self.config.wait_for_pods_ready
        self.scheduling = SchedulerLoop(
            client,
            self.scheduler,
            self.clock,
            self.recorder,
            inf[WORKLOADS],
            block_admission=wfpr.enable and wfpr.block_admission,
            metrics=self.metrics,
        )
        self.workloads = WorkloadController(
            client,
            self.config,
            self.clock,
            self.recorder,
            self.scheduler,
            inf[WORKLOADS],
            inf[LOCAL_QUEUES],
            inf[CLUSTER_QUEUES],
            self._job_owned,
            metrics=self.metrics,
        )
        self.queues = QueueStatusWriter(
            client,
            self.clock,
            self.scheduler,
            fair_sharing=self.config.fair_sharing is not None,
            cluster_queues=inf[CLUSTER_QUEUES],
            local_queues=inf[LOCAL_QUEUES],
            cohorts=inf[COHORTS],
            flavors=inf[RESOURCE_FLAVORS],
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        self._wire()

    # ------------------------------------------------------------------ wiring

    def _wire(self) -> None:
        inf, s, w, q = self.informers, self.scheduling, self.workloads, self.queues
        inf[NAMESPACES].add_handler(s.on_namespace)
        inf[RESOURCE_FLAVORS].add_handler(s.on_flavor)
        inf[RESOURCE_FLAVORS].add_handler(q.on_flavor)
        inf[COHORTS].add_handler(s.on_cohort)
        inf[COHORTS].add_handler(q.on_cohort)
        inf[CLUSTER_QUEUES].add_handler(s.on_cluster_queue)
        inf[CLUSTER_QUEUES].add_handler(q.on_cluster_queue)
        inf[CLUSTER_QUEUES].add_handler(w.on_cluster_queue)
        inf[LOCAL_QUEUES].add_handler(s.on_local_queue)
        inf[LOCAL_QUEUES].add_handler(q.on_local_queue)
        inf[LOCAL_QUEUES].add_handler(w.on_local_queue)
        inf[WORKLOADS].add_handler(s.on_workload)
        inf[WORKLOADS].add_handler(q.on_workload)
        inf[WORKLOADS].add_handler(w.on_workload)
        inf[CLUSTER_QUEUES].add_handler(self._forget_metrics_of_cq)
        inf[LOCAL_QUEUES].add_handler(self._forget_metrics_of_lq)
        for reconciler in self.jobs:
            reconciler.jobs.add_handler(reconciler.on_job)
            inf[WORKLOADS].add_handler(reconciler.on_workload)

    def _forget_metrics_of_cq(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype == "DELETED":
            self.metrics.forget_cluster_queue(obj["metadata"]["name"])

    def _forget_metrics_of_lq(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if etype == "DELETED":
            self.metrics.forget_local_queue(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])

    def _job_owned(self, wl: JSONDict) -> bool:
        """Is a job integration responsible for stopping this workload's pods (and releasing it)?"""
        return any(r.owns(wl) for r in self.jobs)

    def admission_hooks(self) -> list[AdmissionHook]:
        """Hooks the embedded registry installs (Kueue's webhooks): suspend/gate managed jobs on create,
        default the queue to LocalQueue ``default``, add the ``resource-in-use`` finalizer to CQs/RFs,
        check the jobs' Kueue labels; and the ``NotQueued`` warning."""
        return [*build_hooks(self.integrations, self.config, self.caches), self.unqueued.hook()]

    # ------------------------------------------------------------------ lifecycle

    async def start_webhook_caches(self) -> None:
        """Start the informers :meth:`admission_hooks` read (the configuration kinds): enough for a
        replica that serves Kueue's webhooks without leading (``pykueue controller``). :meth:`start`
        may follow: started informers are kept."""
        for res in _CONFIG_KINDS:
            await self.informers[res].start()

    async def start_admission_caches(self) -> None:
        """Start only what :meth:`admission_hooks` need (the configuration kinds' informers, and the
        event writer of the ``NotQueued`` warning): for an API server whose controllers run in another
        process, which keeps Kueue's webhooks here."""
        for res in _CONFIG_KINDS:
            await self.informers[res].start()
        self.recorder.start()
        self._spawn(self.unqueued.run(), "unqueued-warnings")

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        self._tasks.append(asyncio.create_task(coro, name=name))

    async def start(self) -> None:
        for res in _CONFIG_KINDS:
            await self.informers[res].start()
        await self.informers[WORKLOADS].start()
        for reconciler in list(self.jobs):
            try:
                await reconciler.jobs.start()
            except NotFound:
                # the kind is not served (e.g. no JobSet CRD on this cluster): the integration stays off,
                # and must not act on workloads it cannot see the jobs of
                log.warning(
                    "integration %s disabled: %s is not served", reconciler.integration.name, reconciler.integration.res
                )
                reconciler.disable()
                self.jobs.remove(reconciler)
        self.recorder.start()
        self._spawn(self.unqueued.run(), "unqueued-warnings")
        self.scheduling.start()
        self._spawn(self.queues.run(), "queue-status")
        self._spawn(self.workloads.timers.run(), "workload-timers")
        self._spawn(
            run_workers(self.workloads.queue, self.workloads.reconcile, workers=self._workers), "workload-controller"
        )
        for reconciler in self.jobs:
            self._spawn(
                run_workers(reconciler.queue, reconciler.reconcile, workers=self._workers),
                f"jobs-{reconciler.integration.name}",
            )
        self.queues.mark_all()
        self.scheduling.wake()
        self._running = True

    def health(self) -> str | None:
        """None while the controllers run (caches synced, workers started); else why not (readiness)."""
        return None if self._running else "the controllers are not running"

    async def stop(self) -> None:
        self._running = False
        self.workloads.queue.shutdown()
        for reconciler in self.jobs:
            reconciler.queue.shutdown()
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, stuck = await asyncio.wait(self._tasks, timeout=STOP_GRACE)
            for task in stuck:
                log.warning("task %s did not stop within %ss", task.get_name(), STOP_GRACE)
        self._tasks = []
        await self.scheduling.stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.recorder.stop(), STOP_GRACE)
        for informer in [*self.job_informers.values(), *self.informers.values()]:
            try:
                await asyncio.wait_for(informer.stop(), STOP_GRACE)
            except TimeoutError:
                log.warning("informer %s did not stop within %ss", informer.res, STOP_GRACE)
