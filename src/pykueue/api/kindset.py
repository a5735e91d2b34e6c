"""The set of kinds one API server serves: an explicit, per-server object.

Owned by ``api/``. Built at start-up by :func:`pykueue.api.catalogue.build_catalogue` (the built-in
kinds, and Kueue's and JobSet's kinds unless the cluster is bare) and handed to the registry, which
serves exactly what it holds. CustomResourceDefinitions add and remove kinds at run time, so two
servers started in one Python process never see each other's custom kinds.

Invariants: one kind per (group, plural); ``generation`` grows on every change, so caches built
from the set (OpenAPI documents) know when to rebuild.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pykueue.api.meta.kind_info import KindInfo

__all__ = ["KindSet"]


class KindSet:
    """Served kinds by (group, plural), by store resource key and by (group, kind)."""

    def __init__(self, kinds: Iterable[KindInfo] = ()) -> None:
        self._by_plural: dict[tuple[str, str], KindInfo] = {}
        self._by_resource: dict[str, KindInfo] = {}
        self.generation = 0
        for kind in kinds:
            self.add(kind)

    def add(self, kind: KindInfo) -> None:
        """Serve ``kind`` (replacing the kind served under the same group and plural)."""
        old = self._by_plural.get((kind.group, kind.plural))
        if old is not None and self._by_resource.get(old.resource_key) is old:
            del self._by_resource[old.resource_key]
        self._by_plural[(kind.group, kind.plural)] = kind
        if not kind.stored_as:  # a view (events.k8s.io Event) never stands for the stored kind
            self._by_resource[kind.resource_key] = kind
        self.generation += 1

    def remove(self, group: str, plural: str) -> KindInfo | None:
        kind = self._by_plural.pop((group, plural), None)
        if kind is not None:
            if self._by_resource.get(kind.resource_key) is kind:
                del self._by_resource[kind.resource_key]
            self.generation += 1
        return kind

    def get(self, group: str, plural: str) -> KindInfo | None:
        return self._by_plural.get((group, plural))

    def by_resource(self, resource: str) -> KindInfo | None:
        return self._by_resource.get(resource)

    def by_kind(self, group: str, kind_name: str) -> KindInfo | None:
        for kind in self._by_plural.values():
            if kind.group == group and kind.kind == kind_name:
                return kind
        return None

    def find(self, group: str, name: str) -> KindInfo | None:
        """Look a kind up by group and plural, singular, kind name (any case) or short name."""
        lowered = name.lower()
        for info in self._by_plural.values():
            if info.group != group:
                continue
            if lowered in (info.plural, info.singular, info.kind.lower()) or lowered in info.short_names:
                return info
        return None

    def __iter__(self) -> Iterator[KindInfo]:
        return iter(list(self._by_plural.values()))

    def __len__(self) -> int:
        return len(self._by_plural)

    def __contains__(self, resource: object) -> bool:
        return resource in self._by_resource
