"""The plain Pod integration: single pods and pod groups (``kueue.x-k8s.io/pod-group-name`` +
``kueue.x-k8s.io/pod-group-total-count``).

Owns: the Pod adapter (:class:`PodGroup`, a single pod being a group of one) and the create-time
admission mutation that gates a managed pod with the scheduling gate ``kueue.x-k8s.io/admission``
(and labels it ``kueue.x-k8s.io/managed: "true"``; a group member also gets its role, the
``kueue.x-k8s.io/role-hash`` annotation). A pod group's Workload is named after the group and
created only once all ``total-count`` pods exist; pods with the same role share one podSet.
Admission removes the gate and injects the flavors' node labels/tolerations; stopping deletes the
running pods (a pod cannot be suspended).

Who calls it: the generic job reconciler through :data:`INTEGRATION`; the registry via the
manager's admission hooks.
Invariant: a gated pod never runs; the gate is removed only for a group whose Workload is admitted.

Deliberate difference from Kueue: Kueue keeps an evicted group's Workload and waits for replacement
pods (``WaitingForReplacementPods``); pykueue deletes the Workload once the stopped pods are gone
(plain pods have no controller that would recreate them). API servers that refuse to add a
nodeSelector to a gated pod get the gate removed without it (logged).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging

import orjson

from pykueue.api.meta.errors import Invalid, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.client import Client, Informer
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.jobs.framework import (
    ADMISSION_GATE,
    POD_GROUP_LABEL,
    POD_GROUP_TOTAL,
    QUEUE_LABEL,
    Caches,
    Finished,
    GenericJob,
    Integration,
    JobKey,
    PodSetInfo,
    apply_pod_set_info,
    default_queue_and_manage,
    namespace_labels,
    template_for_workload,
    workload_name,
)
from pykueue.controllers.resource_names import PODS

__all__ = ["INTEGRATION", "ROLE_HASH", "PodGroup", "mutate_on_create"]

log = logging.getLogger(__name__)
MANAGED_LABEL = "kueue.x-k8s.io/managed"
ROLE_HASH = "kueue.x-k8s.io/role-hash"
GROUP_PREFIX = "group:"
TERMINAL = ("Succeeded", "Failed")


def _meta(obj: JSONDict) -> JSONDict:
    meta: JSONDict = obj.get("metadata") or {}
    return meta


def _phase(pod: JSONDict) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _gated(pod: JSONDict) -> bool:
    return any(g.get("name") == ADMISSION_GATE for g in (pod.get("spec") or {}).get("schedulingGates") or [])


def _role(pod: JSONDict) -> str:
    """A shape hash: pods with equal requests and placement constraints share a podSet. The
    ``role-hash`` annotation the webhook wrote on a group's pod at creation is its role from then
    on (later edits of the pod, such as the flavor's node selector at admission, do not move it)."""
    written = (_meta(pod).get("annotations") or {}).get(ROLE_HASH)
    if isinstance(written, str) and written:
        return written
    spec = pod.get("spec") or {}
    shape = {
        "containers": [{"resources": c.get("resources") or {}} for c in spec.get("containers") or []],
        "initContainers": [{"resources": c.get("resources") or {}} for c in spec.get("initContainers") or []],
        "nodeSelector": spec.get("nodeSelector") or {},
        "tolerations": spec.get("tolerations") or [],
        "priorityClassName": spec.get("priorityClassName") or "",
    }
    return hashlib.sha256(orjson.dumps(shape, option=orjson.OPT_SORT_KEYS)).hexdigest()[:8]


def _pod_template(pod: JSONDict) -> JSONDict:
    template = template_for_workload({"metadata": _meta(pod), "spec": pod.get("spec") or {}})
    template["spec"].pop("nodeName", None)
    template["metadata"].pop("annotations", None)
    return template


class PodGroup:
    def __init__(self, key: JobKey, pods: list[JSONDict]) -> None:
        self._key = key
        self.pods = sorted(pods, key=lambda p: _meta(p).get("name", ""))
        self.group = key[1][len(GROUP_PREFIX) :] if key[1].startswith(GROUP_PREFIX) else ""

    @property
    def key(self) -> JobKey:
        return self._key

    @property
    def namespace(self) -> str:
        return self._key[0]

    def labels(self) -> dict[str, str]:
        return dict(_meta(self.pods[0]).get("labels") or {})

    def annotations(self) -> dict[str, str]:
        return dict(_meta(self.pods[0]).get("annotations") or {})

    def queue_name(self) -> str:
        return self.labels().get(QUEUE_LABEL, "")

    def total(self) -> int:
        if not self.group:
            return 1
        raw = (_meta(self.pods[0]).get("annotations") or {}).get(POD_GROUP_TOTAL, "")
        return int(raw) if raw.isdigit() and int(raw) > 0 else len(self.pods)

    def owner_references(self) -> list[JSONDict]:
        return [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": _meta(p).get("name", ""),
                "uid": _meta(p).get("uid", ""),
                "controller": not self.group,
                "blockOwnerDeletion": True,
            }
            for p in self.pods
        ]

    def workload_name(self) -> str:
        if self.group:
            return self.group
        meta = _meta(self.pods[0])
        return workload_name("Pod", "", meta.get("name", ""), meta.get("uid", ""))

    def workload_annotations(self) -> dict[str, str]:
        return {"kueue.x-k8s.io/is-group-workload": "true"} if self.group else {}

    def ready_to_create(self) -> bool:
        return len(self.pods) >= self.total()

    def _live(self) -> list[JSONDict]:
        return [p for p in self.pods if _phase(p) not in TERMINAL]

    def is_suspended(self) -> bool:
        live = self._live()
        return not live or any(_gated(p) for p in live)

    def is_active(self) -> bool:
        return any(not _gated(p) for p in self._live())

    def _roles(self) -> dict[str, list[JSONDict]]:
        roles: dict[str, list[JSONDict]] = {}
        for pod in self.pods:
            roles.setdefault(_role(pod) if self.group else "main", []).append(pod)
        return roles

    def pod_sets(self) -> list[JSONDict]:
        return [
            {"name": name, "count": len(pods), "template": _pod_template(pods[0])}
            for name, pods in sorted(self._roles().items())
        ]

    def finished(self) -> Finished | None:
        if len(self.pods) < self.total() or self._live():
            return None
        failed = [p for p in self.pods if _phase(p) == "Failed"]
        if failed:
            status = failed[0].get("status") or {}
            return Finished(False, status.get("message") or status.get("reason") or "Pod failed")
        return Finished(True, "Pods succeeded" if self.group else "Pod succeeded")

    def pods_ready(self) -> bool:
        for pod in self.pods:
            if _phase(pod) == "Succeeded":
                continue
            conds = (pod.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds):
                return False
        return len(self.pods) >= self.total()

    async def run(self, client: Client, infos: list[PodSetInfo]) -> None:
        by_name = {i.name: i for i in infos}
        for role, pods in self._roles().items():
            info = by_name.get(role)
            for pod in pods:
                if not _gated(pod):
                    continue
                spec = pod.get("spec") or {}
                gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") != ADMISSION_GATE]
                patch: JSONDict = {"spec": {"schedulingGates": gates or None}}
                if info is not None:
                    merged = apply_pod_set_info(
                        {"metadata": {"labels": _meta(pod).get("labels") or {}}, "spec": spec}, info
                    )
                    patch["metadata"] = {"labels": merged["metadata"]["labels"]}
                    if merged["spec"].get("nodeSelector"):
                        patch["spec"]["nodeSelector"] = merged["spec"]["nodeSelector"]
                    if merged["spec"].get("tolerations"):
                        patch["spec"]["tolerations"] = merged["spec"]["tolerations"]
                with contextlib.suppress(NotFound):
                    try:
                        await client.patch(PODS, _meta(pod)["name"], patch, namespace=self.namespace)
                    except Invalid:
                        # API servers that predate mutable scheduling directives of gated pods refuse the
                        # nodeSelector: ungate anyway (the flavor is then not pinned for this pod)
                        log.warning(
                            "pod %s/%s: node selector refused; removing the gate only",
                            self.namespace,
                            _meta(pod)["name"],
                        )
                        patch["spec"].pop("nodeSelector", None)
                        await client.patch(PODS, _meta(pod)["name"], patch, namespace=self.namespace)

    async def stop(self, client: Client, pod_sets: list[JSONDict]) -> bool:
        stopped = False
        for pod in self._live():
            if _gated(pod):
                continue
            try:
                await client.delete(PODS, _meta(pod)["name"], self.namespace)
                stopped = True
            except NotFound:
                pass
        return stopped


def mutate_on_create(obj: JSONDict, config: KueueConfig, caches: Caches) -> JSONDict | None:
    """Gate a managed pod (queue-name label, or manageJobsWithoutQueueName) not owned by a controller."""
    meta = _meta(obj)
    if any(ref.get("controller") for ref in meta.get("ownerReferences") or []):
        return None
    namespace = meta.get("namespace", "")
    if not config.managed_jobs_namespace_selector.matches(namespace_labels(caches, namespace)):
        return None
    out, managed = default_queue_and_manage(obj, config, caches)
    if not managed:
        return None
    spec = dict(out.get("spec") or {})
    gates = list(spec.get("schedulingGates") or [])
    if not any(g.get("name") == ADMISSION_GATE for g in gates):
        gates.append({"name": ADMISSION_GATE})
    spec["schedulingGates"] = gates
    labels = {**(_meta(out).get("labels") or {}), MANAGED_LABEL: "true"}
    meta = {**_meta(out), "labels": labels}
    if labels.get(POD_GROUP_LABEL):  # as Kueue's pod webhook: a group member's role, fixed at creation
        meta["annotations"] = {**(meta.get("annotations") or {}), ROLE_HASH: _role({**out, "spec": spec})}
    return {**out, "metadata": meta, "spec": spec}


def _key_of(obj: JSONDict) -> JobKey | None:
    meta = _meta(obj)
    if (meta.get("labels") or {}).get(MANAGED_LABEL) != "true":
        return None
    group = (meta.get("labels") or {}).get(POD_GROUP_LABEL, "")
    return (meta.get("namespace", ""), GROUP_PREFIX + group if group else meta.get("name", ""))


def _key_for_workload(wl: JSONDict, pods: Informer) -> JobKey | None:
    meta = _meta(wl)
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("kind") == "Pod" and r.get("apiVersion") == "v1"]
    if not refs:
        return None
    if (meta.get("annotations") or {}).get("kueue.x-k8s.io/is-group-workload") == "true":
        return (meta.get("namespace", ""), GROUP_PREFIX + meta.get("name", ""))
    return (meta.get("namespace", ""), refs[0].get("name", ""))


def _load(key: JobKey, pods: Informer) -> GenericJob | None:
    namespace, name = key
    if name.startswith(GROUP_PREFIX):
        group = name[len(GROUP_PREFIX) :]
        members = [
            p
            for p in pods.list(namespace)
            if (_meta(p).get("labels") or {}).get(POD_GROUP_LABEL) == group
            and (_meta(p).get("labels") or {}).get(MANAGED_LABEL) == "true"
        ]
        return PodGroup(key, members) if members else None
    pod = pods.get(name, namespace)
    if pod is None or (_meta(pod).get("labels") or {}).get(MANAGED_LABEL) != "true":
        return None
    return PodGroup(key, [pod])


INTEGRATION = Integration(
    name="pod",
    res=PODS,
    owner_kinds=frozenset({("", "Pod")}),
    key_of=_key_of,
    key_for_workload=_key_for_workload,
    load=_load,
    admission_mutator=mutate_on_create,
)

_conforms: type[GenericJob] = PodGroup
