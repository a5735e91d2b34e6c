"""Kueue's integration framework names, which of them pykueue implements, and what each queues.

Owns the one table that maps a framework name of Kueue's ``Configuration``
(``integrations.frameworks``) to the kind it queues, so that the configuration loader can accept
every name Kueue accepts (and say which ones pykueue does not implement), and the warning about
labelled objects that nothing queues can say which framework would have queued them.

Who calls it: :mod:`pykueue.controllers.config` (parsing, defaults) and
:mod:`pykueue.controllers.unqueued` (the Warning event). Pure data, no I/O.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_FRAMEWORKS",
    "IMPLEMENTED",
    "KUEUE_FRAMEWORKS",
    "framework_for_kind",
]

KUEUE_FRAMEWORKS: dict[str, tuple[str, str]] = {
    "batch/job": ("batch", "Job"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "JobSet"),
    "pod": ("", "Pod"),
    "deployment": ("apps", "Deployment"),
    "statefulset": ("apps", "StatefulSet"),
    "leaderworkerset.x-k8s.io/leaderworkerset": ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    "kubeflow.org/mpijob": ("kubeflow.org", "MPIJob"),
    "kubeflow.org/paddlejob": ("kubeflow.org", "PaddleJob"),
    "kubeflow.org/pytorchjob": ("kubeflow.org", "PyTorchJob"),
    "kubeflow.org/tfjob": ("kubeflow.org", "TFJob"),
    "kubeflow.org/xgboostjob": ("kubeflow.org", "XGBoostJob"),
    "kubeflow.org/jaxjob": ("kubeflow.org", "JAXJob"),
    "kubeflow.org/mxjob": ("kubeflow.org", "MXJob"),
    "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org", "TrainJob"),
    "ray.io/rayjob": ("ray.io", "RayJob"),
    "ray.io/raycluster": ("ray.io", "RayCluster"),
    "ray.io/rayservice": ("ray.io", "RayService"),
    "workload.codeflare.dev/appwrapper": ("workload.codeflare.dev", "AppWrapper"),
    "sparkoperator.k8s.io/sparkapplication": ("sparkoperator.k8s.io", "SparkApplication"),
}
"""Every framework name Kueue's configuration accepts, with the (API group, kind) it queues."""

IMPLEMENTED = ("batch/job", "jobset.x-k8s.io/jobset", "pod")
"""The frameworks pykueue implements (Kueue's names); the others are accepted but queue nothing."""

DEFAULT_FRAMEWORKS = IMPLEMENTED
"""What ``pykueue up`` enables without ``--config``: of the frameworks Kueue's Helm chart and
release manifests enable (what Kueue users actually install), the ones pykueue implements. Kueue's
code default (``batch/job`` alone) would let a labelled JobSet or pod group run outside every quota."""

_BY_KIND = {kind: name for name, kind in KUEUE_FRAMEWORKS.items()}


def framework_for_kind(group: str, kind: str) -> str | None:
    """The framework that queues objects of this kind, or None when no Kueue integration does."""
    return _BY_KIND.get((group, kind))
