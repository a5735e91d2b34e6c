"""Deletion: finalizers, deletionTimestamp, ownerReference garbage collection, namespace termination.

Owned by ``registry/``; :class:`pykueue.registry.Registry` delegates every delete to
:class:`Deleter`, and calls :meth:`Deleter.remove` when an update drops the last finalizer of an
object that is being deleted. Kubernetes runs the garbage collector and the namespace controller
as asynchronous controllers; here they run synchronously inside the write that triggers them,
which gives the same end states with no window in which an orphan is visible.

Rules (as Kubernetes):
- An object with finalizers is not removed: it gets ``deletionTimestamp`` (and
  ``deletionGracePeriodSeconds: 0``) and disappears when its last finalizer is removed.
- ``Background``: the owner goes first, then every dependent whose owners are all gone is deleted
  (dependents with another live owner only lose the dangling reference).
- ``Foreground``: the owner gets the ``foregroundDeletion`` finalizer, its dependents are deleted,
  and the finalizer is dropped once no dependent with ``blockOwnerDeletion: true`` remains.
- ``Orphan``: dependents lose their ownerReferences to the owner, then the owner is deleted.
- Deleting a namespace marks it ``Terminating``, deletes its contents, and removes it once empty.
- Deleting a CRD goes through its ``customresourcecleanup.apiextensions.k8s.io`` finalizer
  (:mod:`.crd_cleanup`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pykueue.api.kinds.custom.custom_kinds import CRD_KIND
from pykueue.api.kindset import KindSet
from pykueue.api.meta.errors import BadRequest, Forbidden, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.store import Store

from .admission import clone
from .crd_cleanup import CrdCleanup
from .ownership import Key, OwnerIndex

__all__ = ["FOREGROUND", "ORPHAN", "Deleter"]

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
_POLICIES = ("Background", "Foreground", "Orphan")
_IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


class StoreUpdate(Protocol):
    """Writes an object to the store, keeping the owner index and the write listeners in step."""

    def __call__(self, kind: KindInfo, obj: JSONDict, *, expected_rv: str | None) -> JSONDict: ...


StoreDelete = Callable[[KindInfo, str, str], JSONDict]
"""(kind, namespace, name) -> the deleted object; keeps the owner index and listeners in step."""


class Deleter:
    """Runs deletions over ``store`` (read directly) with the writes it is given.

    ``kinds`` is the served set, read at each call (it grows and shrinks as CRDs come and go);
    ``owners`` indexes dependents by owner uid."""

    def __init__(
        self,
        store: Store,
        owners: OwnerIndex,
        kinds: KindSet,
        *,
        store_update: StoreUpdate,
        store_delete: StoreDelete,
        now: Callable[[], str],
    ) -> None:
        self._store = store
        self._owners = owners
        self._kinds = kinds
        self._store_update = store_update
        self._store_delete = store_delete
        self._now = now
        self.crd_cleanup = CrdCleanup(
            store, kinds, store_update=store_update, now=now, delete=self.delete, remove=self.remove
        )

    # ------------------------------------------------------------------ entry points

    def delete(self, kind: KindInfo, current: JSONDict, *, propagation: str, dry_run: bool) -> JSONDict:
        """Delete ``current`` (storage version); returns the last state (deleted or deleting)."""
        if propagation not in _POLICIES:
            raise BadRequest(
                f'propagationPolicy: Unsupported value: "{propagation}": supported values: '
                '"Foreground", "Background", "Orphan"'
            )
        if dry_run:
            return current
        if kind.resource_key == "namespaces":
            return self._terminate_namespace(kind, current)
        if kind is CRD_KIND:
            served = self.crd_cleanup.kind_of(current)
            if served is not None:
                return self.crd_cleanup.terminate(current, served)
        metadata = current["metadata"]
        uid = metadata.get("uid") or ""
        if propagation == "Orphan":
            self._orphan_dependents(uid)
        finalizers = list(metadata.get("finalizers") or [])
        dependents = self._owners.dependents(uid)
        if propagation == "Foreground" and dependents and FOREGROUND not in finalizers:
            finalizers.append(FOREGROUND)
        if not finalizers:
            return self.remove(kind, current)
        obj = current
        if not metadata.get("deletionTimestamp") or finalizers != list(metadata.get("finalizers") or []):
            obj = clone(current)
            meta = obj["metadata"]
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = self._now()
                meta["deletionGracePeriodSeconds"] = 0
            meta["finalizers"] = finalizers
            obj = self._store_update(kind, obj, expected_rv=metadata.get("resourceVersion"))
        if FOREGROUND in finalizers:
            for key in dependents:
                self._delete_key(key, "Foreground")
            return self._maybe_finish_foreground(kind, obj) or obj
        return obj

    def remove(self, kind: KindInfo, obj: JSONDict) -> JSONDict:
        """Remove ``obj`` from the store now, then run garbage collection for it."""
        metadata = obj["metadata"]
        deleted = self._store_delete(kind, metadata.get("namespace") or "", metadata["name"])
        self._after_removed(kind, deleted)
        return deleted

    # ------------------------------------------------------------------ garbage collection

    def _after_removed(self, kind: KindInfo, obj: JSONDict) -> None:
        metadata = obj["metadata"]
        uid = metadata.get("uid") or ""
        for key in self._owners.dependents(uid):
            self._collect_dependent(key, uid)
        namespace = metadata.get("namespace") or ""
        for ref in metadata.get("ownerReferences") or []:
            found = self._owner(namespace, ref)
            if found is None:
                continue
            owner_kind, owner = found
            if FOREGROUND in (owner["metadata"].get("finalizers") or []):
                self._maybe_finish_foreground(owner_kind, owner)
        if kind.namespaced and namespace:
            self._maybe_finish_namespace(namespace)

    def _collect_dependent(self, key: Key, owner_uid: str) -> None:
        """The owner ``owner_uid`` is gone: delete the dependent, or drop the dangling reference."""
        found = self._stored(key)
        if found is None:
            return
        kind, dependent = found
        namespace = key[1]
        metadata = dependent["metadata"]
        refs = metadata.get("ownerReferences") or []
        others = [r for r in refs if r.get("uid") != owner_uid]
        if any(self._owner(namespace, r) is not None for r in others):
            obj = clone(dependent)
            obj["metadata"]["ownerReferences"] = others
            self._store_update(kind, obj, expected_rv=metadata.get("resourceVersion"))
            return
        if not metadata.get("deletionTimestamp"):
            self.delete(kind, dependent, propagation="Background", dry_run=False)

    def _stored(self, key: Key) -> tuple[KindInfo, JSONDict] | None:
        """The kind and stored object behind a dependents-index key, or None if either is gone."""
        resource, namespace, name = key
        kind = self._kinds.by_resource(resource)
        if kind is None:
            return None
        try:
            return kind, self._store.get(resource, namespace, name)
        except NotFound:
            return None

    def _delete_key(self, key: Key, propagation: str) -> None:
        found = self._stored(key)
        if found is None:
            return
        kind, dependent = found
        if not dependent["metadata"].get("deletionTimestamp"):
            self.delete(kind, dependent, propagation=propagation, dry_run=False)

    def _orphan_dependents(self, uid: str) -> None:
        for resource, namespace, name in self._owners.dependents(uid):
            kind = self._kinds.by_resource(resource)
            if kind is None:
                continue
            try:
                dependent = self._store.get(resource, namespace, name)
            except NotFound:
                continue
            obj = clone(dependent)
            refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            if refs:
                obj["metadata"]["ownerReferences"] = refs
            else:
                obj["metadata"].pop("ownerReferences", None)
            self._store_update(kind, obj, expected_rv=dependent["metadata"].get("resourceVersion"))

    def _maybe_finish_foreground(self, kind: KindInfo, owner: JSONDict) -> JSONDict | None:
        """Drop ``foregroundDeletion`` once no blocking dependent remains; returns the new state."""
        metadata = owner["metadata"]
        uid = metadata.get("uid") or ""
        for resource, namespace, name in self._owners.dependents(uid):
            try:
                dependent = self._store.get(resource, namespace, name)
            except NotFound:
                continue
            for ref in dependent["metadata"].get("ownerReferences") or []:
                if ref.get("uid") == uid and ref.get("blockOwnerDeletion"):
                    return None
        obj = clone(owner)
        obj["metadata"]["finalizers"] = [f for f in metadata.get("finalizers") or [] if f != FOREGROUND]
        if not obj["metadata"]["finalizers"]:
            obj["metadata"].pop("finalizers")
            return self.remove(kind, owner)
        return self._store_update(kind, obj, expected_rv=metadata.get("resourceVersion"))

    def _owner(self, namespace: str, ref: Any) -> tuple[KindInfo, JSONDict] | None:
        """The live object an ownerReference points at (same uid), or None."""
        if not isinstance(ref, dict):
            return None
        api_version = str(ref.get("apiVersion") or "")
        group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
        kind = self._kinds.by_kind(group, str(ref.get("kind") or ""))
        if kind is None:
            return None
        try:
            owner = self._store.get(kind.resource_key, namespace if kind.namespaced else "", str(ref.get("name") or ""))
        except NotFound:
            return None
        if owner["metadata"].get("uid") != ref.get("uid"):
            return None
        return kind, owner

    # ------------------------------------------------------------------ namespaces

    def _terminate_namespace(self, kind: KindInfo, current: JSONDict) -> JSONDict:
        name = current["metadata"]["name"]
        if name in _IMMORTAL_NAMESPACES:
            raise Forbidden(
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                details={"name": name, "kind": "namespaces"},
            )
        obj = current
        if not current["metadata"].get("deletionTimestamp"):
            obj = clone(current)
            obj["metadata"]["deletionTimestamp"] = self._now()
            obj["metadata"]["deletionGracePeriodSeconds"] = 0
            obj.setdefault("status", {})["phase"] = "Terminating"
            obj = self._store_update(kind, obj, expected_rv=current["metadata"].get("resourceVersion"))
        for content_kind in self._namespaced_kinds():
            for item in self._store.list(content_kind.resource_key, name).items:
                if not item["metadata"].get("deletionTimestamp"):
                    self.delete(content_kind, item, propagation="Background", dry_run=False)
        return self._maybe_finish_namespace(name) or obj

    def _maybe_finish_namespace(self, name: str) -> JSONDict | None:
        try:
            namespace = self._store.get("namespaces", "", name)
        except NotFound:
            return None
        if not namespace["metadata"].get("deletionTimestamp"):
            return None
        for content_kind in self._namespaced_kinds():
            if self._store.list(content_kind.resource_key, name, limit=1).items:
                return None
        kind = self._kinds.by_resource("namespaces")
        assert kind is not None
        deleted = self._store_delete(kind, "", name)
        self._after_removed(kind, deleted)
        return deleted

    def _namespaced_kinds(self) -> list[KindInfo]:
        return [k for k in self._kinds if k.namespaced]
