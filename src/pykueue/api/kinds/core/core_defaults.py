"""Defaults of the built-in kinds, as kube-apiserver's ``SetDefaults_*`` functions apply them.

Owns Pod / PodSpec / Container defaults (restartPolicy, dnsPolicy, schedulerName, grace period,
imagePullPolicy, termination message, port protocol), batch/v1 Job defaults (parallelism,
completions, backoffLimit, completionMode, suspend, podReplacementPolicy; the generated selector
and labels via :func:`generate_job_selector`, for the registry at create), PriorityClass, Secret
and JobSet defaults. Called by :mod:`pykueue.api.schema.defaults` on a private copy: functions here
mutate the dict they are given.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.json_types import JSONDict

__all__ = [
    "default_job",
    "default_jobset",
    "default_pod",
    "default_pod_spec",
    "default_priority_class",
    "default_secret",
    "generate_job_selector",
    "image_pull_policy",
]

_MAX_INT32 = 2**31 - 1


def image_pull_policy(image: str) -> str:
    """``Always`` for ``:latest`` or untagged images, else ``IfNotPresent`` (digests included)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or last.endswith(":latest"):
        return "Always"
    return "IfNotPresent"


def _dict_at(parent: JSONDict, key: str) -> JSONDict | None:
    """``parent[key]``, created as ``{}`` when absent; ``None`` when it holds a non-object (left alone)."""
    value = parent.setdefault(key, {})
    return value if isinstance(value, dict) else None


def _default_container(container: JSONDict) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    if isinstance(container.get("image"), str) and "imagePullPolicy" not in container:
        container["imagePullPolicy"] = image_pull_policy(container["image"])
    ports = container.get("ports")
    for port in ports if isinstance(ports, list) else []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    container.setdefault("resources", {})


def default_pod_spec(spec: JSONDict) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        for container in containers if isinstance(containers, list) else []:
            if isinstance(container, dict):
                _default_container(container)


def _requests_from_limits(spec: JSONDict) -> None:
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        for container in containers if isinstance(containers, list) else []:
            if not isinstance(container, dict):
                continue
            resources = container.get("resources")
            if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
                continue
            requests = resources.setdefault("requests", {})
            if isinstance(requests, dict):
                for name, value in resources["limits"].items():
                    requests.setdefault(name, value)


def default_pod(obj: JSONDict) -> None:
    spec = _dict_at(obj, "spec")
    if spec is not None:
        default_pod_spec(spec)
        _requests_from_limits(spec)
        if "priorityClassName" in spec or "priority" in spec:
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _default_template(template: Any) -> None:
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def default_job_spec(spec: JSONDict) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = _MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if "podReplacementPolicy" not in spec:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"
    _default_template(spec.get("template"))


def default_job(obj: JSONDict) -> None:
    spec = _dict_at(obj, "spec")
    if spec is not None:
        default_job_spec(spec)


def generate_job_selector(obj: JSONDict, uid: str) -> None:
    """What kube-apiserver's Job strategy does on create (not defaulting: it needs the new uid).

    Unless ``manualSelector`` is true, sets ``spec.selector`` to the controller-uid label and adds the
    matching labels to the pod template. The registry calls it once, when it assigns the uid;
    calling it from ``default`` would change the (immutable) selector on the first update.
    """
    spec = _dict_at(obj, "spec")
    if spec is None or spec.get("manualSelector") or "selector" in spec:
        return
    template = _dict_at(spec, "template")
    meta = _dict_at(template, "metadata") if template is not None else None
    labels = _dict_at(meta, "labels") if meta is not None else None
    if labels is None:
        return
    name = obj["metadata"].get("name") if isinstance(obj.get("metadata"), dict) else None
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels.setdefault("batch.kubernetes.io/controller-uid", uid)
    labels.setdefault("controller-uid", uid)
    if name:
        labels.setdefault("batch.kubernetes.io/job-name", name)
        labels.setdefault("job-name", name)


def default_priority_class(obj: JSONDict) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def default_secret(obj: JSONDict) -> None:
    obj.setdefault("type", "Opaque")


def default_jobset(obj: JSONDict) -> None:
    """JobSet's webhook defaults (jobset.x-k8s.io/v1alpha2)."""
    spec = _dict_at(obj, "spec")
    if spec is None:
        return
    for key, field, value in (
        ("successPolicy", "operator", "All"),
        ("startupPolicy", "startupPolicyOrder", "AnyOrder"),
        ("network", "enableDNSHostnames", True),
        ("network", "publishNotReadyAddresses", True),
    ):
        target = _dict_at(spec, key)
        if target is not None:
            target.setdefault(field, value)
    spec.setdefault("suspend", False)
    replicated_jobs = spec.get("replicatedJobs")
    for replicated in replicated_jobs if isinstance(replicated_jobs, list) else []:
        if not isinstance(replicated, dict):
            continue
        replicated.setdefault("replicas", 1)
        template = _dict_at(replicated, "template")
        job_spec = _dict_at(template, "spec") if template is not None else None
        if job_spec is None:
            continue
        job_spec.setdefault("completionMode", "Indexed")
        pod_template = job_spec.get("template")
        if isinstance(pod_template, dict) and isinstance(pod_template.get("spec"), dict):
            pod_template["spec"].setdefault("restartPolicy", "OnFailure")
        default_job_spec(job_spec)
