"""The records the store hands out: watch events and list pages.

Owned by ``store/``; read by the registry, the API server's watch streams and ``LocalClient``.
Every dict inside these records is a fresh copy: mutating it never changes what the store holds
(a watch event's object is shared by the store's subscribers, who treat it as read-only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson

__all__ = ["EventType", "ListResult", "RawListResult", "WatchEvent"]

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


class WatchEvent:
    """One change, as a watch stream reports it.

    ``object`` is the object as stored after the change (for ``DELETED``: the last state, carrying
    the deletion's new resourceVersion). ``resource_version`` equals
    ``int(object["metadata"]["resourceVersion"])``.

    Built from the stored bytes, ``object`` is decoded on first access and then shared: the store
    hands every change to every subscriber, and most subscribers filter on ``resource`` first, so a
    change nobody wants in object form (an Event, say) is never decoded. :meth:`fresh_object` gives
    a private copy straight from the bytes.
    """

    __slots__ = ("_data", "_object", "key", "label_pairs", "resource", "resource_version", "type")

    def __init__(
        self,
        type: EventType,
        resource: str,
        object: dict[str, Any] | None,
        resource_version: int,
        *,
        data: bytes | None = None,
        key: tuple[str, str] | None = None,
        labels: tuple[tuple[str, str], ...] | None = None,
    ) -> None:
        if object is None and data is None:
            raise ValueError("a WatchEvent needs its object or its stored bytes")
        self.type = type
        self.resource = resource
        self.resource_version = resource_version
        self._object = object
        self._data = data
        self.key = key
        """(namespace, name) when the store built the event (``None`` otherwise)."""
        self.label_pairs = labels
        """The object's labels as sorted (key, value) pairs when the store built the event."""

    @property
    def labels(self) -> dict[str, str] | None:
        """The object's ``metadata.labels`` without decoding it, when the store built the event
        (a label-selector watch filters on them alone); ``None`` when unknown."""
        pairs = self.label_pairs
        return dict(pairs) if pairs is not None else None

    @property
    def object(self) -> dict[str, Any]:
        if self._object is None:
            assert self._data is not None
            self._object = orjson.loads(self._data)
        return self._object

    @property
    def raw(self) -> bytes | None:
        """The object's stored JSON bytes, when the event was built from them (never mutate)."""
        return self._data

    def fresh_object(self) -> dict[str, Any]:
        """A private copy of ``object`` (one decode of the stored bytes when there are any)."""
        data = self._data if self._data is not None else orjson.dumps(self._object)
        fresh: dict[str, Any] = orjson.loads(data)
        return fresh

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, WatchEvent):
            return NotImplemented
        return (self.type, self.resource, self.resource_version, self.object) == (
            other.type,
            other.resource,
            other.resource_version,
            other.object,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable payload, as the dataclass was

    def __repr__(self) -> str:
        return f"WatchEvent({self.type!r}, {self.resource!r}, rv={self.resource_version})"


@dataclass(frozen=True, slots=True)
class ListResult:
    """One page of a list.

    ``resource_version`` is the store's resourceVersion the page is consistent with: the newest
    rv for a first page, the first page's rv for every continuation (a consistent snapshot, as
    kube-apiserver serves from etcd). ``continue_token`` is ``None`` on the last page.
    ``remaining_item_count`` counts the objects after this page; like Kubernetes it is only
    known (not ``None``) for paginated lists without label or field selector.
    """

    items: list[dict[str, Any]]
    resource_version: int
    continue_token: str | None = None
    remaining_item_count: int | None = None


@dataclass(frozen=True, slots=True)
class RawListResult:
    """One page of a list as the stored JSON bytes of each object (``Store.list_raw``).

    Same fields and meaning as :class:`ListResult`; ``items`` are the objects' bytes exactly as
    stored (storage version, ``metadata.resourceVersion`` set), never to be mutated.
    """

    items: list[bytes]
    resource_version: int
    continue_token: str | None = None
    remaining_item_count: int | None = None
