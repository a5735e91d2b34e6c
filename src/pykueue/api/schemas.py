"""The OpenAPI v3 schema of every served kind, per version, built on first use.

Owns the dispatch from (group, kind, version) to a schema source: Kueue's pydantic models
(``kueue_schemas``), the official Kubernetes client's model tree (``core_schemas``) and the
hand-written JobSet schema (``jobset_schema``). Each schema is a complete, structural, ``$ref``-free
object schema with descriptions, as ``kubectl explain`` and the CRD renderer need it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache

from pykueue.api.kinds import JSONDict
from pykueue.api.structural import trust_patterns

__all__ = ["LazySchemas", "schema_for"]


@cache
def schema_for(group: str, kind: str, version: str) -> JSONDict:
    """The whole-object schema; an empty dict for a kind without one (never raises for known kinds).
    Its patterns are pykueue's own, matched with Python's ``re`` (see ``structural.trust_patterns``)."""
    schema = _build(group, kind, version)
    trust_patterns(schema)
    return schema


def _build(group: str, kind: str, version: str) -> JSONDict:
    if group == "kueue.x-k8s.io":
        from pykueue.api import kueue_schemas

        return kueue_schemas.schema(kind, version)
    if group == "jobset.x-k8s.io":
        from pykueue.api import jobset_schema

        return jobset_schema.schema()
    from pykueue.api import core_schemas

    return core_schemas.schema(group, version, kind)


class LazySchemas(Mapping[str, JSONDict]):
    """A version -> schema mapping whose values are computed on first access."""

    def __init__(self, group: str, kind: str, versions: tuple[str, ...]) -> None:
        self._group = group
        self._kind = kind
        self._versions = versions

    def __getitem__(self, version: str) -> JSONDict:
        if version not in self._versions:
            raise KeyError(version)
        return schema_for(self._group, self._kind, version)

    def __iter__(self) -> Iterator[str]:
        return iter(self._versions)

    def __len__(self) -> int:
        return len(self._versions)
