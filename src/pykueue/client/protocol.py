"""The ``Client`` protocol: the one interface controllers use to talk to the API.

Owned by ``client/``; implemented by :class:`~pykueue.client.http.HttpClient` (any API server)
and :class:`~pykueue.client.local.LocalClient` (the embedded registry, in process). Both raise
the :mod:`pykueue.api.meta.errors` classes and pass the same contract tests, so a controller cannot
tell which one it has.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from pykueue.client.group_version_resource import GroupVersionResource

__all__ = ["PATCH_CONTENT_TYPES", "Client", "Items", "Patch", "WatchEvent"]

Items = list[dict[str, Any]]
"""A list of objects (aliased because ``Client.list`` shadows the builtin in class scope)."""
Patch = dict[str, Any] | list[Any]
"""A merge/strategic/apply patch (object) or a JSON patch (list of operations)."""

WatchEvent = tuple[str, dict[str, Any]]
"""``(type, object)``: type is ADDED, MODIFIED, DELETED (or BOOKMARK when asked for)."""

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
"""``patch_type`` -> the Content-Type Kubernetes expects for it."""


class Client(Protocol):
    async def get(self, res: GroupVersionResource, name: str, namespace: str = "") -> dict[str, Any]:
        """The object; raises ``NotFound``."""
        ...

    async def list(
        self, res: GroupVersionResource, namespace: str = "", *, label_selector: str = "", field_selector: str = ""
    ) -> tuple[Items, str]:
        """``(items, resourceVersion)``; items carry ``apiVersion`` and ``kind``."""
        ...

    async def create(self, res: GroupVersionResource, obj: dict[str, Any], namespace: str = "") -> dict[str, Any]:
        """Create ``obj`` in ``namespace`` (default: its ``metadata.namespace``)."""
        ...

    async def update(self, res: GroupVersionResource, obj: dict[str, Any], *, subresource: str = "") -> dict[str, Any]:
        """Replace (PUT); ``metadata.resourceVersion`` set means optimistic concurrency (``Conflict``)."""
        ...

    async def patch(
        self,
        res: GroupVersionResource,
        name: str,
        patch: Patch,
        *,
        namespace: str = "",
        patch_type: str = "merge",
        subresource: str = "",
        field_manager: str = "",
        force: bool = False,
    ) -> dict[str, Any]:
        """``patch_type`` is merge|json|strategic|apply; apply needs a field manager (the client's default
        is used when ``field_manager`` is empty) and honours ``force``."""
        ...

    async def delete(
        self, res: GroupVersionResource, name: str, namespace: str = "", *, propagation: str = "Background"
    ) -> None:
        """Delete (or mark for deletion when finalizers remain); raises ``NotFound``."""
        ...

    def watch(
        self,
        res: GroupVersionResource,
        namespace: str = "",
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        allow_bookmarks: bool = False,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Stream changes after ``resource_version`` ("" = the current state as ADDED events first).

        BOOKMARK events are yielded only with ``allow_bookmarks`` (the informer uses them to keep its
        resume point fresh); raises ``Gone`` when the version is too old. Ends after
        ``timeout_seconds`` if given."""
        ...

    async def close(self) -> None:
        """Release connections; the client is unusable afterwards."""
        ...
