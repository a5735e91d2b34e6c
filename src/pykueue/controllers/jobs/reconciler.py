"""The job reconciler (Kueue's job reconcile loop), the same for every integration.

Owns, per job: creating its Workload (name, podSets, priority, owner reference, finalizer) or
adopting the prebuilt one it names (``kueue.x-k8s.io/prebuilt-workload-name``), marking
the Workload Finished when the job finishes, stopping the job when its Workload is evicted or not
admitted and then releasing the reservation, starting it (flavor node labels and tolerations
injected, count for partial admission) when admitted, the PodsReady condition, reclaimable pods,
and cleaning up the Workload when the job is deleted.

Who calls it: ``ControllerManager`` makes one :class:`JobReconciler` per enabled integration, wires
the integration's informer and the Workload informer to it, and runs its work queue.
Invariant: only this reconciler writes a job's ``suspend``/templates (one writer per field), and a
Workload's reservation is released only once the job has no active pods.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from pykueue.api.meta.clock import Clock
from pykueue.api.meta.errors import AlreadyExists, ApiError, Conflict, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer, WorkQueue
from pykueue.controllers.conditions import (
    FINALIZER,
    condition,
    has_quota,
    is_admitted,
    is_evicted,
    is_finished,
    set_condition,
)
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.events import EventRecorder
from pykueue.controllers.jobs.framework import (
    ADMISSION_GATED_BY,
    JOB_UID_LABEL,
    MAX_EXEC_TIME_LABEL,
    PREBUILT_WORKLOAD,
    PRIORITY_CLASS_LABEL,
    Caches,
    GenericJob,
    Integration,
    JobKey,
    JobWithPriorityClass,
    JobWithReclaimablePods,
    namespace_labels,
    pod_set_infos,
    prebuilt_workload_name,
)
from pykueue.controllers.resource_names import WORKLOADS
from pykueue.controllers.status import update_status
from pykueue.controllers.workload_status_edits import mark_finished, release_after_eviction

__all__ = ["JobReconciler"]

log = logging.getLogger(__name__)
CONFLICT_RETRY = 0.05
"""Seconds before retrying after a write lost an optimistic-concurrency race (not an error)."""


class PriorityClassNotFound(Exception):
    """The job names a WorkloadPriorityClass that does not exist (Kueue's WorkloadPriorityClass rules: no fallback)."""


class JobReconciler:
    def __init__(
        self,
        integration: Integration,
        client: Client,
        config: KueueConfig,
        clock: Clock,
        recorder: EventRecorder,
        jobs: Informer,
        caches: Caches,
    ) -> None:
        self.integration = integration
        self._client = client
        self._config = config
        self._clock = clock
        self._recorder = recorder
        self.jobs = jobs
        self._caches = caches
        self.queue: WorkQueue[JobKey] = WorkQueue(f"jobs-{integration.name}")
        self._workload_of: dict[JobKey, tuple[str, str]] = {}
        self._prebuilt_users: dict[tuple[str, str], set[JobKey]] = {}
        """(namespace, Workload name) -> the jobs that name it as their prebuilt workload."""
        self.enabled = True

    def disable(self) -> None:
        """Stop reacting to anything (the integration's kind is not served)."""
        self.enabled = False
        self.queue.shutdown()

    # ------------------------------------------------------------------ wiring

    def on_job(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if not self.enabled:
            return
        key = self.integration.key_of(obj)
        if key is not None:
            self._note_prebuilt(etype, obj, key)
            self.queue.add(key)

    def on_workload(self, etype: str, obj: JSONDict, old: JSONDict | None) -> None:
        if not self.enabled:
            return
        key = self.integration.key_for_workload(obj, self.jobs)
        meta = obj.get("metadata") or {}
        if key is not None:
            self._workload_of[key] = (meta.get("namespace", ""), meta.get("name", ""))
            self.queue.add(key)
        elif etype == "ADDED" and not meta.get("ownerReferences"):
            self._wake_prebuilt_users(meta.get("namespace", ""), meta.get("name", ""))

    def _wake_prebuilt_users(self, namespace: str, name: str) -> None:
        """A Workload nobody owns appeared: the jobs that name it as their prebuilt workload adopt it."""
        for key in self._prebuilt_users.get((namespace, name), ()):
            self.queue.add(key)

    def _note_prebuilt(self, etype: str, obj: JSONDict, key: JobKey) -> None:
        meta = obj.get("metadata") or {}
        name = (meta.get("labels") or {}).get(PREBUILT_WORKLOAD) or (meta.get("annotations") or {}).get(
            PREBUILT_WORKLOAD
        )
        if not name:
            return
        users = self._prebuilt_users.setdefault((meta.get("namespace", ""), name), set())
        if etype == "DELETED":
            users.discard(key)
            if not users:
                del self._prebuilt_users[(meta.get("namespace", ""), name)]
        else:
            users.add(key)

    def owns(self, wl: JSONDict) -> bool:
        for ref in (wl.get("metadata") or {}).get("ownerReferences") or []:
            group = ref.get("apiVersion", "").rpartition("/")[0]
            if (group, ref.get("kind", "")) in self.integration.owner_kinds:
                return True
        return False

    # ------------------------------------------------------------------ reconcile

    async def reconcile(self, key: JobKey) -> float | None:
        if not self.enabled or not self.jobs.synced:
            return None
        job = self.integration.load(key, self.jobs)
        if job is None:
            await self._job_gone(key)
            return None
        if not self._managed(job):
            return None
        try:
            return await self._reconcile(job)
        except NotFound:
            return None
        except Conflict:
            return CONFLICT_RETRY  # our cached view was stale; the newer event is already queued
        except PriorityClassNotFound:
            return 5.0

    def _managed(self, job: GenericJob) -> bool:
        """Which jobs are managed: inside the managed namespaces, jobs with a queue name (or every job when
        manageJobsWithoutQueueName); outside them, none (ManagedJobsNamespaceSelectorAlwaysRespected)."""
        if not job.queue_name() and not self._config.manage_jobs_without_queue_name:
            return False
        return self._config.managed_jobs_namespace_selector.matches(namespace_labels(self._caches, job.namespace))

    def _find_workload(self, job: GenericJob) -> JSONDict | None:
        prebuilt = prebuilt_workload_name(job)
        if prebuilt:
            return self._caches.workloads.get(prebuilt, job.namespace)
        wl = self._caches.workloads.get(job.workload_name(), job.namespace)
        if wl is not None:
            return wl
        known = self._workload_of.get(job.key)
        if known is not None:
            return self._caches.workloads.get(known[1], known[0])
        return None

    async def _reconcile(self, job: GenericJob) -> float | None:
        wl = self._find_workload(job)
        now = self._clock.now()
        if wl is not None and is_finished(wl):
            await self._drop_finalizer(wl)
            return None
        if wl is not None and (wl.get("metadata") or {}).get("deletionTimestamp"):
            if not job.is_suspended():
                await self._stop(job, wl, "WorkloadDeleted", "Workload is deleted")
            await self._drop_finalizer(wl)
            return None
        finished = job.finished()
        if finished is not None:
            if wl is not None:
                reason = "Succeeded" if finished.succeeded else "Failed"
                written = await update_status(
                    self._client, WORKLOADS, wl, lambda s, _: mark_finished(s, reason, finished.message, now)
                )
                if written is not None:
                    self._recorder.record(
                        written,
                        "Normal",
                        "FinishedWorkload",
                        f"Workload '{job.namespace}/{job.workload_name()}' is declared finished",
                    )
            return None
        if wl is None:
            if not job.is_suspended():
                await self._stop(job, None, "MissingWorkload", "Missing Workload; unable to restore pod templates")
                return None
            if prebuilt_workload_name(job):
                return None  # it waits for the Workload it names; that Workload's creation requeues it
            if job.ready_to_create() and not job.is_active():
                await self._create_workload(job)
            return None
        if prebuilt_workload_name(job) and not self.owns(wl):
            await self._adopt(job, wl, now)
            return None

        await self._sync_status(job, wl, now)
        await self._sync_priority(job, wl)
        await self._sync_admission_gates(job, wl)

        if is_evicted(wl):
            if not job.is_suspended():
                await self._stop(job, wl, "Evicted", (condition(wl, "Evicted") or {}).get("message", ""))
                return None
            if job.is_active():
                return None  # pods still terminating: the job's next event retriggers us
            if has_quota(wl):
                await update_status(self._client, WORKLOADS, wl, lambda s, _: release_after_eviction(s, now))
            return None

        if job.is_suspended():
            if is_admitted(wl):
                infos = pod_set_infos(wl, self._caches.flavors)
                await job.run(self._client, infos)
                cq = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
                self._recorder.record(self._job_ref(job, wl), "Normal", "Started", f"Admitted by clusterQueue {cq}")
            elif not has_quota(wl):
                await self._update_in_place(job, wl)
            return None
        if not is_admitted(wl):
            await self._stop(job, wl, "NotAdmitted", "Not admitted by cluster queue")
        return None

    # -- pieces ----------------------------------------------------------------------------------------

    def _job_ref(self, job: GenericJob, wl: JSONDict | None) -> JSONDict:
        """An object reference to the job for events (from its first owner reference on the WL)."""
        refs = job.owner_references()
        ref = refs[0] if refs else {}
        return {
            "apiVersion": ref.get("apiVersion", ""),
            "kind": ref.get("kind", ""),
            "metadata": {"name": ref.get("name", ""), "namespace": job.namespace, "uid": ref.get("uid", "")},
        }

    async def _stop(self, job: GenericJob, wl: JSONDict | None, reason: str, message: str) -> None:
        pod_sets = ((wl or {}).get("spec") or {}).get("podSets") or job.pod_sets()
        if await job.stop(self._client, pod_sets):
            self._recorder.record(self._job_ref(job, wl), "Normal", "Stopped", message or reason)

    async def _drop_finalizer(self, wl: JSONDict) -> None:
        meta = wl.get("metadata") or {}
        if FINALIZER not in (meta.get("finalizers") or []):
            return
        finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER]
        with contextlib.suppress(NotFound):
            await self._client.patch(
                WORKLOADS,
                meta["name"],
                {"metadata": {"finalizers": finalizers, "resourceVersion": meta.get("resourceVersion")}},
                namespace=meta.get("namespace", ""),
            )

    async def _job_gone(self, key: JobKey) -> None:
        known = self._workload_of.pop(key, None)
        if known is None:
            return
        wl = self._caches.workloads.get(known[1], known[0])
        if wl is None or not self.owns(wl):
            return
        await self._drop_finalizer(wl)
        with contextlib.suppress(NotFound):
            await self._client.delete(WORKLOADS, known[1], known[0])

    async def _adopt(self, job: GenericJob, wl: JSONDict, now: float) -> None:
        """A prebuilt Workload becomes the job's own: the job's owner reference (and uid label) is
        added, as Kueue does. One whose pod sets do not match the job is finished ``OutOfSync``."""
        meta = wl.get("metadata") or {}
        if [_shape(p) for p in job.pod_sets()] != [_shape(p) for p in (wl.get("spec") or {}).get("podSets") or []]:
            written = await update_status(
                self._client,
                WORKLOADS,
                wl,
                lambda s, _: mark_finished(
                    s, "OutOfSync", "The prebuilt workload is out of sync with its user job", now
                ),
            )
            if written is not None:
                self._recorder.record(
                    written, "Warning", "OutOfSync", "The prebuilt workload is out of sync with its user job"
                )
            return
        refs = job.owner_references()
        labels: dict[str, str | None] = {}
        uid = refs[0].get("uid", "") if refs else ""
        if uid and len(uid) <= 63:
            labels[JOB_UID_LABEL] = uid
        patch: JSONDict = {
            "metadata": {
                "ownerReferences": [*(meta.get("ownerReferences") or []), *refs],
                "resourceVersion": meta.get("resourceVersion"),
            }
        }
        if labels:
            patch["metadata"]["labels"] = labels
        if FINALIZER not in (meta.get("finalizers") or []):
            patch["metadata"]["finalizers"] = [*(meta.get("finalizers") or []), FINALIZER]
        await self._client.patch(WORKLOADS, meta["name"], patch, namespace=job.namespace)
        self._workload_of[job.key] = (job.namespace, meta["name"])

    async def _sync_status(self, job: GenericJob, wl: JSONDict, now: float) -> None:
        """reclaimablePods and PodsReady (Kueue's job reconcile loop), in one write when either changed."""
        reclaimable = job.reclaimable_pods() if isinstance(job, JobWithReclaimablePods) else None
        track_ready = self._config.wait_for_pods_ready.enable

        def edit(s: JSONDict, obj: JSONDict) -> bool:
            changed = False
            if reclaimable is not None and has_quota(obj):
                current = s.get("reclaimablePods") or []
                if reclaimable and reclaimable != current:
                    s["reclaimablePods"] = reclaimable
                    changed = True
            if track_ready:
                prev = condition(obj, "PodsReady")
                conds = s.setdefault("conditions", [])
                if not is_admitted(obj):
                    # only after an admission ended: a write per new workload would race the scheduler
                    if prev is not None and (prev.get("status") != "False" or prev.get("reason") != "WaitForStart"):
                        changed = (
                            set_condition(
                                conds, "PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded", now
                            )
                            or changed
                        )
                elif job.pods_ready():
                    reason = "Started"
                    if prev is not None and prev.get("reason") in ("WaitForRecovery", "Recovered"):
                        reason = "Recovered"
                    changed = (
                        set_condition(
                            conds,
                            "PodsReady",
                            "True",
                            reason,
                            "All pods reached readiness and the workload is running",
                            now,
                        )
                        or changed
                    )
                elif prev is not None and prev.get("status") == "True":
                    changed = (
                        set_condition(
                            conds,
                            "PodsReady",
                            "False",
                            "WaitForRecovery",
                            "At least one pod has failed, waiting for recovery",
                            now,
                        )
                        or changed
                    )
                elif prev is None:
                    changed = (
                        set_condition(
                            conds, "PodsReady", "False", "WaitForStart", "Not all pods are ready or succeeded", now
                        )
                        or changed
                    )
            return changed

        await update_status(self._client, WORKLOADS, wl, edit)

    async def _update_in_place(self, job: GenericJob, wl: JSONDict) -> None:
        """A suspended job's unreserved Workload follows the job (queue name, podSets) in place (Kueue's job
        reconcile loop) instead of being recreated."""
        spec = wl.get("spec") or {}
        patch: JSONDict = {}
        if spec.get("queueName", "") != job.queue_name():
            patch["queueName"] = job.queue_name() or None
        pod_sets = job.pod_sets()
        if [_shape(p) for p in pod_sets] != [_shape(p) for p in spec.get("podSets") or []]:
            patch["podSets"] = pod_sets
        if patch:
            await self._client.patch(
                WORKLOADS, (wl.get("metadata") or {})["name"], {"spec": patch}, namespace=job.namespace
            )

    async def _sync_admission_gates(self, job: GenericJob, wl: JSONDict) -> None:
        """The job's ``admission-gated-by`` annotation is mirrored on its Workload (gates only shrink)."""
        want = job.annotations().get(ADMISSION_GATED_BY, "")
        have = ((wl.get("metadata") or {}).get("annotations") or {}).get(ADMISSION_GATED_BY, "")
        if want == have:
            return
        await self._client.patch(
            WORKLOADS,
            (wl.get("metadata") or {})["name"],
            {"metadata": {"annotations": {ADMISSION_GATED_BY: want or None}}},
            namespace=job.namespace,
        )

    async def _sync_priority(self, job: GenericJob, wl: JSONDict) -> None:
        """A changed ``priority-class`` label propagates to the Workload (its value and ref name)."""
        wpc_name = job.labels().get(PRIORITY_CLASS_LABEL, "")
        spec = wl.get("spec") or {}
        ref = spec.get("priorityClassRef") or {}
        if not wpc_name or (ref.get("kind") == "WorkloadPriorityClass" and ref.get("name") == wpc_name):
            return
        wpc = self._caches.workload_priority_classes.get(wpc_name)
        if wpc is None:
            return
        await self._client.patch(
            WORKLOADS,
            (wl.get("metadata") or {})["name"],
            {
                "spec": {
                    "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": wpc_name},
                    "priority": int(wpc.get("value", 0)),
                }
            },
            namespace=job.namespace,
        )

    def _priority(self, job: GenericJob) -> tuple[JSONDict | None, int | None]:
        """(priorityClassRef, priority) per Kueue's WorkloadPriorityClass rules."""
        wpc_name = job.labels().get(PRIORITY_CLASS_LABEL, "")
        if wpc_name:
            wpc = self._caches.workload_priority_classes.get(wpc_name)
            if wpc is None:
                raise PriorityClassNotFound(wpc_name)
            return (
                {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": wpc_name},
                int(wpc.get("value", 0)),
            )
        pc_name = job.priority_class_name() if isinstance(job, JobWithPriorityClass) else ""
        if not pc_name:
            for ps in job.pod_sets():
                pc_name = ((ps.get("template") or {}).get("spec") or {}).get("priorityClassName", "")
                if pc_name:
                    break
        if pc_name:
            pc = self._caches.priority_classes.get(pc_name)
            if pc is not None:
                return (
                    {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": pc_name},
                    int(pc.get("value", 0)),
                )
        for pc in self._caches.priority_classes.list():
            if pc.get("globalDefault"):
                name = (pc.get("metadata") or {}).get("name", "")
                return ({"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": name}, int(pc.get("value", 0)))
        return None, None

    async def _create_workload(self, job: GenericJob) -> None:
        try:
            ref, priority = self._priority(job)
        except PriorityClassNotFound as exc:
            self._recorder.record(
                self._job_ref(job, None),
                "Warning",
                "WorkloadPriorityClassNotFound",
                f'workloadPriorityClass "{exc}" not found',
            )
            raise
        refs = job.owner_references()
        labels: dict[str, str] = {}
        uid = refs[0].get("uid", "") if refs else ""
        if uid and len(uid) <= 63:
            labels[JOB_UID_LABEL] = uid
        for key in self._config.integrations.label_keys_to_copy:
            if key in job.labels():
                labels[key] = job.labels()[key]
        spec: JSONDict = {"podSets": job.pod_sets()}
        if job.queue_name():  # omitted when empty (a DNS-subdomain field); such a workload stays inadmissible
            spec["queueName"] = job.queue_name()
        if ref is not None:
            spec["priorityClassRef"] = ref
            spec["priority"] = priority
        max_exec = job.labels().get(MAX_EXEC_TIME_LABEL, "")
        if max_exec.isdigit() and int(max_exec) > 0:
            spec["maximumExecutionTimeSeconds"] = int(max_exec)
        meta: JSONDict = {
            "name": job.workload_name(),
            "namespace": job.namespace,
            "labels": labels,
            "finalizers": [FINALIZER],
            "ownerReferences": refs,
        }
        annotations = dict(job.workload_annotations())
        if job.annotations().get(ADMISSION_GATED_BY):
            annotations[ADMISSION_GATED_BY] = job.annotations()[ADMISSION_GATED_BY]
        if annotations:
            meta["annotations"] = annotations
        wl = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": meta, "spec": spec}
        try:
            created = await self._client.create(WORKLOADS, wl, job.namespace)
        except AlreadyExists:
            return
        except ApiError as exc:
            self._recorder.record(self._job_ref(job, None), "Warning", "ErrWorkloadCompose", exc.message)
            raise
        self._workload_of[job.key] = (job.namespace, job.workload_name())
        self._recorder.record(
            self._job_ref(job, created),
            "Normal",
            "CreatedWorkload",
            f"Created Workload: {job.namespace}/{job.workload_name()}",
        )


def _shape(pod_set: JSONDict) -> tuple[Any, ...]:
    """What makes two podSets equivalent for quota: name, counts and container resources (the API
    server defaults the rest of the template, so whole-template equality would never hold)."""
    spec = (pod_set.get("template") or {}).get("spec") or {}
    resources = tuple(
        tuple(sorted((k, str(v)) for k, v in ((c.get("resources") or {}).get(kind) or {}).items()))
        for group in ("initContainers", "containers")
        for c in spec.get(group) or []
        for kind in ("requests", "limits")
    )
    return (pod_set.get("name"), int(pod_set.get("count", 1)), pod_set.get("minCount"), resources)
