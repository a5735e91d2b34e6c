"""The ``customresourcecleanup.apiextensions.k8s.io`` finalizer: deleting a CRD as kube-apiserver does.

Owned by ``registry/``; :class:`pykueue.registry.deletion.Deleter` hands every CRD delete to
:meth:`CrdCleanup.terminate`. As in kube (the CRD's REST delete, then apiextensions' finalizer
controller), a deleted CRD is not removed at once:
1. it gets ``deletionTimestamp``, the finalizer ``customresourcecleanup.apiextensions.k8s.io`` and the
   condition ``Terminating=True`` (``InstanceDeletionPending``); its kind stays served for reads,
   updates and deletes, but creating an object of it answers 405 ``create not allowed while custom
   resource definition is terminating``;
2. every object of the kind is deleted (``InstanceDeletionInProgress``); objects with finalizers of
   their own stay until those are removed;
3. once no object is left: ``Terminating=False`` (``InstanceDeletionCompleted``), the finalizer is
   removed, and the CRD goes (unless another finalizer holds it) and its kind is no longer served.
Steps 1-3 run inside the delete request when nothing holds the objects (the CRD is gone when
``kubectl delete crd`` returns, as before; watchers see the terminating CRD, then DELETED); otherwise
step 3 runs when the last object is removed. A CRD left terminating by a restart is picked up again.
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api.kinds.custom.custom_kinds import CRD_KIND, CRD_RESOURCE, crd_names
from pykueue.api.kindset import KindSet
from pykueue.api.meta.errors import MethodNotAllowed, NotFound
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy as clone
from pykueue.api.meta.kind_info import KindInfo
from pykueue.store import Store

StoreUpdate = Callable[..., JSONDict]
"""``store_update(kind, obj, *, expected_rv)``: the registry's one store update."""
Delete = Callable[..., JSONDict]
"""``delete(kind, obj, *, propagation, dry_run)``: the deleter's delete (finalizers, GC)."""
Remove = Callable[[KindInfo, JSONDict], JSONDict]
"""``remove(kind, obj)``: the deleter's removal of an object whose finalizers are gone."""

__all__ = ["CLEANUP_FINALIZER", "CrdCleanup"]

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_PENDING = (
    "True",
    "InstanceDeletionPending",
    "CustomResourceDefinition marked for deletion; instance deletion pending",
)
_IN_PROGRESS = ("True", "InstanceDeletionInProgress", "CustomResource deletion is in progress")
_COMPLETED = ("False", "InstanceDeletionCompleted", "removed all instances")


class CrdCleanup:
    """The CRDs being deleted, by the resource key of the kind they serve."""

    def __init__(
        self,
        store: Store,
        kinds: KindSet,
        *,
        store_update: StoreUpdate,
        now: Callable[[], str],
        delete: Delete,
        remove: Remove,
    ) -> None:
        self._store = store
        self._kinds = kinds
        self._store_update = store_update
        self._now = now
        self._delete = delete
        self._remove = remove
        self.terminating: dict[str, str] = {}
        """Resource key of a served kind -> the name of its CRD, while that CRD is being deleted."""
        self._sweeping = False

    def check_create(self, kind: KindInfo) -> None:
        """Refuse a new object of a kind whose CRD is being deleted (callers test ``terminating`` first)."""
        if kind.resource_key in self.terminating:
            raise MethodNotAllowed("create not allowed while custom resource definition is terminating")

    def kind_of(self, crd: JSONDict) -> KindInfo | None:
        """The kind a CRD serves (None when its names were never accepted: nothing to clean up)."""
        group = str((crd.get("spec") or {}).get("group") or "")
        plural = str(crd_names(crd).get("plural") or "")
        return self._kinds.get(group, plural)

    def terminate(self, crd: JSONDict, kind: KindInfo) -> JSONDict:
        """Start (or continue) deleting a CRD serving ``kind``; returns its last state (gone, or terminating)."""
        metadata = crd["metadata"]
        if not metadata.get("deletionTimestamp") or CLEANUP_FINALIZER not in (metadata.get("finalizers") or ()):
            obj = clone(crd)
            meta = obj["metadata"]
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = self._now()
                meta["deletionGracePeriodSeconds"] = 0
            meta["finalizers"] = [*(meta.get("finalizers") or ()), CLEANUP_FINALIZER]
            crd = self._save(self._with_condition(obj, _PENDING))
        self.terminating[kind.resource_key] = metadata["name"]
        crd = self._save(self._with_condition(clone(crd), _IN_PROGRESS))
        self._sweeping = True
        try:
            for item in self._store.list(kind.resource_key).items:
                if not item["metadata"].get("deletionTimestamp"):
                    try:
                        self._delete(kind, item, propagation="Background", dry_run=False)
                    except NotFound:
                        continue
        finally:
            self._sweeping = False
        return self.instance_removed(kind) or crd

    def instance_removed(self, kind: KindInfo) -> JSONDict | None:
        """An object of a terminating kind is gone: finish its CRD once none is left."""
        name = self.terminating.get(kind.resource_key)
        if name is None or self._sweeping or self._store.list(kind.resource_key, limit=1).items:
            return None
        try:
            crd = self._store.get(CRD_RESOURCE, "", name)
        except NotFound:
            self.terminating.pop(kind.resource_key, None)
            return None
        del self.terminating[kind.resource_key]
        obj = clone(crd)
        obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or () if f != CLEANUP_FINALIZER]
        if not obj["metadata"]["finalizers"]:
            del obj["metadata"]["finalizers"]
        stored = self._save(self._with_condition(obj, _COMPLETED))
        if stored["metadata"].get("finalizers"):
            return stored
        return self._remove(CRD_KIND, stored)

    def forget(self, crd: JSONDict) -> None:
        """A CRD was removed (its finalizers dropped by hand): stop tracking it."""
        for resource, name in list(self.terminating.items()):
            if name == crd["metadata"]["name"]:
                del self.terminating[resource]

    def resume(self) -> None:
        """At start: continue deleting the CRDs a restart left terminating."""
        for crd in self._store.list(CRD_RESOURCE).items:
            metadata = crd["metadata"]
            kind = self.kind_of(crd)
            if (
                kind is not None
                and metadata.get("deletionTimestamp")
                and CLEANUP_FINALIZER in (metadata.get("finalizers") or ())
            ):
                self.terminate(crd, kind)

    def _save(self, crd: JSONDict) -> JSONDict:
        """Write ``crd`` unless the stored one is already exactly that."""
        current = self._store.get(CRD_RESOURCE, "", crd["metadata"]["name"])
        if current == crd:
            return current
        return self._store_update(CRD_KIND, crd, expected_rv=crd["metadata"].get("resourceVersion"))

    def _with_condition(self, crd: JSONDict, condition: tuple[str, str, str]) -> JSONDict:
        """``crd`` (a private copy) with its ``Terminating`` condition set."""
        status, reason, message = condition
        conditions = [c for c in (crd.get("status") or {}).get("conditions") or () if isinstance(c, dict)]
        old = next((c for c in conditions if c.get("type") == "Terminating"), None)
        if old is not None and (old.get("status"), old.get("reason")) == (status, reason):
            new = crd
        else:
            kept = old.get("lastTransitionTime") if old is not None and old.get("status") == status else None
            entry = {
                "type": "Terminating",
                "status": status,
                "reason": reason,
                "message": message,
                "lastTransitionTime": kept or self._now(),
            }
            rest = [c for c in conditions if c.get("type") != "Terminating"]
            new = {**crd, "status": {**(crd.get("status") or {}), "conditions": [*rest, entry]}}
        return new
