"""A small, ordinary kopf operator for a custom kind (``widgets.example.com``), run by
``test_custom_resources.py``.

A third-party controller as a user would write it, for a kind that exists only because a test applied
its CustomResourceDefinition: kopf discovers the kind (and its ``status`` subresource) from the server,
and every handler leaves a trace the test reads back with the real kubectl: an annotation (a metadata
patch), a handler result in ``status`` (a patch to the ``status`` subresource), ``status.replicas``
following ``spec.replicas`` (so the ``scale`` subresource reports it), and an Event.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

GROUP, VERSION, PLURAL = "example.com", "v1", "widgets"
PREFIX = "e2e.pykueue.io"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Post INFO events, and keep watch requests short so each is re-opened from its resourceVersion."""
    settings.posting.level = logging.INFO
    settings.watching.server_timeout = 2
    settings.watching.client_timeout = 10


@kopf.on.create(GROUP, VERSION, PLURAL)
def created(name: str, spec: kopf.Spec, body: kopf.Body, patch: kopf.Patch, **_: Any) -> dict[str, str]:
    """Mark the widget, mirror its replicas into status, announce it; the result lands in status.created."""
    patch.metadata.setdefault("annotations", {})[f"{PREFIX}/size-seen"] = str(spec.get("size"))
    patch.status["replicas"] = spec.get("replicas", 0)
    kopf.info(body, reason="WidgetObserved", message=f"kopf saw Widget {name}")
    return {"message": f"a {spec.get('size')} widget"}


@kopf.on.field(GROUP, VERSION, PLURAL, field="spec.replicas")
def rescaled(new: Any, patch: kopf.Patch, **_: Any) -> None:
    """``kubectl scale`` changes spec.replicas: report it as the current count."""
    patch.status["replicas"] = new or 0


@kopf.on.delete(GROUP, VERSION, PLURAL)
def deleted(name: str, body: kopf.Body, **_: Any) -> None:
    """A delete handler: kopf guards each widget with its finalizer until this has run."""
    kopf.info(body, reason="WidgetDeleted", message=f"kopf handled deletion of Widget {name}")
