"""Admission hooks the embedded API server installs for the controllers (Kueue's webhooks).

Owns: turning each integration's create-time mutation (suspend a managed Job/JobSet, gate a managed
Pod, default the queue to LocalQueue ``default``) and the finalizer-adding mutations of
ClusterQueues and ResourceFlavors into :class:`~pykueue.registry.admission.AdmissionHook` records.

Who calls it: :meth:`ControllerManager.admission_hooks`, whose result ``cli/`` hands to
``Registry.add_admission_hook`` in embedded mode. Hooks read only informer caches (never a request),
so they are synchronous and cheap.
Invariant: hooks never mutate their input (the registry hands them a private copy anyway) and
return ``None`` when nothing changes.
"""

from __future__ import annotations

from typing import Any

from pykueue.controllers.conditions import FINALIZER
from pykueue.controllers.config import KueueConfig
from pykueue.controllers.jobs.framework import Caches, Integration
from pykueue.registry.admission import AdmissionHook, AdmissionRequest

__all__ = ["build_hooks"]

JSONDict = dict[str, Any]


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


def build_hooks(integrations: list[Integration], config: KueueConfig, caches: Caches) -> list[AdmissionHook]:
    hooks = [
        AdmissionHook(name="kueue-clusterqueue-finalizer", resources=frozenset({"clusterqueues.kueue.x-k8s.io"}),
                      operations=frozenset({"CREATE"}), mutate=_add_finalizer),
        AdmissionHook(name="kueue-resourceflavor-finalizer",
                      resources=frozenset({"resourceflavors.kueue.x-k8s.io"}),
                      operations=frozenset({"CREATE"}), mutate=_add_finalizer),
    ]
    for integration in integrations:
        mutator = integration.admission_mutator

        def mutate(request: AdmissionRequest, mutator: Any = mutator) -> JSONDict | None:
            result: JSONDict | None = mutator(request.object, config, caches)
            return result

        hooks.append(AdmissionHook(name=f"kueue-{integration.name}", resources=frozenset({_resource_key(integration)}),
                                   operations=frozenset({"CREATE"}), mutate=mutate))
    return hooks
