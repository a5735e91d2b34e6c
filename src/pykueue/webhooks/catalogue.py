"""Kueue's admission webhooks by name, path and resource: what ``pykueue controller`` serves.

Owned by ``webhooks/``. One :class:`Webhook` per Kueue webhook (``mjob.kb.io``, ``vclusterqueue.kb.io``,
...) with the path Kueue serves it at: ``/mutate-<group with "." as "-">-<version>-<kind lowercased>``
or ``/validate-...`` (the core group is empty: ``/mutate--v1-pod``). The webhook server routes by
these paths; whoever renders the webhook configurations (``pykueue install``) can read the same
list, so the two never disagree. The conversion webhook of Kueue's CRDs is at :data:`CONVERT_PATH`.

Invariant: pure data; the job webhooks listed for a configuration are those of its enabled
integrations only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["CONVERT_PATH", "WEBHOOKS", "Webhook", "webhook_path", "webhooks_for"]

CONVERT_PATH = "/convert"
_KUEUE = "kueue.x-k8s.io"


def webhook_path(mutating: bool, group: str, version: str, kind: str) -> str:
    """Kueue's (controller-runtime's) path for a webhook of ``group/version, kind``."""
    prefix = "mutate" if mutating else "validate"
    return f"/{prefix}-{group.replace('.', '-')}-{version}-{kind.lower()}"


@dataclass(frozen=True, slots=True)
class Webhook:
    """One admission webhook: Kueue's name, the resource it admits, and the operations it sees."""

    name: str
    mutating: bool
    group: str
    version: str
    kind: str
    plural: str
    operations: tuple[str, ...]
    subresources: tuple[str, ...] = ("",)
    integration: str = ""
    """The job integration (Kueue's framework name) this webhook belongs to; "" for Kueue's own kinds."""

    @property
    def path(self) -> str:
        return webhook_path(self.mutating, self.group, self.version, self.kind)

    @property
    def resource_key(self) -> str:
        """``plural.group`` (``pods`` for the core group), as admission hooks name resources."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_CREATE = ("CREATE",)
_WRITE = ("CREATE", "UPDATE")

WEBHOOKS: tuple[Webhook, ...] = (
    Webhook("mclusterqueue.kb.io", True, _KUEUE, "v1beta2", "ClusterQueue", "clusterqueues", _CREATE),
    Webhook("mresourceflavor.kb.io", True, _KUEUE, "v1beta2", "ResourceFlavor", "resourceflavors", _CREATE),
    Webhook("mworkload.kb.io", True, _KUEUE, "v1beta2", "Workload", "workloads", _CREATE),
    Webhook("vclusterqueue.kb.io", False, _KUEUE, "v1beta2", "ClusterQueue", "clusterqueues", _WRITE),
    Webhook("vcohort.kb.io", False, _KUEUE, "v1beta2", "Cohort", "cohorts", _WRITE),
    Webhook("vresourceflavor.kb.io", False, _KUEUE, "v1beta2", "ResourceFlavor", "resourceflavors", _WRITE),
    Webhook("vworkload.kb.io", False, _KUEUE, "v1beta2", "Workload", "workloads", _WRITE, ("", "status")),
    Webhook("mjob.kb.io", True, "batch", "v1", "Job", "jobs", _CREATE, integration="batch/job"),
    Webhook("vjob.kb.io", False, "batch", "v1", "Job", "jobs", _WRITE, integration="batch/job"),
    Webhook(
        "mjobset.kb.io",
        True,
        "jobset.x-k8s.io",
        "v1alpha2",
        "JobSet",
        "jobsets",
        _CREATE,
        integration="jobset.x-k8s.io/jobset",
    ),
    Webhook(
        "vjobset.kb.io",
        False,
        "jobset.x-k8s.io",
        "v1alpha2",
        "JobSet",
        "jobsets",
        _WRITE,
        integration="jobset.x-k8s.io/jobset",
    ),
    Webhook("mpod.kb.io", True, "", "v1", "Pod", "pods", _CREATE, integration="pod"),
)
"""Every webhook pykueue serves, in Kueue's order (its own kinds, then the job integrations)."""


def webhooks_for(integrations: Iterable[str]) -> list[Webhook]:
    """The webhooks served with these integrations enabled (Kueue's framework names)."""
    enabled = set(integrations)
    return [w for w in WEBHOOKS if not w.integration or w.integration in enabled]
