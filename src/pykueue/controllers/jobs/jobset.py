"""The JobSet integration (``jobset.x-k8s.io/v1alpha2``, Kueue's Workload construction): one podSet per replicatedJob.

Owns: the JobSet adapter (:class:`JobSetJob`) and its create-time admission mutation. A JobSet is
admitted as one unit; its child Jobs are not managed separately (the Job integration skips Jobs
owned by a JobSet).

Who calls it: the generic job reconciler through :data:`INTEGRATION`; the registry via the
manager's admission hooks.
Invariant: podSet ``i`` of the Workload is ``replicatedJobs[i]`` (name lower-cased), so starting and
stopping can map assignments back by name.
"""

from __future__ import annotations

import copy
from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.jobs.framework import (
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
    restore_template,
    template_for_workload,
)
from pykueue.controllers.resource_names import JOBSETS

__all__ = ["INTEGRATION", "JobSetJob", "mutate_on_create"]


def _pods_per_replica(rjob: JSONDict) -> int:
    spec = (rjob.get("template") or {}).get("spec") or {}
    raw = spec.get("parallelism")
    parallelism = int(raw) if raw is not None else 1
    completions = spec.get("completions")
    return min(parallelism, int(completions)) if completions is not None else parallelism


class JobSetJob(ObjectJob):
    API_VERSION = "jobset.x-k8s.io/v1alpha2"
    KIND = "JobSet"
    GROUP = "jobset.x-k8s.io"

    def is_active(self) -> bool:
        return any(int(r.get("active") or 0) > 0 for r in self._status.get("replicatedJobsStatus") or [])

    def _replicated(self) -> list[JSONDict]:
        return list(self._spec.get("replicatedJobs") or [])

    def pod_sets(self) -> list[JSONDict]:
        out = []
        for rjob in self._replicated():
            job_spec = (rjob.get("template") or {}).get("spec") or {}
            replicas = int(rjob.get("replicas", 1) if rjob.get("replicas") is not None else 1)
            out.append(
                {
                    "name": str(rjob.get("name", "")).lower(),
                    "count": replicas * _pods_per_replica(rjob),
                    "template": template_for_workload(job_spec.get("template") or {}),
                }
            )
        return out

    def finished(self) -> Finished | None:
        for cond in self._status.get("conditions") or []:
            if cond.get("status") != "True":
                continue
            if cond.get("type") == "Failed":
                return Finished(False, cond.get("message") or "JobSet failed")
            if cond.get("type") == "Completed":
                return Finished(True, cond.get("message") or "JobSet finished successfully")
        return None

    def pods_ready(self) -> bool:
        statuses = self._status.get("replicatedJobsStatus") or []
        done = sum(int(s.get("ready") or 0) + int(s.get("succeeded") or 0) for s in statuses)
        wanted = sum(int(r.get("replicas", 1) if r.get("replicas") is not None else 1) for r in self._replicated())
        return done >= wanted

    def reclaimable_pods(self) -> list[JSONDict]:
        by_name = {s.get("name"): s for s in self._status.get("replicatedJobsStatus") or []}
        out = []
        for rjob in self._replicated():
            succeeded = int((by_name.get(rjob.get("name")) or {}).get("succeeded") or 0)
            replicas = int(rjob.get("replicas", 1) if rjob.get("replicas") is not None else 1)
            if 0 < succeeded <= replicas:
                out.append({"name": str(rjob.get("name", "")).lower(), "count": succeeded * _pods_per_replica(rjob)})
        return out

    def _with_templates(self, change: Any) -> JSONDict:
        new = copy.deepcopy(self.obj)
        for rjob in new.setdefault("spec", {}).get("replicatedJobs") or []:
            job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
            job_spec["template"] = change(str(rjob.get("name", "")).lower(), job_spec.get("template") or {})
        return new

    async def run(self, client: Client, infos: list[PodSetInfo]) -> None:
        by_name = {i.name: i for i in infos}
        new = self._with_templates(lambda n, t: apply_pod_set_info(t, by_name[n]) if n in by_name else t)
        new["spec"]["suspend"] = False
        await client.update(JOBSETS, new)

    async def stop(self, client: Client, pod_sets: list[JSONDict]) -> bool:
        """Suspend first, then restore the templates (templates may change only while suspended)."""
        current = self.obj
        changed = False
        if not self.is_suspended():
            new = copy.deepcopy(current)
            new.setdefault("spec", {})["suspend"] = True
            current = await client.update(JOBSETS, new)
            changed = True
        by_name = {ps.get("name"): ps.get("template") or {} for ps in pod_sets}
        restored = JobSetJob(current)._with_templates(
            lambda n, t: restore_template(t, by_name[n]) if n in by_name else t
        )
        if restored != current:
            await client.update(JOBSETS, restored)
            changed = True
        return changed


def mutate_on_create(obj: JSONDict, config: KueueConfig, caches: Caches) -> JSONDict | None:
    out, managed = default_queue_and_manage(obj, config, caches)
    if not managed:
        return out if out is not obj else None
    return {**out, "spec": {**(out.get("spec") or {}), "suspend": True}}


def _key_of(obj: JSONDict) -> JobKey | None:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", ""), meta.get("name", ""))


def _key_for_workload(wl: JSONDict, jobs: Informer) -> JobKey | None:
    meta = wl.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == "JobSet" and ref.get("apiVersion", "").startswith("jobset.x-k8s.io/"):
            return (meta.get("namespace", ""), ref.get("name", ""))
    return None


def _load(key: JobKey, jobs: Informer) -> GenericJob | None:
    obj = jobs.get(key[1], key[0])
    return JobSetJob(obj) if obj is not None else None


INTEGRATION = Integration(
    name="jobset.x-k8s.io/jobset",
    res=JOBSETS,
    owner_kinds=frozenset({("jobset.x-k8s.io", "JobSet")}),
    key_of=_key_of,
    key_for_workload=_key_for_workload,
    load=_load,
    admission_mutator=mutate_on_create,
)

_conforms: type[GenericJob] = JobSetJob
_reclaims: type[JobWithReclaimablePods] = JobSetJob
