"""The embedded batch/v1 Job controller: pods for unsuspended Jobs, status and terminal conditions.

Owned by ``cluster/``; started by :class:`~pykueue.cluster.embedded.EmbeddedCluster` (on a real
cluster kube-controller-manager does this). Kueue's Job integration suspends and resumes Jobs;
this controller does the rest as Kubernetes 1.31+ does:

- unsuspended: keep ``min(parallelism, completions - succeeded)`` pods active (Indexed: one per
  pending index, label/annotation ``batch.kubernetes.io/job-completion-index``), pods named
  ``<job>-<5 chars>`` (Indexed: ``<job>-<index>-<5 chars>``), labelled and controller-owned;
- ``suspend: true``: delete active pods, condition Suspended=True, clear ``startTime``; on resume
  Suspended=False and a fresh ``startTime``;
- ``failed > backoffLimit`` (or ``activeDeadlineSeconds`` passed): delete active pods,
  FailureTarget + Failed (BackoffLimitExceeded / DeadlineExceeded);
- completions reached: SuccessCriteriaMet + Complete, ``completionTime``.

Simplifications (documented): terminated pods are counted from the pods that still exist (a
finished pod deleted by hand keeps its count, since counts never go down); a running pod deleted by
someone else counts as failed once (remembered in memory, so not across a restart) and is replaced;
``restartPolicy: OnFailure`` restarts containers in place (node agents) and those restarts count
against ``backoffLimit``, as in Kubernetes.

Invariant: never more active pods than wanted, even while the pod informer lags (expectations).
"""

from __future__ import annotations

import copy
import logging
import secrets

from pykueue.api.meta.clock import Clock, format_time, parse_time
from pykueue.api.meta.errors import AlreadyExists, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer, WorkQueue, key_of, split_key
from pykueue.client.group_version_resource import JOBS, PODS
from pykueue.cluster.expectations import Expectations
from pykueue.cluster.podutil import (
    Record,
    condition,
    is_active,
    is_ready,
    no_record,
    owner_uid,
    set_condition,
)

__all__ = ["INDEX_KEY", "JobController", "format_indexes", "parse_indexes"]

log = logging.getLogger(__name__)


INDEX_KEY = "batch.kubernetes.io/job-completion-index"
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' generateName alphabet (no vowels, no 0/1/3)


def random_suffix() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(5))


def parse_indexes(text: str) -> set[int]:
    """``"0-2,5"`` -> {0, 1, 2, 5} (the format of ``status.completedIndexes``)."""
    out: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def format_indexes(indexes: set[int]) -> str:
    parts: list[str] = []
    ordered = sorted(indexes)
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)


def pod_index(pod: JSONDict) -> int | None:
    meta = pod.get("metadata") or {}
    raw = (meta.get("annotations") or {}).get(INDEX_KEY) or (meta.get("labels") or {}).get(INDEX_KEY)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _past_backoff_limit_on_failure(spec: JSONDict, active: list[JSONDict], backoff_limit: int) -> bool:
    """With ``restartPolicy: OnFailure`` containers restart in place, so their restarts are the retries
    (kube-controller-manager's pastBackoffLimitOnFailure)."""
    if ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
        return False
    restarts = sum(
        int(cs.get("restartCount") or 0)
        for pod in active
        for cs in [
            *((pod.get("status") or {}).get("initContainerStatuses") or []),
            *((pod.get("status") or {}).get("containerStatuses") or []),
        ]
    )
    return restarts > 0 if backoff_limit == 0 else restarts >= backoff_limit


def _finished(job: JSONDict) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


class JobController:
    def __init__(
        self, client: Client, jobs: Informer, pods: Informer, clock: Clock, *, record: Record = no_record
    ) -> None:
        self.client = client
        self.record = record
        self._lost: dict[str, set[str]] = {}
        """Job key -> uids of its running pods deleted by someone else: they count as failed."""
        self.jobs = jobs
        self.pods = pods
        self.clock = clock
        self.queue: WorkQueue[str] = WorkQueue("job-controller")
        self.expectations = Expectations()
        pods.add_index("job-uid", lambda p: [uid] if (uid := owner_uid(p, "Job")) else [])
        jobs.add_handler(self._on_job)
        pods.add_handler(self._on_pod)

    def _on_job(self, kind: str, job: JSONDict, old: JSONDict | None) -> None:
        key = key_of(job)
        if kind == "DELETED":
            self.expectations.forget(key)
        self.queue.add(key)

    def _on_pod(self, kind: str, pod: JSONDict, old: JSONDict | None) -> None:
        meta = pod.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "Job":
                job_key = f"{meta.get('namespace')}/{ref.get('name')}"
                if kind == "DELETED":
                    if is_active(pod) and not self.expectations.expects_delete(job_key, str(meta.get("name"))):
                        self._lost.setdefault(job_key, set()).add(str(meta.get("uid")))
                    self.expectations.observed_delete(job_key, str(meta.get("name")))
                else:
                    self.expectations.observed_add(job_key, str(meta.get("name")))
                self.queue.add(job_key)

    # -- reconcile --------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> float | None:
        job = self.jobs.get_by_key(key)
        if job is None:
            self._lost.pop(key, None)
            return None
        spec = job.get("spec") or {}
        managed_by = spec.get("managedBy")
        if managed_by and managed_by != "kubernetes.io/job-controller":
            return None  # e.g. MultiKueue: another controller owns this Job's pods
        pods = self.pods.by_index("job-uid", str(job["metadata"].get("uid")))
        if not self.expectations.satisfied(key, {str(p["metadata"]["name"]) for p in pods}):
            return 0.5  # our last creations/deletions are not in the cache yet
        status: JSONDict = dict(job.get("status") or {})
        desired = _Status(status, self.clock)
        active = [p for p in pods if is_active(p)]
        succeeded_pods = [p for p in pods if (p.get("status") or {}).get("phase") == "Succeeded"]
        failed_pods = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
        indexed = spec.get("completionMode") == "Indexed"
        completed: set[int] = set()
        if indexed:
            completed = parse_indexes(str(status.get("completedIndexes") or ""))
            completed |= {i for p in succeeded_pods if (i := pod_index(p)) is not None}
        succeeded = max(int(status.get("succeeded") or 0), len(succeeded_pods))
        failed = max(int(status.get("failed") or 0), len(failed_pods))
        lost = self._lost.pop(key, set())
        if not _finished(job) and not spec.get("suspend"):
            # A running pod deleted behind our back failed, as with Kubernetes' pod-tracking finalizers.
            failed += len(lost)
        requeue: float | None = None
        to_delete: list[JSONDict] = []
        to_create: list[int | None] = []

        if _finished(job) or job["metadata"].get("deletionTimestamp"):
            to_delete = active  # finished, or being deleted (foreground): never start anything new
        elif spec.get("suspend"):
            to_delete = active
            desired.set_condition("Suspended", "True", "JobSuspended", "Job suspended")
            desired.fields["startTime"] = None
        else:
            if (condition(job, "Suspended") or {}).get("status") == "True":
                desired.set_condition("Suspended", "False", "JobResumed", "Job resumed")
                desired.fields["startTime"] = desired.now
            if not desired.fields.get("startTime"):
                desired.fields["startTime"] = desired.now
            failure = self._failure(spec, failed, str(desired.fields["startTime"]), active)
            deadline = spec.get("activeDeadlineSeconds")
            if failure is not None:
                to_delete = active
                failed += len(active)  # killed because the Job failed: they count as failed pods
                desired.set_condition("FailureTarget", "True", failure[0], failure[1])
                desired.set_condition("Failed", "True", failure[0], failure[1])
            elif self._complete(spec, indexed, completed, succeeded, active):
                to_delete = active
                message = "Reached expected number of succeeded pods"
                desired.set_condition("SuccessCriteriaMet", "True", "CompletionsReached", message)
                desired.set_condition("Complete", "True", "CompletionsReached", message)
                desired.fields["completionTime"] = desired.now
            else:
                to_create, to_delete = self._plan(spec, indexed, completed, succeeded, active)
                if deadline:
                    started = parse_time(str(desired.fields["startTime"]))
                    requeue = max(0.1, started + float(deadline) - self.clock.now())

        deleted = await self._delete_pods(key, to_delete, job)
        created = await self._create_pods(key, job, to_create)
        remaining = [p for p in active if p["metadata"]["name"] not in deleted]
        desired.fields["active"] = (len(remaining) + created) or None
        desired.fields["ready"] = sum(1 for p in remaining if is_ready(p))
        desired.fields["terminating"] = 0
        desired.fields["succeeded"] = succeeded or None
        desired.fields["failed"] = failed or None
        desired.fields["uncountedTerminatedPods"] = {}
        if indexed:
            desired.fields["completedIndexes"] = format_indexes(completed)
        try:
            await self._write_status(job, status, desired)
        except Exception:
            if lost:
                self._lost.setdefault(key, set()).update(lost)
            raise
        self._record_transitions(job, status, desired)
        return requeue

    def _record_transitions(self, job: JSONDict, status: JSONDict, desired: _Status) -> None:
        before = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        for cond in desired.fields["conditions"]:
            kind, value = cond.get("type"), cond.get("status")
            if before.get(kind) == value:
                continue
            if kind == "Complete" and value == "True":
                self.record(job, "Normal", "Completed", "Job completed")
            elif kind == "Failed" and value == "True":
                self.record(job, "Warning", str(cond.get("reason")), str(cond.get("message")))
            elif kind == "Suspended":
                self.record(
                    job,
                    "Normal",
                    "Suspended" if value == "True" else "Resumed",
                    "Job suspended" if value == "True" else "Job resumed",
                )

    def _failure(self, spec: JSONDict, failed: int, start_time: str, active: list[JSONDict]) -> tuple[str, str] | None:
        backoff_limit = int(spec.get("backoffLimit", 6))
        if failed > backoff_limit or _past_backoff_limit_on_failure(spec, active, backoff_limit):
            return "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        deadline = spec.get("activeDeadlineSeconds")
        if deadline and self.clock.now() - parse_time(start_time) >= float(deadline):
            return "DeadlineExceeded", "Job was active longer than specified deadline"
        return None

    @staticmethod
    def _complete(spec: JSONDict, indexed: bool, completed: set[int], succeeded: int, active: list[JSONDict]) -> bool:
        completions = spec.get("completions")
        if indexed:
            return completions is not None and len(completed) >= int(completions)
        if completions is not None:
            return succeeded >= int(completions)
        return succeeded > 0 and not active  # work-queue Jobs: done once one succeeded and none run

    @staticmethod
    def _plan(
        spec: JSONDict, indexed: bool, completed: set[int], succeeded: int, active: list[JSONDict]
    ) -> tuple[list[int | None], list[JSONDict]]:
        """Pods to create (their indexes; None for NonIndexed) and active pods to delete."""
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        if indexed:
            running = {i for p in active if (i := pod_index(p)) is not None}
            pending = [i for i in range(int(completions or 0)) if i not in completed and i not in running]
            room = max(0, parallelism - len(active))
            return list(pending[:room]), []
        if completions is None:
            want = 0 if succeeded > 0 else parallelism
        else:
            want = max(0, min(parallelism, int(completions) - succeeded))
        if len(active) < want:
            return [None] * (want - len(active)), []
        # Too many: delete the least advanced first (pending before running, newest first).
        surplus = sorted(
            active,
            key=lambda p: (
                (p.get("status") or {}).get("phase") == "Running",
                str(p["metadata"].get("creationTimestamp", "")),
            ),
        )
        return [], surplus[: len(active) - want]

    # -- writes -----------------------------------------------------------------------------------

    async def _delete_pods(self, key: str, pods: list[JSONDict], job: JSONDict | None = None) -> set[str]:
        names = {str(p["metadata"]["name"]) for p in pods}
        if not names:
            return set()
        self.expectations.expect(key, deletes=names)
        namespace, _ = split_key(key)
        for name in names:
            try:
                await self.client.delete(PODS, name, namespace)
            except NotFound:
                self.expectations.observed_delete(key, name)
                continue
            if job is not None:
                self.record(job, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return names

    async def _create_pods(self, key: str, job: JSONDict, indexes: list[int | None]) -> int:
        if not indexes:
            return 0
        namespace, _ = split_key(key)
        created = 0
        for index in indexes:
            pod = self._pod_for(job, index)
            self.expectations.expect(key, adds=[pod["metadata"]["name"]])
            try:
                await self.client.create(PODS, pod, namespace)
                created += 1
                self.record(job, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
            except AlreadyExists:
                self.expectations.observed_add(key, pod["metadata"]["name"])
            except Exception:
                self.expectations.observed_add(key, pod["metadata"]["name"])
                raise
        log.debug("job %s: created %d pods", key, created)
        return created

    def _pod_for(self, job: JSONDict, index: int | None) -> JSONDict:
        meta = job["metadata"]
        name, uid = str(meta["name"]), str(meta["uid"])
        template = copy.deepcopy(job["spec"].get("template") or {})
        tmeta = template.get("metadata") or {}
        labels = {
            **(tmeta.get("labels") or {}),
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
        annotations = dict(tmeta.get("annotations") or {})
        pod_spec = dict(template.get("spec") or {})
        prefix = name[:57] if index is None else f"{name}-{index}"[:57]
        if index is not None:
            labels[INDEX_KEY] = str(index)
            annotations[INDEX_KEY] = str(index)
            pod_spec.setdefault("hostname", f"{name}-{index}"[:63])
            env_var = {
                "name": "JOB_COMPLETION_INDEX",
                "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX_KEY}']"}},
            }
            pod_spec["containers"] = [
                {**c, "env": [*(c.get("env") or []), env_var]}
                if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in c.get("env") or [])
                else c
                for c in pod_spec.get("containers") or []
            ]
        metadata: JSONDict = {
            "name": f"{prefix}-{random_suffix()}",
            "namespace": meta.get("namespace"),
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        if annotations:
            metadata["annotations"] = annotations
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}

    async def _write_status(self, job: JSONDict, status: JSONDict, desired: _Status) -> None:
        patch = {k: v for k, v in desired.fields.items() if status.get(k) != v and not (v is None and k not in status)}
        if not patch:
            return
        namespace, name = split_key(key_of(job))
        try:
            await self.client.patch(JOBS, name, {"status": patch}, namespace=namespace, subresource="status")
        except NotFound:
            return


class _Status:
    """The status being computed: starts as the current one; ``None`` values remove a field."""

    def __init__(self, status: JSONDict, clock: Clock) -> None:
        self.now = format_time(clock.now())
        self.fields: JSONDict = {
            "startTime": status.get("startTime"),
            "conditions": list(status.get("conditions") or []),
        }

    def set_condition(self, kind: str, value: str, reason: str, message: str) -> None:
        self.fields["conditions"] = set_condition(
            self.fields["conditions"], kind, value, reason, message, self.now, probe=True
        )
