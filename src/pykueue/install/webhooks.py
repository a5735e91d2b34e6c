"""Kueue's admission webhooks as pykueue has them, and the two webhook configurations that call them.

Owned by ``install/``. :func:`admission_webhooks` derives the list from the admission logic the code
really has, so a new hook cannot be forgotten by the install:

- a validating webhook for each Kueue kind whose rules deny as a webhook
  (:data:`pykueue.api.kinds.kueue.kueue_kinds.VALIDATING_WEBHOOKS`: ``vclusterqueue.kb.io``, ...);
- a mutating webhook for each kind whose create gets the ``resource-in-use`` finalizer
  (:data:`pykueue.controllers.admission_hooks.FINALIZER_RESOURCES`) and for each Kueue kind with defaults beyond
  its schema (:data:`pykueue.api.kinds.kueue.kueue_kinds.DEFAULTING_WEBHOOKS`: ``mworkload.kb.io``);
- for each enabled job integration, a mutating webhook (its ``admission_mutator``: suspend or gate a
  managed job, default its queue) and, where it has label rules, a validating one
  (:data:`pykueue.controllers.admission_hooks.VALIDATING_JOB_WEBHOOKS`).

Each is served by ``pykueue controller`` at Kueue's path (``/mutate-batch-v1-job``,
``/validate-kueue-x-k8s-io-v1beta2-clusterqueue``, ``/mutate--v1-pod``) behind the Service
``pykueue-webhook-service`` (port 443). The job webhooks skip ``kube-system`` and the install
namespace, as Kueue's do; every webhook fails closed (``failurePolicy: Fail``) and has no side effects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pykueue.api.catalogue import build_catalogue
from pykueue.api.kinds.kueue.kueue_conversion import KUEUE_GROUP
from pykueue.api.kinds.kueue.kueue_kinds import DEFAULTING_WEBHOOKS, VALIDATING_WEBHOOKS
from pykueue.api.meta.kind_info import KindInfo
from pykueue.controllers.admission_hooks import FINALIZER_RESOURCES, VALIDATING_JOB_WEBHOOKS
from pykueue.controllers.jobs.registry import INTEGRATIONS
from pykueue.install.options import (
    CERTIFICATE,
    MUTATING_CONFIGURATION,
    VALIDATING_CONFIGURATION,
    WEBHOOK_SERVICE,
    InstallOptions,
)

__all__ = ["Webhook", "admission_webhooks", "cert_manager_annotations", "webhook_configurations", "webhook_path"]

JSONDict = dict[str, Any]

_STATUS_TOO = frozenset({"workloads.kueue.x-k8s.io"})
"""Kueue validates these kinds' ``/status`` writes too (``vworkload.kb.io`` guards the admission)."""


def webhook_path(mutating: bool, group: str, version: str, kind: str) -> str:
    """Kueue's (controller-runtime's) path: ``/mutate-<group, "." as "-">-<version>-<kind lowercased>``."""
    return f"/{'mutate' if mutating else 'validate'}-{group.replace('.', '-')}-{version}-{kind.lower()}"


@dataclass(frozen=True, slots=True)
class Webhook:
    """One admission webhook: Kueue's name, what it admits, and whether it is a job integration's."""

    name: str
    mutating: bool
    kind: KindInfo
    operations: tuple[str, ...]
    subresources: tuple[str, ...] = ("",)
    integration: str = ""
    """The job integration (Kueue's framework name) this webhook belongs to; "" for Kueue's own kinds."""

    @property
    def job(self) -> bool:
        return bool(self.integration)

    @property
    def path(self) -> str:
        return webhook_path(self.mutating, self.kind.group, self.kind.storage_version, self.kind.kind)


def admission_webhooks(frameworks: tuple[str, ...]) -> list[Webhook]:
    """Every webhook ``pykueue controller`` serves with these integrations: mutating first, then
    validating; Kueue's own kinds before the job integrations, each in the code's order."""
    catalogue = build_catalogue()

    def kind_of(resource_key: str) -> KindInfo:
        kind = catalogue.by_resource(resource_key)
        if kind is None:
            raise LookupError(f"{resource_key} is not in pykueue's catalogue")
        return kind

    def kueue(kind: str) -> KindInfo:
        found = catalogue.by_kind(KUEUE_GROUP, kind)
        if found is None:
            raise LookupError(f"{kind} is not in pykueue's catalogue")
        return found

    mutating = [
        Webhook(f"m{kind_of(r).kind.lower()}.kb.io", True, kind_of(r), ("CREATE",)) for r in FINALIZER_RESOURCES
    ]
    mutating += [Webhook(name, True, kueue(kind), ("CREATE",)) for kind, name in DEFAULTING_WEBHOOKS.items()]
    validating = [
        Webhook(
            name,
            False,
            kueue(kind),
            ("CREATE", "UPDATE"),
            ("", "status") if kueue(kind).resource_key in _STATUS_TOO else ("",),
        )
        for kind, name in VALIDATING_WEBHOOKS.items()
    ]
    for framework in frameworks:
        integration = INTEGRATIONS.get(framework)
        if integration is None:
            continue
        res = integration.res
        kind = kind_of(f"{res.plural}.{res.group}" if res.group else res.plural)
        mutating.append(Webhook(f"m{kind.kind.lower()}.kb.io", True, kind, ("CREATE",), integration=framework))
        if framework in VALIDATING_JOB_WEBHOOKS:
            name, _ = VALIDATING_JOB_WEBHOOKS[framework]
            validating.append(Webhook(name, False, kind, ("CREATE", "UPDATE"), integration=framework))
    return [*mutating, *validating]


def _rule(webhook: Webhook) -> JSONDict:
    plural = webhook.kind.plural
    return {
        "apiGroups": [webhook.kind.group],
        "apiVersions": [webhook.kind.storage_version],
        "operations": list(webhook.operations),
        "resources": [f"{plural}/{s}" if s else plural for s in webhook.subresources],
    }


def _entry(webhook: Webhook, namespace: str) -> JSONDict:
    entry: JSONDict = {
        "name": webhook.name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {
            "service": {"name": WEBHOOK_SERVICE, "namespace": namespace, "path": webhook.path, "port": 443}
        },
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "sideEffects": "None",
        "timeoutSeconds": 10,
        "rules": [_rule(webhook)],
    }
    if webhook.job:
        entry["namespaceSelector"] = {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", namespace]}
            ]
        }
    if webhook.mutating:
        entry["reinvocationPolicy"] = "Never"
    return entry


def cert_manager_annotations(options: InstallOptions) -> JSONDict:
    """What cert-manager's CA injector reads on the webhook configurations and the CRDs."""
    return {"cert-manager.io/inject-ca-from": f"{options.namespace}/{CERTIFICATE}"} if options.cert_manager else {}


def webhook_configurations(options: InstallOptions) -> list[JSONDict]:
    """The Mutating- and ValidatingWebhookConfiguration; ``caBundle`` is left to the controller
    (internal certificates) or to cert-manager's injector."""
    webhooks = admission_webhooks(options.queued_frameworks())
    out = []
    for kind, name, mutating in (
        ("MutatingWebhookConfiguration", MUTATING_CONFIGURATION, True),
        ("ValidatingWebhookConfiguration", VALIDATING_CONFIGURATION, False),
    ):
        meta: JSONDict = {"name": name, "labels": {"app.kubernetes.io/name": "pykueue"}}
        if annotations := cert_manager_annotations(options):
            meta["annotations"] = annotations
        out.append(
            {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": kind,
                "metadata": meta,
                "webhooks": [_entry(w, options.namespace) for w in webhooks if w.mutating is mutating],
            }
        )
    return out
