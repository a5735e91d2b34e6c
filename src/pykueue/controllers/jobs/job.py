"""The batch/v1 Job integration (which Jobs Kueue manages, their Workload, the reconcile loop): one podSet
``main`` per Job.

Owns: the Job adapter (:class:`BatchJob`) — podSet from parallelism/completions with partial
admission via ``kueue.x-k8s.io/job-min-parallelism``, PodsReady, finished, reclaimable pods, start
(unsuspend with the flavors' node labels/tolerations, parallelism for partial admission) and stop
(suspend, restore the template from the Workload) — and the create-time admission mutation
(default LocalQueue ``default``, suspend a managed Job).

Who calls it: the generic :class:`~pykueue.controllers.jobs.reconciler.JobReconciler` through
:data:`INTEGRATION`; the registry calls :func:`mutate_on_create` via the manager's admission hooks.
Invariant: a Job with a queue-name label (and no Kueue-managed owner) is never created unsuspended.
"""

from __future__ import annotations

import contextlib
import copy

from pykueue.api.meta.errors import ApiError
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.jobs.framework import (
    JOB_MIN_PARALLELISM,
    Caches,
    Finished,
    GenericJob,
    Integration,
    JobKey,
    JobWithReclaimablePods,
    ObjectJob,
    PodSetInfo,
    apply_pod_set_info,
    default_queue_and_manage,
    has_managed_owner,
    restore_template,
    template_for_workload,
)
from pykueue.controllers.resource_names import JOBS

__all__ = ["INTEGRATION", "BatchJob", "mutate_on_create"]

_DROP_LABELS = ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid")
PARENT_KINDS = frozenset({("jobset.x-k8s.io", "JobSet")})
"""Owners whose child Jobs Kueue leaves to the parent's integration (Kueue's rule for which jobs are managed)."""


class BatchJob(ObjectJob):
    API_VERSION = "batch/v1"
    KIND = "Job"
    GROUP = "batch"

    def is_active(self) -> bool:
        return int(self._status.get("active") or 0) > 0

    def _parallelism(self) -> int:
        return int(self._spec.get("parallelism", 1) if self._spec.get("parallelism") is not None else 1)

    def pod_count(self) -> int:
        parallelism = self._parallelism()
        completions = self._spec.get("completions")
        return min(parallelism, int(completions)) if completions is not None else parallelism

    def pod_sets(self) -> list[JSONDict]:
        template = template_for_workload(self._spec.get("template") or {}, _DROP_LABELS)
        pod_set: JSONDict = {"name": "main", "count": self.pod_count(), "template": template}
        min_parallelism = (self._meta.get("annotations") or {}).get(JOB_MIN_PARALLELISM, "")
        if min_parallelism.isdigit() and 0 < int(min_parallelism) < self.pod_count():
            pod_set["minCount"] = int(min_parallelism)
        return [pod_set]

    def finished(self) -> Finished | None:
        for cond in self._status.get("conditions") or []:
            if cond.get("status") != "True":
                continue
            if cond.get("type") == "Failed":
                return Finished(False, cond.get("message") or cond.get("reason") or "Job failed")
            if cond.get("type") == "Complete":
                return Finished(True, cond.get("message") or "Job finished successfully")
        return None

    def pods_ready(self) -> bool:
        uncounted = (self._status.get("uncountedTerminatedPods") or {}).get("succeeded") or []
        done = int(self._status.get("succeeded") or 0) + int(self._status.get("ready") or 0) + len(uncounted)
        return done >= self.pod_count()

    def reclaimable_pods(self) -> list[JSONDict]:
        parallelism = self._parallelism()
        succeeded = int(self._status.get("succeeded") or 0)
        completions = self._spec.get("completions")
        if parallelism <= 1 or succeeded <= 0 or completions is None:
            return []
        remaining = max(int(completions) - succeeded, 0)
        if remaining >= parallelism:
            return []
        return [{"name": "main", "count": parallelism - remaining}]

    async def run(self, client: Client, infos: list[PodSetInfo]) -> None:
        new = copy.deepcopy(self.obj)
        spec = new.setdefault("spec", {})
        info = next((i for i in infos if i.name == "main"), infos[0] if infos else None)
        if info is not None:
            spec["template"] = apply_pod_set_info(spec.get("template") or {}, info)
            if info.count < self.pod_count():
                spec["parallelism"] = info.count
        spec["suspend"] = False
        await client.update(JOBS, new)

    async def stop(self, client: Client, pod_sets: list[JSONDict]) -> bool:
        """Suspend, reset ``startTime``, then restore the template — in that order, because a Job's
        template may change only while it is suspended and not started (as kube-apiserver enforces)."""
        current = self.obj
        changed = False
        if not self.is_suspended():
            new = copy.deepcopy(current)
            new.setdefault("spec", {})["suspend"] = True
            current = await client.update(JOBS, new)
            changed = True
        if (current.get("status") or {}).get("startTime"):
            # Kueue resets startTime so activeDeadlineSeconds counts from the next start
            with contextlib.suppress(ApiError):
                current = await client.patch(
                    JOBS,
                    self._meta.get("name", ""),
                    {"status": {"startTime": None}},
                    namespace=self.namespace,
                    subresource="status",
                )
        original = next((ps for ps in pod_sets if ps.get("name") == "main"), pod_sets[0] if pod_sets else None)
        if original is not None:
            new = copy.deepcopy(current)
            spec = new.setdefault("spec", {})
            spec["template"] = restore_template(
                spec.get("template") or {}, original.get("template") or {}, keep_labels=_DROP_LABELS
            )
            if original.get("minCount") is not None:
                spec["parallelism"] = int(original.get("count", self._parallelism()))
            if new != current:
                await client.update(JOBS, new)
                changed = True
        return changed


def mutate_on_create(obj: JSONDict, config: KueueConfig, caches: Caches) -> JSONDict | None:
    """Which jobs are managed: default the queue to LocalQueue ``default``; suspend a managed Job."""
    if has_managed_owner(obj, PARENT_KINDS):
        return None
    out, managed = default_queue_and_manage(obj, config, caches)
    if not managed:
        return out if out is not obj else None
    spec = out.get("spec") or {}
    if spec.get("suspend") is True and out is obj:
        return None
    return {**out, "spec": {**spec, "suspend": True}}


def _key_of(obj: JSONDict) -> JobKey | None:
    if has_managed_owner(obj, PARENT_KINDS):
        return None
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", ""), meta.get("name", ""))


def _key_for_workload(wl: JSONDict, jobs: Informer) -> JobKey | None:
    meta = wl.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == "Job" and ref.get("apiVersion", "").startswith("batch/"):
            return (meta.get("namespace", ""), ref.get("name", ""))
    return None


def _load(key: JobKey, jobs: Informer) -> GenericJob | None:
    obj = jobs.get(key[1], key[0])
    return BatchJob(obj) if obj is not None else None


INTEGRATION = Integration(
    name="batch/job",
    res=JOBS,
    owner_kinds=frozenset({("batch", "Job")}),
    key_of=_key_of,
    key_for_workload=_key_for_workload,
    load=_load,
    admission_mutator=mutate_on_create,
)

_conforms: type[GenericJob] = BatchJob
_reclaims: type[JobWithReclaimablePods] = BatchJob
