"""An in-memory index from owner uid to the objects that name it in ``ownerReferences``.

Owned by ``registry/``; fed by the store's write notifications (``Store.subscribe``) and built
Owned by ``registry/``; built once from a full list when the registry starts, then updated by
the registry after each of its own store writes (not through ``Store.subscribe``: subscribers only
hear of a write once it is flushed, and garbage collection must see it at once). Garbage
collection (:mod:`.deletion`) asks it "who depends on uid X?" instead of scanning every kind on
every delete.

Invariant: after any registry write returns, the index reflects it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Key", "OwnerIndex", "owner_uids"]

Key = tuple[str, str, str]
"""(resource key, namespace, name)."""


def owner_uids(obj: dict[str, Any]) -> tuple[str, ...]:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return tuple(str(r.get("uid")) for r in refs if isinstance(r, dict) and r.get("uid"))


class OwnerIndex:
    def __init__(self) -> None:
        self._dependents: dict[str, set[Key]] = {}
        self._owners_of: dict[Key, tuple[str, ...]] = {}

    def index(self, resource: str, obj: dict[str, Any]) -> None:
        metadata = obj.get("metadata") or {}
        key = (resource, metadata.get("namespace") or "", metadata.get("name") or "")
        self._set(key, owner_uids(obj))

    def forget(self, resource: str, namespace: str, name: str) -> None:
        self._set((resource, namespace, name), ())

    def dependents(self, uid: str) -> list[Key]:
        return sorted(self._dependents.get(uid, ()))

    def _set(self, key: Key, uids: tuple[str, ...]) -> None:
        before = self._owners_of.get(key, ())
        if before == uids:
            return
        for uid in before:
            deps = self._dependents.get(uid)
            if deps is not None:
                deps.discard(key)
                if not deps:
                    del self._dependents[uid]
        for uid in uids:
            self._dependents.setdefault(uid, set()).add(key)
        if uids:
            self._owners_of[key] = uids
        else:
            self._owners_of.pop(key, None)
