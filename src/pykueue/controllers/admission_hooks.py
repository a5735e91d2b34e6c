"""Admission hooks the embedded API server installs for the controllers (Kueue's webhooks).

Owns: turning each integration's create-time mutation (suspend a managed Job/JobSet, gate a managed
Pod, default the queue to LocalQueue ``default``), the validating rules of Kueue's job webhooks
(``vjob.kb.io``, ``vjobset.kb.io``: queue-name, priority-class, max-exec-time... labels, whose
denials reach the client as webhook denials, 403) and the finalizer-adding mutations of
ClusterQueues and ResourceFlavors into :class:`~pykueue.registry.admission.AdmissionHook` records.

Who calls it: :meth:`ControllerManager.admission_hooks`, whose result ``cli/`` hands to
``Registry.add_admission_hook`` in embedded mode. Hooks read only informer caches (never a request),
so they are synchronous and cheap.
Invariant: hooks never mutate their input (the registry hands them a private copy anyway) and
return ``None`` when nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pykueue.api.kinds.kueue.job_webhook import validate_job_labels, validate_managed_job
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.controllers.conditions import FINALIZER
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.jobs.framework import QUEUE_LABEL, Caches, Integration
from pykueue.registry.admission import AdmissionHook, AdmissionRequest

__all__ = ["FINALIZER_RESOURCES", "VALIDATING_JOB_WEBHOOKS", "build_hooks"]


def _resource_key(integration: Integration) -> str:
    res = integration.res
    return f"{res.plural}.{res.group}" if res.group else res.plural


def _add_finalizer(request: AdmissionRequest) -> JSONDict | None:
    obj = request.object
    meta = obj.get("metadata") or {}
    finalizers = list(meta.get("finalizers") or [])
    if FINALIZER in finalizers:
        return None
    return {**obj, "metadata": {**meta, "finalizers": [*finalizers, FINALIZER]}}


_Rules = Callable[[JSONDict, JSONDict | None], list[FieldError]]
VALIDATING_JOB_WEBHOOKS: dict[str, tuple[str, _Rules]] = {
    "batch/job": ("vjob.kb.io", validate_managed_job),
    "jobset.x-k8s.io/jobset": ("vjobset.kb.io", validate_job_labels),
}
"""Kueue's validating job webhooks (by Kueue's names) and the label rules each applies, by integration."""

FINALIZER_RESOURCES = ("clusterqueues.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io")
"""The kinds whose create gets the ``resource-in-use`` finalizer from a mutating hook (Kueue's
``mclusterqueue.kb.io``, ``mresourceflavor.kb.io``)."""


def _validator(webhook: str, rules: _Rules, config: KueueConfig) -> Callable[[AdmissionRequest], list[FieldError]]:
    def validate(request: AdmissionRequest) -> list[FieldError]:
        obj, old = request.object, request.old_object
        managed = config.manage_jobs_without_queue_name or any(
            QUEUE_LABEL in ((o.get("metadata") or {}).get("labels") or {}) for o in (obj, old) if o is not None
        )
        if not managed:
            return []
        return [replace(e, webhook=webhook) for e in rules(obj, old)]

    return validate


def build_hooks(integrations: list[Integration], config: KueueConfig, caches: Caches) -> list[AdmissionHook]:
    hooks = [
        AdmissionHook(
            name=f"kueue-{resource.split('.')[0][:-1]}-finalizer",
            resources=frozenset({resource}),
            operations=frozenset({"CREATE"}),
            mutate=_add_finalizer,
        )
        for resource in FINALIZER_RESOURCES
    ]
    for integration in integrations:
        mutator = integration.admission_mutator

        def mutate(request: AdmissionRequest, mutator: Any = mutator) -> JSONDict | None:
            result: JSONDict | None = mutator(request.object, config, caches)
            return result

        hooks.append(
            AdmissionHook(
                name=f"kueue-{integration.name}",
                resources=frozenset({_resource_key(integration)}),
                operations=frozenset({"CREATE"}),
                mutate=mutate,
            )
        )
        if integration.name in VALIDATING_JOB_WEBHOOKS:
            webhook, rules = VALIDATING_JOB_WEBHOOKS[integration.name]
            hooks.append(
                AdmissionHook(
                    name=webhook,
                    resources=frozenset({_resource_key(integration)}),
                    validate=_validator(webhook, rules, config),
                )
            )
    return hooks
