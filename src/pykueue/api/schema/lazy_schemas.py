"""A kind's OpenAPI v3 schemas per version, built on first use and shared by every catalogue.

Owned by ``api/schema``. Building a schema is costly (Kueue's from pydantic models, the built-in
kinds' from the official Kubernetes client's model tree), so each kind package hands a builder to
:class:`LazySchemas` and the schema is built on the first read, then kept for the life of the
process under its (group, kind, version): catalogues built for several servers share them.
Each schema is a complete, structural, ``$ref``-free object schema with descriptions, as
``kubectl explain`` and the CRD renderer need it. Its patterns are pykueue's own, matched with
Python's ``re`` (see :func:`pykueue.api.schema.structural.trust_patterns`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.schema.structural import trust_patterns

__all__ = ["LazySchemas", "SchemaBuilder", "forget_built_schemas", "schemas_built"]

SchemaBuilder = Callable[[str], JSONDict]
"""version -> the whole-object schema of one kind in that version."""

_BUILT: dict[tuple[str, str, str], JSONDict] = {}
_builds = 0


def schemas_built() -> int:
    """How many schemas have been built so far (a build after a warm-up is a cache miss)."""
    return _builds


def forget_built_schemas() -> None:
    """Drop every built schema; they are rebuilt on demand (only costs time)."""
    _BUILT.clear()


class LazySchemas(Mapping[str, JSONDict]):
    """A version -> schema mapping whose values are computed on first access."""

    def __init__(self, group: str, kind: str, versions: tuple[str, ...], build: SchemaBuilder) -> None:
        self._group = group
        self._kind = kind
        self._versions = versions
        self._build = build

    def __getitem__(self, version: str) -> JSONDict:
        if version not in self._versions:
            raise KeyError(version)
        key = (self._group, self._kind, version)
        schema = _BUILT.get(key)
        if schema is None:
            global _builds
            _builds += 1
            schema = self._build(version)
            trust_patterns(schema)
            _BUILT[key] = schema
        return schema

    def __contains__(self, version: object) -> bool:
        return version in self._versions

    def __iter__(self) -> Iterator[str]:
        return iter(self._versions)

    def __len__(self) -> int:
        return len(self._versions)
