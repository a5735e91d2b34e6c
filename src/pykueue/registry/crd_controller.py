"""CustomResourceDefinitions at run time: what apiextensions-apiserver's controllers do, in process.

Owned by ``registry/``. The registry calls :meth:`CrdController.written` after every stored write of a
CRD and :meth:`CrdController.deleted` after one is removed:
- names are checked against the other kinds of the CRD's group (kube-apiserver's naming controller):
  a clash sets ``NamesAccepted=False`` with reason ``PluralConflict``/``SingularConflict``/
  ``ShortNamesConflict``/``KindConflict``/``ListKindConflict`` and the kind is not served;
- otherwise the kind is served at once (``NamesAccepted`` and ``Established`` True,
  ``acceptedNames`` and ``storedVersions`` filled in), and re-served with the new schema on update
  (a new storage version rewrites the stored objects in it);
- a CRD whose conversion strategy is ``Webhook`` converts through it (:mod:`.crd_conversion`);
- deleting a CRD stops serving its kind and deletes every object of it (watchers see DELETED),
  once :mod:`.crd_cleanup` has run its finalizer.
At start, :meth:`load` serves the CRDs found in the store (they survive restarts with
``--data-dir``), and :meth:`install` writes the CRDs of kinds pykueue serves as CRDs (Kueue's,
JobSet's): exactly the objects ``pykueue crds`` prints for real clusters.

Invariant: a CRD's kind is served from the moment its names are accepted until the CRD is deleted
(a later update whose names clash keeps the kind served under its accepted names, as in kube).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, Protocol

from pykueue.api.crds import custom_resource_definition
from pykueue.api.kinds.custom.custom_kinds import CRD_KIND, CRD_RESOURCE, crd_names, custom_kind
from pykueue.api.kindset import KindSet
from pykueue.api.meta.errors import Conflict, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.api.meta.kind_info import KindInfo
from pykueue.store import Store

from .crd_conversion import Batch, webhook_conversion
from .webhook_dispatch import WebhookCaller

__all__ = ["CrdController"]

_MANAGER = "kube-apiserver"
_NAME_KEYS = (
    ("plural", "PluralConflict"),
    ("singular", "SingularConflict"),
    ("kind", "KindConflict"),
    ("listKind", "ListKindConflict"),
)
_RENDERED: dict[int, tuple[KindInfo, JSONDict]] = {}


def _rendered(info: KindInfo) -> JSONDict:
    """The CRD pykueue renders for a catalogue kind (built once per process per kind)."""
    hit = _RENDERED.get(id(info))
    if hit is None or hit[0] is not info:
        hit = _RENDERED[id(info)] = (info, custom_resource_definition(info))
    return hit[1]


def _condition(kind: str, ok: bool, reason: str, message: str, now: str) -> JSONDict:
    return {
        "type": kind,
        "status": "True" if ok else "False",
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


class RegistryWrites(Protocol):
    """The part of the registry a CRD controller reads and writes through (the registry itself)."""

    @property
    def store(self) -> Store: ...

    def now(self) -> str: ...

    def create_stored(
        self,
        kind: KindInfo,
        namespace: str,
        obj: JSONDict,
        *,
        version: str,
        dry_run: bool,
        field_manager: str | None,
        managed: bool = False,
    ) -> JSONDict: ...

    def update_stored(
        self,
        kind: KindInfo,
        current: JSONDict,
        new: JSONDict,
        *,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
        managed: bool = False,
    ) -> JSONDict: ...

    def store_update(self, kind: KindInfo, obj: JSONDict, *, expected_rv: str | None) -> JSONDict: ...

    def store_delete(self, kind: KindInfo, namespace: str, name: str) -> JSONDict: ...

    @property
    def webhook_caller(self) -> WebhookCaller | None: ...


class CrdController:
    """Serves, re-serves and retires the kinds of the CRDs in one registry's store."""

    def __init__(self, registry: RegistryWrites, kinds: KindSet, known: Mapping[tuple[str, str], KindInfo]) -> None:
        self._registry = registry
        self._kinds = kinds
        self._known = known
        self._served_by: dict[str, tuple[str, str]] = {}
        """CRD name -> (group, plural) of the kind it serves."""
        self.converting: dict[str, tuple[str, Batch]] = {}
        """CRD name -> (resource key, batch conversion) of the kinds converting through a webhook."""
        self._pinned: dict[str, Any] = {}
        """CRD name -> the spec its served kind was built from (or rendered from, for a kind the
        registry was given): while the stored CRD keeps that spec, the served kind stays as it is
        (a status write neither rebuilds it nor invalidates the OpenAPI documents)."""

    def _custom_kind(self, crd: JSONDict) -> KindInfo:
        """The kind a CRD serves, converting through its webhook when its strategy says so."""
        registry = self._registry
        kind, batch = webhook_conversion(custom_kind(crd, self._known), crd, lambda: registry.webhook_caller)
        if batch is None:
            self.converting.pop(crd["metadata"]["name"], None)
        else:
            self.converting[crd["metadata"]["name"]] = (kind.resource_key, batch)
        return kind

    def batch_converter(self, kind: KindInfo) -> Batch | None:
        """How a list of ``kind`` converts in one webhook call (None: object by object, in process)."""
        for resource, batch in self.converting.values():
            if resource == kind.resource_key:
                return batch
        return None

    # ------------------------------------------------------------------ start-up

    def load(self) -> None:
        """Serve every stored CRD's kind (a restart with ``--data-dir``) unless already served."""
        for crd in self._registry.store.list(CRD_RESOURCE).items:
            spec = _dict(crd.get("spec"))
            names = crd_names(crd)
            if self._kinds.get(str(spec.get("group") or ""), str(names.get("plural") or "")) is None:
                if crd["metadata"].get("deletionTimestamp"):  # being deleted: served until its objects are gone
                    kind = self._custom_kind(crd)
                    self._kinds.add(kind)
                    self._served_by[crd["metadata"]["name"]] = (kind.group, kind.plural)
                    continue
                self.written(crd)
            else:
                self._served_by[crd["metadata"]["name"]] = (str(spec.get("group")), str(names.get("plural")))

    def install(self, kinds: list[KindInfo]) -> None:
        """Store the rendered CRD of each kind (created, or updated if pykueue's rendering changed)."""
        registry = self._registry
        for info in kinds:
            crd = json_copy(_rendered(info))
            name = crd["metadata"]["name"]
            self._served_by[name] = (info.group, info.plural)
            self._pinned[name] = crd["spec"]
            try:
                current = registry.store.get(CRD_RESOURCE, "", name)
            except NotFound:
                registry.create_stored(CRD_KIND, "", crd, version="v1", dry_run=False, field_manager="pykueue")
                continue
            if current.get("spec") != crd["spec"]:
                new = {**current, "spec": crd["spec"]}
                registry.update_stored(CRD_KIND, current, new, subresource="", dry_run=False, field_manager="pykueue")

    # ------------------------------------------------------------------ after writes

    def written(self, crd: JSONDict) -> None:
        """A CRD was created or updated: serve (or refuse) its names, then record that in its status."""
        name = crd["metadata"]["name"]
        if crd["metadata"].get("deletionTimestamp"):
            return
        spec = _dict(crd.get("spec"))
        group = str(spec.get("group") or "")
        names = crd_names(crd)
        conflict = self._conflict(name, group, names)
        now = self._registry.now()
        status = dict(_dict(crd.get("status")))
        old_conditions = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, dict)}
        if conflict is None:
            previous = self._served_by.get(name)
            kind = self._kinds.get(*previous) if previous is not None and self._pinned.get(name) == spec else None
            if kind is None:  # not a kind the registry was given, or its CRD changed since
                self._pinned.pop(name, None)
                kind = self._custom_kind(crd)
                self._pinned[name] = spec  # a status write of this spec keeps the kind as it is
            if previous is not None and previous != (group, kind.plural):
                self._kinds.remove(*previous)
            served = self._kinds.get(group, kind.plural)
            if served is not kind:
                self._kinds.add(kind)
                if served is not None and served.storage_version != kind.storage_version:
                    self._migrate(kind)
            self._served_by[name] = (group, kind.plural)
            status["acceptedNames"] = names
            conditions = [
                _condition("NamesAccepted", True, "NoConflicts", "no conflicts found", now),
                _condition("Established", True, "InitialNamesAccepted", "the initial names have been accepted", now),
            ]
            stored_versions = list(status.get("storedVersions") or ())
            if kind.storage_version not in stored_versions:
                stored_versions.append(kind.storage_version)
            status["storedVersions"] = stored_versions
        else:
            reason, message = conflict
            conditions = [
                _condition("NamesAccepted", False, reason, message, now),
                _condition("Established", False, "NotAccepted", "not all names are accepted", now),
            ]
            status.setdefault("acceptedNames", {"plural": "", "kind": ""})
            status.setdefault("storedVersions", [])
        for condition in conditions:  # an unchanged condition keeps its transition time
            old = old_conditions.get(condition["type"])
            if old is not None and old.get("status") == condition["status"] and old.get("lastTransitionTime"):
                condition["lastTransitionTime"] = old["lastTransitionTime"]
        status["conditions"] = conditions
        if status != crd.get("status"):
            self._registry.update_stored(
                CRD_KIND, crd, {**crd, "status": status}, subresource="status", dry_run=False, field_manager=_MANAGER
            )

    def _migrate(self, kind: KindInfo) -> None:
        """The storage version changed: rewrite the stored objects in it (reads in the storage version
        return the stored object as it is). kube-apiserver leaves that to a storage migrator; here the
        objects' watchers see one MODIFIED event each."""
        registry = self._registry
        target = f"{kind.group}/{kind.storage_version}"
        for item in registry.store.list(kind.resource_key).items:
            if item.get("apiVersion") != target:
                with contextlib.suppress(NotFound, Conflict):
                    registry.store_update(
                        kind,
                        kind.convert(item, kind.storage_version),
                        expected_rv=item["metadata"].get("resourceVersion"),
                    )

    def _conflict(self, name: str, group: str, names: JSONDict) -> tuple[str, str] | None:
        """(reason, message) when another kind of ``group`` already uses one of ``names``."""
        own = self._served_by.get(name)
        used: dict[str, set[str]] = {
            "plural": set(),
            "singular": set(),
            "kind": set(),
            "listKind": set(),
            "shortNames": set(),
        }
        for kind in self._kinds:
            if kind.group != group or (kind.group, kind.plural) == own:
                continue
            used["plural"].add(kind.plural)
            used["singular"].add(kind.singular)
            used["kind"].add(kind.kind)
            used["listKind"].add(f"{kind.kind}List")
            used["shortNames"].update(kind.short_names)
        for key, reason in _NAME_KEYS:
            value = names.get(key)
            if value and value in used[key]:
                return reason, f'"{value}" is already in use'
        for short in names.get("shortNames") or ():
            if short in used["shortNames"]:
                return "ShortNamesConflict", f'"{short}" is already in use'
        return None

    def deleted(self, crd: JSONDict) -> None:
        """A CRD is gone: stop serving its kind and delete every object of it."""
        self._pinned.pop(crd["metadata"]["name"], None)
        self.converting.pop(crd["metadata"]["name"], None)
        served = self._served_by.pop(crd["metadata"]["name"], None)
        if served is None:
            return
        kind = self._kinds.remove(*served)
        if kind is None:
            return
        registry = self._registry
        for item in registry.store.list(kind.resource_key).items:
            metadata = item["metadata"]
            try:
                registry.store_delete(kind, metadata.get("namespace") or "", metadata["name"])
            except NotFound:
                continue
