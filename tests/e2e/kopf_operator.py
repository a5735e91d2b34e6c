"""A small, ordinary kopf operator for Kueue ClusterQueues and LocalQueues, run by ``test_kopf_operator.py``.

Owns nothing in pykueue: it is a *third-party controller* as a user would write it, run unchanged with
``kopf run --standalone --all-namespaces tests/e2e/kopf_operator.py`` against ``pykueue up``. Every handler
leaves a trace the test can observe with the real kubectl (an annotation/label written back by kopf's own
PATCH, an Event posted by ``kopf.info``), so a server behaviour kopf depends on that is missing shows up as a
missing trace. Nothing here knows it talks to pykueue rather than Kubernetes; the two environment variables
only pick kopf settings and label which operator run left a trace.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import kopf

GROUP, VERSION, PLURAL = "kueue.x-k8s.io", "v1beta2", "clusterqueues"
LOCAL = "localqueues"
PREFIX = "e2e.pykueue.io"
RUN = os.environ.get("E2E_KOPF_RUN", "1")


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Post INFO events too (kopf's default posts them already; explicit so the test does not depend on it)
    and keep the watch requests short (``timeoutSeconds``) so every watch is re-opened from its last
    resourceVersion several times within one test."""
    settings.posting.level = logging.INFO
    settings.watching.server_timeout = 2
    settings.watching.client_timeout = 10
    if os.environ.get("E2E_KOPF_SCANNING") == "off":
        settings.scanning.disabled = True


@kopf.on.create(GROUP, VERSION, PLURAL)
def created(name: str, body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    """Mark the object (metadata patch) and announce it (Event)."""
    patch.metadata.setdefault("annotations", {})[f"{PREFIX}/observed-by"] = "kopf"
    patch.metadata.setdefault("labels", {})[f"{PREFIX}/handled"] = "created"
    kopf.info(body, reason="KopfObserved", message=f"kopf saw ClusterQueue {name}")


@kopf.on.resume(GROUP, VERSION, PLURAL)
def resumed(name: str, body: kopf.Body, **_: Any) -> None:
    """An operator (re)start finds the object in its initial LIST: announce it, do not re-create."""
    kopf.info(body, reason="KopfResumed", message=f"kopf resumed ClusterQueue {name}")


@kopf.on.create(GROUP, VERSION, LOCAL)
def local_created(name: str, namespace: str | None, body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    """A namespaced kind: the patch goes to its namespaced URL, the Event into its namespace."""
    patch.metadata.setdefault("annotations", {})[f"{PREFIX}/observed-by"] = "kopf"
    kopf.info(body, reason="KopfObserved", message=f"kopf saw LocalQueue {namespace}/{name}")


@kopf.on.resume(GROUP, VERSION, LOCAL)
def local_resumed(patch: kopf.Patch, **_: Any) -> None:
    """Record which operator run found the LocalQueue already existing."""
    patch.metadata.setdefault("annotations", {})[f"{PREFIX}/resumed-by-run"] = RUN


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.queueingStrategy")
def strategy_changed(old: Any, new: Any, body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    """React to one spec field changing: record old -> new and post an Event."""
    patch.metadata.setdefault("annotations", {})[f"{PREFIX}/strategy"] = f"{old}->{new}"
    kopf.info(body, reason="KopfStrategyChanged", message=f"queueingStrategy {old} -> {new}")


@kopf.on.field(GROUP, VERSION, PLURAL, field="spec.cohortName")
def cohort_changed(old: Any, new: Any, patch: kopf.Patch, **_: Any) -> None:
    """A field handler (fires on create too when the field is set, and on every change of it)."""
    patch.metadata.setdefault("annotations", {})[f"{PREFIX}/cohort"] = f"{old or ''}->{new or ''}"


@kopf.timer(GROUP, VERSION, PLURAL, interval=0.5, idle=0.5)
def tick(body: kopf.Body, patch: kopf.Patch, **_: Any) -> None:
    """A timer: once the object has been quiet for a moment, stamp it once (no patch when already stamped)."""
    if f"{PREFIX}/ticked" not in body.metadata.annotations:
        patch.metadata.setdefault("annotations", {})[f"{PREFIX}/ticked"] = "yes"


@kopf.on.delete(GROUP, VERSION, PLURAL)
def deleted(name: str, body: kopf.Body, **_: Any) -> None:
    """A mandatory delete handler: kopf guards the object with its finalizer until this has run."""
    kopf.info(body, reason="KopfDeleted", message=f"kopf handled deletion of ClusterQueue {name}")
