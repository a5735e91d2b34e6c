"""The record that describes one served kind: :class:`KindInfo` (and its printer columns).

Owned by ``api/meta``. Each kind is described once by a :class:`KindInfo`; the API server builds
discovery, OpenAPI, tables and routes from the records of the catalogue it is handed
(:mod:`pykueue.api.catalogue`), and the registry calls the kind's ``default`` and ``validate``
hooks before anything reaches the store. Kueue's kinds are served as CustomResourceDefinitions
generated from the same records (``pykueue install`` renders them). The records of the kinds
themselves live in :mod:`pykueue.api.kinds`.

Contract (other layers rely on it):
- ``validate(obj, old)`` returns a list of :class:`FieldError` (empty = valid); ``old`` is the
  stored object on update, ``None`` on create. It never raises for bad user input.
- ``default(obj)`` returns a new dict with defaults filled in; it never mutates its argument (untouched
  fields may be shared with it).
- ``convert(obj, to_version)`` translates between served versions (hub = storage version).
- ``schema`` is the OpenAPI v3 schema of the whole object (with descriptions), per version.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy

__all__ = ["STORED_FORM", "KindInfo", "PrinterColumn", "version_setter"]

STORED_FORM = "<stored>"
"""The version a view kind's ``convert`` takes to mean "the form its objects are stored in"."""


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry; ``priority`` 1 means shown only with ``-o wide``."""

    name: str
    type: str
    json_path: str
    priority: int = 0
    description: str = ""
    format: str = ""


def _no_errors(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    return []


def _identity(obj: JSONDict) -> JSONDict:
    return obj


def _same(obj: JSONDict, to_version: str) -> JSONDict:
    return {
        **obj,
        "apiVersion": obj["apiVersion"].rsplit("/", 1)[0] + "/" + to_version
        if "/" in obj.get("apiVersion", "")
        else to_version,
    }


@dataclass(frozen=True, slots=True)
class KindInfo:
    group: str
    """"" for the core group."""
    kind: str
    plural: str
    singular: str
    versions: tuple[str, ...]
    """Served versions, the storage version first."""
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    """E.g. ("status",) or ("status", "log") for pods."""
    printer_columns: Mapping[str, tuple[PrinterColumn, ...]] = field(default_factory=dict)
    """Per version; kinds without columns get kubectl's default NAME, AGE."""
    schema: Mapping[str, JSONDict] = field(default_factory=dict)
    """OpenAPI v3 schema per version."""
    deprecated_versions: Mapping[str, str] = field(default_factory=dict)
    """version -> deprecation warning text."""
    is_crd: bool = False
    """True for kinds served as CustomResourceDefinitions (Kueue's, JobSet's)."""
    selectable_fields: tuple[str, ...] = ()
    """Extra field-selector paths (beyond metadata.name/namespace)."""
    strategic_merge_keys: Mapping[str, str] = field(default_factory=dict)
    """For built-in kinds: JSON path of a list (e.g. "spec.template.spec.containers") -> merge key."""
    scale: Mapping[str, str] = field(default_factory=dict)
    """A ``scale`` subresource's paths (``specReplicasPath``, ``statusReplicasPath``,
    ``labelSelectorPath``), as a CRD declares them."""
    default: Callable[[JSONDict], JSONDict] = _identity
    validate: Callable[[JSONDict, JSONDict | None], list[FieldError]] = _no_errors
    convert: Callable[[JSONDict, str], JSONDict] = _same
    stored_as: str = ""
    """For a kind served as a second view of another kind's objects (events.k8s.io/v1 Event of core
    v1 Events): that kind's resource key. Its objects are stored in the other kind's form, and
    ``convert(obj, version)`` maps between them (``STORED_FORM`` as version: into the stored form)."""

    @property
    def storage_version(self) -> str:
        return self.versions[0]

    @property
    def resource_key(self) -> str:
        """``<plural>.<group>`` ("jobs.batch", "pods" for core): the store's resource name."""
        if self.stored_as:
            return self.stored_as
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def served_key(self) -> str:
        """``<plural>.<group>`` as served (differs from ``resource_key`` only for a view)."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def version_setter(group: str) -> Callable[[JSONDict, str], JSONDict]:
    """``convert`` for a kind whose versions differ only in name: a copy with ``apiVersion`` set."""

    def convert(obj: JSONDict, to_version: str) -> JSONDict:
        out: JSONDict = json_copy(obj)
        out["apiVersion"] = f"{group}/{to_version}" if group else to_version
        return out

    return convert
