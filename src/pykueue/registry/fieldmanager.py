"""The registry's single doorway to field ownership (``metadata.managedFields``).

Owned by ``registry/``. Server-side apply and ownership bookkeeping are implemented by the patch
library (:mod:`pykueue.registry.patch`); this module only adapts the registry's calls to it and
keeps the registry importable while that library grows (a missing function means "no bookkeeping",
never a failed write).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pykueue.api.errors import BadRequest

__all__ = ["server_side_apply", "update_managed_fields"]

JSONDict = dict[str, Any]


def _patch_function(name: str) -> Any:
    from pykueue.registry import patch

    return getattr(patch, name, None)


def update_managed_fields(old: JSONDict | None, new: JSONDict, *, manager: str | None, now: str) -> JSONDict:
    """Record that ``manager`` wrote the fields that changed between ``old`` and ``new``."""
    fn = _patch_function("update_managed_fields")
    if fn is None or not manager:
        return new
    result: JSONDict = fn(old, new, manager=manager, operation="Update", now=now)
    return result


def server_side_apply(current: JSONDict | None, applied: JSONDict, *, manager: str, force: bool,
                      merge_keys: Mapping[str, str], now: str) -> JSONDict:
    fn = _patch_function("server_side_apply")
    if fn is None:
        raise BadRequest("server-side apply is not available in this build")
    result: JSONDict = fn(current, applied, manager=manager, force=force, merge_keys=merge_keys, now=now)
    return result
