"""API semantics without HTTP: the :class:`Registry` every write goes through (see ``registry.py``)."""

from pykueue.registry.admission import AdmissionHook, AdmissionRequest
from pykueue.registry.resource_registry import DEFAULT_NAMESPACES, Registry

__all__ = ["DEFAULT_NAMESPACES", "AdmissionHook", "AdmissionRequest", "Registry"]
