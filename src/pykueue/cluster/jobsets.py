"""The embedded JobSet controller (``jobset.x-k8s.io/v1alpha2``), the subset Kueue's integration needs.

Owned by ``cluster/``; started by :class:`~pykueue.cluster.embedded.EmbeddedCluster` when the
JobSet kind is served. For every ``replicatedJobs[i]`` it keeps ``replicas`` child Jobs named
``<jobset>-<rjob>-<index>`` (controller-owned, labelled ``jobset.sigs.k8s.io/*``), propagates
``spec.suspend`` to them — and on resume the pod-template changes Kueue injected into the JobSet
(nodeSelector, tolerations, labels, annotations, schedulingGates) — and reports
``replicatedJobsStatus`` plus the terminal conditions: Completed when ``successPolicy`` is met
(default: every child Job completed; remaining active children are then deleted), Failed when a
child failed and ``failurePolicy.maxRestarts`` (default 0) is used up; restarts recreate all
children.

Invariant: children are created only from the JobSet's own spec; a JobSet never has two children
with one name (expectations cover the informer's lag).
"""

from __future__ import annotations

import copy
import logging

from pykueue.api.meta.clock import Clock, format_time
from pykueue.api.meta.errors import AlreadyExists, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer, WorkQueue, key_of, split_key
from pykueue.client.group_version_resource import JOBS, JOBSETS
from pykueue.cluster.expectations import Expectations
from pykueue.cluster.podutil import Record, condition, no_record, owner_uid, set_condition

__all__ = ["JobSetController"]

log = logging.getLogger(__name__)


PREFIX = "jobset.sigs.k8s.io/"
JOBSET_NAME = PREFIX + "jobset-name"
RJOB_NAME = PREFIX + "replicatedjob-name"
RJOB_REPLICAS = PREFIX + "replicatedjob-replicas"
JOB_INDEX = PREFIX + "job-index"
RESTART_ATTEMPT = PREFIX + "restart-attempt"
JOBSET_UID = PREFIX + "jobset-uid"


def _succeeded(spec: JSONDict, jobs: list[JSONDict]) -> bool:
    """``successPolicy``: operator All (default) or Any over ``targetReplicatedJobs`` (default: all)."""
    policy = spec.get("successPolicy") or {}
    rjobs = list(spec.get("replicatedJobs") or [])
    targets = set(policy.get("targetReplicatedJobs") or [str(r.get("name")) for r in rjobs])
    complete = [
        j for j in jobs if _true(j, "Complete") and (j["metadata"].get("labels") or {}).get(RJOB_NAME) in targets
    ]
    if policy.get("operator") == "Any":
        return bool(complete)
    expected = sum(int(r.get("replicas", 1)) for r in rjobs if str(r.get("name")) in targets)
    return expected > 0 and len(complete) >= expected


def _ready(job: JSONDict, expected: int) -> bool:
    """JobSet's notion: ready + succeeded pods cover the Job's expected pod count."""
    st = job.get("status") or {}
    return int(st.get("ready") or 0) + int(st.get("succeeded") or 0) >= expected


def _true(obj: JSONDict, kind: str) -> bool:
    return (condition(obj, kind) or {}).get("status") == "True"


class JobSetController:
    def __init__(
        self, client: Client, jobsets: Informer, jobs: Informer, clock: Clock, *, record: Record = no_record
    ) -> None:
        self.client = client
        self.record = record
        self.jobsets = jobsets
        self.jobs = jobs
        self.clock = clock
        self.queue: WorkQueue[str] = WorkQueue("jobset-controller")
        self.expectations = Expectations()
        jobs.add_index("jobset-uid", lambda j: [uid] if (uid := owner_uid(j, "JobSet")) else [])
        jobsets.add_handler(lambda kind, js, old: self.queue.add(key_of(js)))
        jobs.add_handler(self._on_job)

    def _on_job(self, kind: str, job: JSONDict, old: JSONDict | None) -> None:
        meta = job.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "JobSet":
                key = f"{meta.get('namespace')}/{ref.get('name')}"
                if kind == "DELETED":
                    self.expectations.observed_delete(key, str(meta.get("name")))
                else:
                    self.expectations.observed_add(key, str(meta.get("name")))
                self.queue.add(key)

    async def reconcile(self, key: str) -> float | None:
        js = self.jobsets.get_by_key(key)
        if js is None:
            self.expectations.forget(key)
            return None
        if _true(js, "Completed") or _true(js, "Failed"):
            return None
        children = self.jobs.by_index("jobset-uid", str(js["metadata"].get("uid")))
        if not self.expectations.satisfied(key, {str(j["metadata"]["name"]) for j in children}):
            return 0.5
        spec = js.get("spec") or {}
        status: JSONDict = dict(js.get("status") or {})
        now = format_time(self.clock.now())
        conditions = list(status.get("conditions") or [])
        restarts = int(status.get("restarts") or 0)
        current = [
            j
            for j in children
            if (j["metadata"].get("labels") or {}).get(RESTART_ATTEMPT, str(restarts)) == str(restarts)
        ]
        stale = [j for j in children if j not in current]
        desired: JSONDict = {}
        if stale:
            await self._delete(key, stale)
        if any(_true(j, "Failed") for j in current):
            max_restarts = int((spec.get("failurePolicy") or {}).get("maxRestarts", 0))
            if restarts < max_restarts:
                await self._delete(key, current)
                desired["restarts"] = restarts + 1
                current = []
            else:
                await self._delete(key, [j for j in current if not _true(j, "Complete") and not _true(j, "Failed")])
                conditions = set_condition(
                    conditions, "Failed", "True", "FailedJobs", "jobset failed due to one or more job failures", now
                )
                desired["terminalState"] = "Failed"
        suspend = bool(spec.get("suspend"))
        if "terminalState" not in desired:
            await self._sync_children(key, js, current, int(desired.get("restarts", restarts)))
        desired["replicatedJobsStatus"] = self._replicated_status(spec, current)
        if "terminalState" not in desired and _succeeded(spec, current):
            await self._delete(key, [j for j in current if not _true(j, "Complete") and not _true(j, "Failed")])
            conditions = set_condition(
                conditions, "Completed", "True", "AllJobsCompleted", "jobset completed successfully", now
            )
            desired["terminalState"] = "Completed"
        if suspend:
            conditions = set_condition(conditions, "Suspended", "True", "SuspendedJobs", "jobset is suspended", now)
        elif _true({"status": {"conditions": conditions}}, "Suspended"):
            conditions = set_condition(conditions, "Suspended", "False", "ResumeJobs", "jobset is resumed", now)
        desired["conditions"] = conditions
        patch = {k: v for k, v in desired.items() if status.get(k) != v}
        if patch:
            namespace, name = split_key(key)
            try:
                await self.client.patch(JOBSETS, name, {"status": patch}, namespace=namespace, subresource="status")
            except NotFound:
                return None
        return None

    # -- children ---------------------------------------------------------------------------------

    async def _sync_children(self, key: str, js: JSONDict, current: list[JSONDict], restarts: int) -> None:
        namespace, _ = split_key(key)
        spec = js.get("spec") or {}
        by_name = {str(j["metadata"]["name"]): j for j in current}
        suspend = bool(spec.get("suspend"))
        for rjob in spec.get("replicatedJobs") or []:
            for index in range(int(rjob.get("replicas", 1))):
                job = self._child(js, rjob, index, restarts)
                name = str(job["metadata"]["name"])
                existing = by_name.get(name)
                if existing is None:
                    self.expectations.expect(key, adds=[name])
                    try:
                        await self.client.create(JOBS, job, namespace)
                        self.record(js, "Normal", "SuccessfulCreate", f"Created job: {name}")
                    except AlreadyExists:
                        self.expectations.observed_add(key, name)
                    except Exception:
                        self.expectations.observed_add(key, name)
                        raise
                elif bool((existing.get("spec") or {}).get("suspend")) != suspend:
                    await self._set_suspend(existing, job, suspend)

    async def _set_suspend(self, existing: JSONDict, wanted: JSONDict, suspend: bool) -> None:
        updated = copy.deepcopy(existing)
        updated["spec"]["suspend"] = suspend
        if not suspend:
            # Resuming: carry the scheduling directives Kueue put into the JobSet's template.
            template = updated["spec"].setdefault("template", {})
            source = wanted["spec"].get("template") or {}
            tmeta = template.setdefault("metadata", {})
            smeta = source.get("metadata") or {}
            tmeta["labels"] = {**(tmeta.get("labels") or {}), **(smeta.get("labels") or {})}
            tmeta["annotations"] = {**(tmeta.get("annotations") or {}), **(smeta.get("annotations") or {})}
            pod_spec = template.setdefault("spec", {})
            for field in ("nodeSelector", "tolerations", "schedulingGates"):
                value = (source.get("spec") or {}).get(field)
                if value:
                    pod_spec[field] = value
                else:
                    pod_spec.pop(field, None)
        try:
            await self.client.update(JOBS, updated)
        except NotFound:
            return

    def _child(self, js: JSONDict, rjob: JSONDict, index: int, restarts: int) -> JSONDict:
        meta = js["metadata"]
        js_name, uid = str(meta["name"]), str(meta["uid"])
        rname = str(rjob.get("name", ""))
        template = copy.deepcopy(rjob.get("template") or {})
        labels = {
            JOBSET_NAME: js_name,
            RJOB_NAME: rname,
            RJOB_REPLICAS: str(rjob.get("replicas", 1)),
            JOB_INDEX: str(index),
            RESTART_ATTEMPT: str(restarts),
            JOBSET_UID: uid,
        }
        tmeta = template.get("metadata") or {}
        job_spec = dict(template.get("spec") or {})
        job_spec["suspend"] = bool((js.get("spec") or {}).get("suspend"))
        pod_template = dict(job_spec.get("template") or {})
        pmeta = dict(pod_template.get("metadata") or {})
        pmeta["labels"] = {**(pmeta.get("labels") or {}), **labels}
        pmeta["annotations"] = {**(pmeta.get("annotations") or {}), **labels}
        pod_template["metadata"] = pmeta
        job_spec["template"] = pod_template
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{js_name}-{rname}-{index}",
                "namespace": meta.get("namespace"),
                "labels": {**(tmeta.get("labels") or {}), **labels},
                "annotations": {**(tmeta.get("annotations") or {}), **labels},
                "ownerReferences": [
                    {
                        "apiVersion": "jobset.x-k8s.io/v1alpha2",
                        "kind": "JobSet",
                        "name": js_name,
                        "uid": uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": job_spec,
        }

    async def _delete(self, key: str, jobs: list[JSONDict]) -> None:
        names = [str(j["metadata"]["name"]) for j in jobs]
        if not names:
            return
        self.expectations.expect(key, deletes=names)
        namespace, _ = split_key(key)
        for name in names:
            try:
                await self.client.delete(JOBS, name, namespace, propagation="Background")
            except NotFound:
                self.expectations.observed_delete(key, name)

    @staticmethod
    def _replicated_status(spec: JSONDict, jobs: list[JSONDict]) -> list[JSONDict]:
        out = []
        for rjob in spec.get("replicatedJobs") or []:
            rname = str(rjob.get("name", ""))
            mine = [j for j in jobs if (j["metadata"].get("labels") or {}).get(RJOB_NAME) == rname]
            job_spec = (rjob.get("template") or {}).get("spec") or {}
            parallelism = int(job_spec.get("parallelism", 1))
            completions = int(job_spec.get("completions", parallelism))
            expected = min(parallelism, completions)

            finished = [j for j in mine if _true(j, "Complete") or _true(j, "Failed")]
            out.append(
                {
                    "name": rname,
                    "ready": sum(1 for j in mine if j not in finished and _ready(j, expected)),
                    "succeeded": sum(1 for j in mine if _true(j, "Complete")),
                    "failed": sum(1 for j in mine if _true(j, "Failed")),
                    "active": sum(
                        1 for j in mine if j not in finished and int((j.get("status") or {}).get("active") or 0)
                    ),
                    "suspended": sum(1 for j in mine if (j.get("spec") or {}).get("suspend")),
                }
            )
        return out
