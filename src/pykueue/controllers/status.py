"""Writing ``status`` through the status subresource: merge patches of just what changed.

Owns: :func:`update_status`, the one way controllers change an object's status. The caller gives a
function that edits a private copy of the status; only the top-level status fields that differ are
sent (``null`` removes a field), guarded by the object's ``resourceVersion`` so a write based on a
stale view fails with ``Conflict`` instead of silently dropping someone else's condition. On
conflict the object is fetched again and the edit re-applied (bounded retries).

Who calls it: the scheduler loop (admit/preempt/pending), the workload controller, the queue status
writers, the job integrations (Finished, PodsReady, reservation release).
Invariant: no request is made when the edit changes nothing — status writes are the bottleneck.
"""

from __future__ import annotations

from collections.abc import Callable

from pykueue.api.meta.errors import Conflict
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.client import Client, GroupVersionResource

__all__ = ["StatusEdit", "status_diff", "update_status"]

StatusEdit = Callable[[JSONDict, JSONDict], bool]
"""``edit(status_copy, obj) -> changed?``: mutate the copy in place; ``obj`` is read-only context."""


def status_diff(old: JSONDict, new: JSONDict) -> JSONDict:
    """Top-level status fields to send in a merge patch (removed fields as ``None``)."""
    diff: JSONDict = {}
    for key, value in new.items():
        if old.get(key) != value:
            diff[key] = value
    for key in old:
        if key not in new:
            diff[key] = None
    return diff


async def update_status(
    client: Client, res: GroupVersionResource, obj: JSONDict, edit: StatusEdit, *, retries: int = 3, guard: bool = True
) -> JSONDict | None:
    """Apply ``edit`` to ``obj``'s status and write the difference. Returns the written object, or
    ``None`` when nothing changed. Raises NotFound if the object is gone; Conflict after ``retries``."""
    meta = obj.get("metadata") or {}
    name, namespace = meta.get("name", ""), meta.get("namespace", "")
    current = obj
    for attempt in range(retries + 1):
        old_status = current.get("status") or {}
        new_status: JSONDict = json_copy(old_status)
        if not edit(new_status, current):
            return None
        diff = status_diff(old_status, new_status)
        if not diff:
            return None
        patch: JSONDict = {"status": diff}
        rv = (current.get("metadata") or {}).get("resourceVersion")
        if guard and rv:
            patch["metadata"] = {"resourceVersion": rv}
        try:
            return await client.patch(res, name, patch, namespace=namespace, subresource="status")
        except Conflict:
            if attempt == retries:
                raise
            current = await client.get(res, name, namespace)
    return None
