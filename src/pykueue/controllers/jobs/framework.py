"""The job framework: what every integration implements, and the registry of integrations.

Owns the small protocol an integration's job adapter satisfies (Kueue's ``GenericJob``), the
optional capabilities checked where used (``JobWithReclaimablePods``, ``JobWithPriorityClass``), the
shared helpers every integration needs (Workload naming, podSet info from an admission
step 11 with the pods' podset and queue labels, pod-set templates with de-duplicated env vars,
template restore), and :data:`INTEGRATIONS`, the one literal registry of integrations.

Who calls it: :mod:`pykueue.controllers.jobs.reconciler` drives any integration through these
protocols; each integration module (``job``, ``jobset``, ``pod``) ends with a conformance line
``_: type[GenericJob] = TheAdapter`` so mypy proves it implements the protocol.
Invariant: integrations never import each other; everything they share lives here.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, GroupVersionResource, Informer
from pykueue.controllers.config import KueueConfig

__all__ = [
    "ADMISSION_GATE",
    "JOB_MIN_PARALLELISM",
    "MAX_EXEC_TIME_LABEL",
    "POD_GROUP_LABEL",
    "POD_GROUP_TOTAL",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_LABEL",
    "Caches",
    "Finished",
    "GenericJob",
    "Integration",
    "JobKey",
    "JobWithPriorityClass",
    "JobWithReclaimablePods",
    "ObjectJob",
    "PodSetInfo",
    "apply_pod_set_info",
    "pod_set_infos",
    "restore_template",
    "workload_name",
]

JobKey = tuple[str, str]
"""(namespace, integration-specific name) — what an integration's work queue holds."""

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
JOB_MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
PODSET_LABEL = "kueue.x-k8s.io/podset"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
ADMISSION_GATED_BY = "kueue.x-k8s.io/admission-gated-by"
LOCAL_QUEUE_LABEL = "kueue.x-k8s.io/local-queue-name"
CLUSTER_QUEUE_LABEL = "kueue.x-k8s.io/cluster-queue-name"
PREBUILT_WORKLOAD = "kueue.x-k8s.io/prebuilt-workload-name"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class ObjectJob:
    """Accessors every dict-backed job adapter shares (Job, JobSet): identity, labels, suspension.

    Subclasses set ``API_VERSION``/``KIND``/``GROUP`` and add what is specific to their kind.
    """

    API_VERSION: str = ""
    KIND: str = ""
    GROUP: str = ""

    def __init__(self, obj: JSONDict) -> None:
        self.obj = obj
        self._meta: JSONDict = obj.get("metadata") or {}
        self._spec: JSONDict = obj.get("spec") or {}
        self._status: JSONDict = obj.get("status") or {}

    @property
    def key(self) -> JobKey:
        return (self.namespace, self._meta.get("name", ""))

    @property
    def namespace(self) -> str:
        return str(self._meta.get("namespace", ""))

    def labels(self) -> dict[str, str]:
        return dict(self._meta.get("labels") or {})

    def annotations(self) -> dict[str, str]:
        return dict(self._meta.get("annotations") or {})

    def queue_name(self) -> str:
        return self.labels().get(QUEUE_LABEL, "")

    def owner_references(self) -> list[JSONDict]:
        return [
            {
                "apiVersion": self.API_VERSION,
                "kind": self.KIND,
                "name": self._meta.get("name", ""),
                "uid": self._meta.get("uid", ""),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]

    def workload_name(self) -> str:
        return workload_name(self.KIND, self.GROUP, self._meta.get("name", ""), self._meta.get("uid", ""))

    def workload_annotations(self) -> dict[str, str]:
        return {}

    def ready_to_create(self) -> bool:
        return True

    def is_suspended(self) -> bool:
        return bool(self._spec.get("suspend"))


@dataclass(frozen=True, slots=True)
class Finished:
    succeeded: bool
    message: str


@dataclass(frozen=True, slots=True)
class PodSetInfo:
    """What starting a podSet injects when the job reconcile loop unsuspends a job: flavors' node labels
    and tolerations, count."""

    name: str
    count: int
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[JSONDict] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Caches:
    """Read-only informer caches an integration may consult (never a request)."""

    workloads: Informer
    local_queues: Informer
    namespaces: Informer
    flavors: Informer
    priority_classes: Informer
    workload_priority_classes: Informer


class GenericJob(Protocol):
    """One job-like thing that gets exactly one Workload (Kueue's ``GenericJob``)."""

    @property
    def key(self) -> JobKey: ...

    @property
    def namespace(self) -> str: ...

    def queue_name(self) -> str:
        """The ``queue-name`` label ("" when absent)."""
        ...

    def labels(self) -> dict[str, str]: ...

    def annotations(self) -> dict[str, str]: ...

    def owner_references(self) -> list[JSONDict]:
        """The ownerReferences the Workload gets (controller ref to the job; pods for pod groups)."""
        ...

    def workload_name(self) -> str: ...

    def workload_annotations(self) -> dict[str, str]: ...

    def ready_to_create(self) -> bool:
        """False while the job is incomplete (a pod group still missing members)."""
        ...

    def is_suspended(self) -> bool: ...

    def is_active(self) -> bool:
        """Some pod is still running (the reservation is released only once none is)."""
        ...

    def pod_sets(self) -> list[JSONDict]: ...

    def finished(self) -> Finished | None: ...

    def pods_ready(self) -> bool: ...

    async def run(self, client: Client, infos: list[PodSetInfo]) -> None:
        """Start: inject ``infos`` into the pod templates and unsuspend."""
        ...

    async def stop(self, client: Client, pod_sets: list[JSONDict]) -> bool:
        """Suspend and restore the templates from the Workload's podSets; True if anything changed."""
        ...


@runtime_checkable
class JobWithReclaimablePods(Protocol):
    def reclaimable_pods(self) -> list[JSONDict]: ...


@runtime_checkable
class JobWithPriorityClass(Protocol):
    def priority_class_name(self) -> str:
        """The integration's own priority class (before falling back to the pod template's)."""
        ...


@dataclass(frozen=True, slots=True)
class Integration:
    """One entry of :data:`INTEGRATIONS`: how the reconciler finds and builds this kind of job."""

    name: str
    """Kueue's framework name ("batch/job", "jobset.x-k8s.io/jobset", "pod")."""
    res: GroupVersionResource
    owner_kinds: frozenset[tuple[str, str]]
    """(apiVersion group, kind) of objects that own this integration's Workloads."""
    key_of: Callable[[JSONDict], JobKey | None]
    """Work-queue key for an object of ``res`` (None = not this integration's business)."""
    key_for_workload: Callable[[JSONDict, Informer], JobKey | None]
    load: Callable[[JobKey, Informer], GenericJob | None]
    """Build the adapter from the integration's informer cache (None = the job is gone)."""
    admission_mutator: Callable[[JSONDict, KueueConfig, Caches], JSONDict | None]
    """On create: suspend/gate a managed job (and default its queue); None = unchanged."""
    label_selector: str = ""


def workload_name(kind: str, group: str, owner_name: str, owner_uid: str) -> str:
    """``<lower(kind)>-<owner>`` cut to 247 chars + ``-`` + 5 hex of SHA1(kind, group, name, uid) (Kueue's naming)."""
    prefix = f"{kind.lower()}-{owner_name}"[:247]
    digest = hashlib.sha1("\n".join((kind, group, owner_name, owner_uid)).encode()).hexdigest()[:5]
    return f"{prefix}-{digest}"


def _flavor_spec(flavors: Informer, name: str) -> JSONDict:
    obj = flavors.get(name) or {}
    spec: JSONDict = obj.get("spec") or {}
    return spec


def queue_labels(workload: JSONDict) -> dict[str, str]:
    """The labels Kueue puts on the pods of an admitted workload (its ``AssignQueueLabelsForPods``,
    on by default): its LocalQueue, and its ClusterQueue when the name is a valid label value."""
    labels: dict[str, str] = {}
    local_queue = (workload.get("spec") or {}).get("queueName") or ""
    if local_queue:
        labels[LOCAL_QUEUE_LABEL] = local_queue
    cluster_queue = ((workload.get("status") or {}).get("admission") or {}).get("clusterQueue") or ""
    if cluster_queue and len(cluster_queue) <= 63 and _LABEL_VALUE.match(cluster_queue):
        labels[CLUSTER_QUEUE_LABEL] = cluster_queue
    return labels


def prebuilt_workload_name(job: GenericJob) -> str:
    """The Workload a job asks to adopt (``prebuilt-workload-name``, label or annotation), or ""."""
    return job.labels().get(PREBUILT_WORKLOAD) or job.annotations().get(PREBUILT_WORKLOAD) or ""


def pod_set_infos(workload: JSONDict, flavors: Informer) -> list[PodSetInfo]:
    """Per podSet of the admission: union of the assigned flavors' nodeLabels and tolerations, and
    the podset and queue labels."""
    infos = []
    admission = (workload.get("status") or {}).get("admission") or {}
    pod_sets = (workload.get("spec") or {}).get("podSets") or []
    queues = queue_labels(workload)
    counts = {ps.get("name", "main"): int(ps.get("count", 1)) for ps in pod_sets}
    for psa in admission.get("podSetAssignments") or []:
        name = psa.get("name", "main")
        selector: dict[str, str] = {}
        tolerations: list[JSONDict] = []
        for flavor in sorted(set((psa.get("flavors") or {}).values())):
            spec = _flavor_spec(flavors, flavor)
            selector.update(spec.get("nodeLabels") or {})
            for tol in spec.get("tolerations") or []:
                if tol not in tolerations:
                    tolerations.append(tol)
        count = psa.get("count")
        infos.append(
            PodSetInfo(
                name=name,
                count=int(count if count is not None else counts.get(name, 1)),
                node_selector=selector,
                tolerations=tolerations,
                labels={PODSET_LABEL: name, **queues},
            )
        )
    return infos


def apply_pod_set_info(template: JSONDict, info: PodSetInfo) -> JSONDict:
    """A copy of a pod template with the info merged in (selector keys and tolerations added)."""
    out = copy.deepcopy(template)
    meta = out.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), **info.labels}
    spec = out.setdefault("spec", {})
    if info.node_selector:
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **info.node_selector}
    if info.tolerations:
        tolerations = list(spec.get("tolerations") or [])
        for tol in info.tolerations:
            if tol not in tolerations:
                tolerations.append(tol)
        spec["tolerations"] = tolerations
    return out


def restore_template(template: JSONDict, original: JSONDict, keep_labels: tuple[str, ...] = ()) -> JSONDict:
    """A copy of ``template`` whose labels, annotations, nodeSelector, tolerations and scheduling
    gates are exactly the original's (the Workload keeps the job's template as it was created).
    ``keep_labels`` are system labels the Workload never stored (a Job's selector labels): they stay."""
    out = copy.deepcopy(template)
    meta = out.setdefault("metadata", {})
    ometa = original.get("metadata") or {}
    kept = {k: v for k, v in (meta.get("labels") or {}).items() if k in keep_labels}
    for field_name in ("labels", "annotations"):
        if ometa.get(field_name):
            meta[field_name] = copy.deepcopy(ometa[field_name])
        else:
            meta.pop(field_name, None)
    if kept:
        meta["labels"] = {**(meta.get("labels") or {}), **kept}
    spec = out.setdefault("spec", {})
    ospec = original.get("spec") or {}
    for field_name in ("nodeSelector", "tolerations", "schedulingGates"):
        if ospec.get(field_name):
            spec[field_name] = copy.deepcopy(ospec[field_name])
        else:
            spec.pop(field_name, None)
    return out


def template_for_workload(template: JSONDict, drop_labels: tuple[str, ...] = ()) -> JSONDict:
    """The pod template as the Workload stores it: only labels/annotations of the metadata, and each
    container's environment without duplicate names."""
    meta = template.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in drop_labels}
    out_meta: JSONDict = {}
    if labels:
        out_meta["labels"] = labels
    if meta.get("annotations"):
        out_meta["annotations"] = dict(meta["annotations"])
    spec = copy.deepcopy(template.get("spec") or {})
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or []:
            if isinstance(container, dict) and isinstance(container.get("env"), list):
                container["env"] = unique_env(container["env"])
    return {"metadata": out_meta, "spec": spec}


def unique_env(env: list[Any]) -> list[Any]:
    """One entry per variable name, as Kueue stores a pod set: the last definition wins (what the
    kubelet would run with), kept at the place the name first appeared."""
    last: dict[Any, Any] = {}
    for var in env:
        last[var.get("name") if isinstance(var, dict) else id(var)] = var
    return list(last.values())


def namespace_labels(caches: Caches, namespace: str) -> dict[str, str]:
    ns = caches.namespaces.get(namespace) or {}
    labels = dict((ns.get("metadata") or {}).get("labels") or {})
    labels.setdefault("kubernetes.io/metadata.name", namespace)
    return labels


def default_queue_and_manage(obj: JSONDict, config: KueueConfig, caches: Caches) -> tuple[JSONDict, bool]:
    """Shared webhook logic for job kinds (which jobs Kueue manages): returns (possibly labelled copy, managed?)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace", "")
    ns_matches = config.managed_jobs_namespace_selector.matches(namespace_labels(caches, namespace))
    labels = dict(meta.get("labels") or {})
    out = obj
    if QUEUE_LABEL not in labels and ns_matches and caches.local_queues.get("default", namespace) is not None:
        labels[QUEUE_LABEL] = "default"
        out = {**obj, "metadata": {**meta, "labels": labels}}
    if (
        PRIORITY_CLASS_LABEL not in labels
        and QUEUE_LABEL in labels
        and caches.workload_priority_classes.get("default") is not None
    ):
        labels[PRIORITY_CLASS_LABEL] = "default"
        out = {**out, "metadata": {**(out.get("metadata") or {}), "labels": labels}}
    # ManagedJobsNamespaceSelectorAlwaysRespected (GA): outside the selector nothing is managed
    managed = ns_matches and (QUEUE_LABEL in labels or config.manage_jobs_without_queue_name)
    return out, managed


def has_managed_owner(obj: JSONDict, owner_kinds: frozenset[tuple[str, str]]) -> bool:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        group = ref.get("apiVersion", "").rpartition("/")[0]
        if (group, ref.get("kind", "")) in owner_kinds:
            return True
    return False
