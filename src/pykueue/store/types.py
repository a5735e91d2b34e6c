"""The records the store hands out: watch events and list pages.

Owned by ``store/``; read by the registry, the API server's watch streams and ``LocalClient``.
Every dict inside these records is a fresh copy: mutating it never changes what the store holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["EventType", "ListResult", "RawListResult", "WatchEvent"]

EventType = Literal["ADDED", "MODIFIED", "DELETED"]


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change, as a watch stream reports it.

    ``object`` is the object as stored after the change (for ``DELETED``: the last state, carrying
    the deletion's new resourceVersion). ``resource_version`` equals
    ``int(object["metadata"]["resourceVersion"])``.
    """

    type: EventType
    resource: str
    object: dict[str, Any]
    resource_version: int


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
