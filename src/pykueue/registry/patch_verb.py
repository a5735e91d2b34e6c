"""PATCH: JSON merge patch, JSON patch, strategic merge patch and server-side apply.

Owned by ``registry/``; :meth:`pykueue.registry.Registry.patch` delegates here. A patch is applied
to the stored object *as the client sees it* (converted to the request's version), then the
result takes the ordinary update path (admission, metadata rules, status split, no-op detection)
with the stored resourceVersion as precondition. Strategic merge patch is refused with 415 for
CRD-served kinds, as kube-apiserver does. Server-side apply creates a missing object and otherwise
merges by field ownership, on the main resource or on ``/status`` (which applies ``status`` only and
records the subresource in the manager's entry); lists merge by the kind's list-map keys (a custom
resource's from its schema). Both are computed by :mod:`pykueue.registry.patch`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

from pykueue.api.kinds.core.merge_keys import KEY_DEFAULTS
from pykueue.api.meta.errors import BadRequest, Conflict, NotFound, RequestEntityTooLarge
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

from . import objectmeta as om
from . import patch as patches
from .bodies import decode_bytes, unsupported
from .decode import check_fields, typed_body
from .fieldmanager import list_keys_of, server_side_apply
from .shape import check_shape

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MAX_PATCH_CONFLICT_RETRIES",
    "MERGE_PATCH",
    "PATCH_TYPES",
    "STRATEGIC_PATCH",
    "Patcher",
]

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)
MAX_JSON_PATCH_OPERATIONS = 10_000
"""kube-apiserver's cap on the operations of one JSON patch (more is a 413)."""

GetStored = Callable[[KindInfo, str, str], JSONDict]
"""(kind, namespace, name) -> the stored object; raises NotFound."""
Convert = Callable[[KindInfo, JSONDict, str], JSONDict]
"""(kind, object, version) -> the object in the other form (storage version or the client's)."""


class UpdateStored(Protocol):
    """The ordinary update path: admission, metadata rules, status split, no-op detection."""

    def __call__(
        self,
        kind: KindInfo,
        current: JSONDict,
        new: JSONDict,
        *,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
        managed: bool = False,
    ) -> JSONDict: ...


class CreateStored(Protocol):
    """The ordinary create path (an apply to a missing object creates it)."""

    def __call__(
        self,
        kind: KindInfo,
        namespace: str,
        obj: JSONDict,
        *,
        version: str,
        dry_run: bool,
        field_manager: str | None,
        managed: bool = False,
    ) -> JSONDict: ...


MAX_PATCH_CONFLICT_RETRIES = 5
"""kube-apiserver's maxRetryWhenPatchConflicts: how often a patch is re-applied to a newer object."""


class Patcher:
    """Turns a PATCH into an update (or, for apply, a create) through the write paths it is given."""

    def __init__(
        self,
        *,
        get_stored: GetStored,
        to_version: Convert,
        to_storage: Convert,
        update_stored: UpdateStored,
        create_stored: CreateStored,
        now: Callable[[], str],
    ) -> None:
        self._get_stored = get_stored
        self._to_version = to_version
        self._to_storage = to_storage
        self._update_stored = update_stored
        self._create_stored = create_stored
        self._now = now

    def patch(
        self,
        kind: KindInfo,
        namespace: str,
        name: str,
        patch: bytes,
        content_type: str,
        *,
        version: str,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
        force: bool,
        field_validation: str | None,
    ) -> tuple[JSONDict, list[str]]:
        """Apply the patch to the stored object and write the result.

        Another write can land between the read and the write (this call may wait for a webhook in
        between): kube-apiserver then applies the patch again to the new object, up to
        ``MAX_PATCH_CONFLICT_RETRIES`` times, instead of answering 409. A patch that names a
        resourceVersion still gets its 409: on the retry its precondition no longer holds."""
        attempt_patch = functools.partial(
            self._patch_once,
            kind,
            namespace,
            name,
            patch,
            content_type,
            version=version,
            subresource=subresource,
            dry_run=dry_run,
            field_manager=field_manager,
            force=force,
            field_validation=field_validation,
        )
        for attempt in range(MAX_PATCH_CONFLICT_RETRIES + 1):
            try:
                return attempt_patch()
            except Conflict:
                if attempt == MAX_PATCH_CONFLICT_RETRIES:
                    raise
        raise AssertionError("unreachable")  # the loop returns or raises

    def _patch_once(
        self,
        kind: KindInfo,
        namespace: str,
        name: str,
        patch: bytes,
        content_type: str,
        *,
        version: str,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
        force: bool,
        field_validation: str | None,
    ) -> tuple[JSONDict, list[str]]:
        media = content_type.split(";", 1)[0].strip().lower()  # no Content-Type is no patch type
        if media == APPLY_PATCH:
            return self._apply(
                kind,
                namespace,
                name,
                patch,
                version=version,
                subresource=subresource,
                dry_run=dry_run,
                field_manager=field_manager,
                force=force,
                field_validation=field_validation,
            )
        if media not in PATCH_TYPES or (media == STRATEGIC_PATCH and kind.is_crd):
            raise unsupported([t for t in PATCH_TYPES if not (kind.is_crd and t == STRATEGIC_PATCH)])
        document = decode_bytes(patch, media)
        ns = namespace if kind.namespaced else ""
        current = self._get_stored(kind, ns, name)
        # read-only here: every patch function works on its own copy of it (and of the patch)
        visible = self._to_version(kind, current, version)
        patched = _apply_patch(kind, media, visible, document)
        if not isinstance(patched, dict):
            raise BadRequest("the patch did not produce an object")
        obj = typed_body(kind, patched, version, owned=True)
        warnings = check_fields(kind, obj, version, field_validation, unchanged_from=visible)
        check_shape(kind, obj, version, unchanged_from=visible)
        metadata = om.meta(obj)
        if metadata.get("name") not in (None, name):
            raise BadRequest(
                f"the name of the object ({metadata.get('name')}) does not match the name on the URL ({name})"
            )
        expected = metadata.get("resourceVersion")
        if expected and expected != current["metadata"].get("resourceVersion"):
            raise Conflict.stale(kind.plural, name, kind.group)
        new = self._to_storage(kind, obj, version)
        stored = self._update_stored(
            kind, current, new, subresource=subresource, dry_run=dry_run, field_manager=field_manager
        )
        return self._to_version(kind, stored, version), warnings

    def _apply(
        self,
        kind: KindInfo,
        namespace: str,
        name: str,
        body: bytes,
        *,
        version: str,
        subresource: str,
        dry_run: bool,
        field_manager: str | None,
        force: bool,
        field_validation: str | None,
    ) -> tuple[JSONDict, list[str]]:
        """Server-side apply: create when missing, else merge by field ownership."""
        if not field_manager:
            raise BadRequest("PATCH, fieldManager: Required value: is required for apply patch")
        applied = decode_bytes(body, APPLY_PATCH)
        if not isinstance(applied, dict):
            raise BadRequest("the body of the request must be a YAML or JSON object")
        if not applied.get("apiVersion") or not applied.get("kind"):
            raise BadRequest("apiVersion and kind must be set in an apply patch")
        obj = typed_body(kind, applied, version)
        warnings = check_fields(kind, obj, version, field_validation)
        check_shape(kind, obj, version)
        metadata = om.meta(obj)
        if metadata.get("name") not in (None, "", name):
            raise BadRequest(
                f"the name of the object ({metadata.get('name')}) does not match the name on the URL ({name})"
            )
        metadata["name"] = name
        ns = namespace if kind.namespaced else ""
        merge_keys = list_keys_of(kind, version)
        _fill_key_defaults(obj, KEY_DEFAULTS.get((kind.group, kind.kind), {}))
        now = self._now()
        try:
            current = self._get_stored(kind, ns, name)
        except NotFound:
            if subresource:
                raise
            result = server_side_apply(None, obj, manager=field_manager, force=force, merge_keys=merge_keys, now=now)
            created = self._create_stored(
                kind, ns, result, version=version, dry_run=dry_run, field_manager=None, managed=True
            )
            return self._to_version(kind, created, version), warnings
        if subresource and subresource not in kind.subresources:
            raise NotFound("the server could not find the requested resource")
        expected = metadata.get("resourceVersion")
        if expected and expected != current["metadata"].get("resourceVersion"):
            raise Conflict.stale(kind.plural, name, kind.group)
        # server_side_apply never mutates its inputs (and ``current`` is this call's own decode), and
        # its result is built for this call: neither needs a deep copy (each cost ~5 % of the write)
        visible = self._to_version(kind, current, version)
        result = server_side_apply(
            visible, obj, manager=field_manager, force=force, merge_keys=merge_keys, now=now, subresource=subresource
        )
        new = self._to_storage(kind, typed_body(kind, result, version, owned=True), version)
        stored = self._update_stored(
            kind, current, new, subresource=subresource, dry_run=dry_run, field_manager=None, managed=True
        )
        return self._to_version(kind, stored, version), warnings


def _fill_key_defaults(obj: JSONDict, defaults: dict[str, dict[str, str]]) -> None:
    """Set the defaulted key fields an applied list item leaves out (in place; ``obj`` is private)."""
    for path, fields in defaults.items():
        node: Any = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        for item in node if isinstance(node, list) else ():
            if isinstance(item, dict):
                for name, value in fields.items():
                    item.setdefault(name, value)


def _apply_patch(kind: KindInfo, media: str, current: JSONDict, document: Any) -> Any:
    if media == JSON_PATCH:
        if not isinstance(document, list):
            raise BadRequest("json patch must be a list of operations")
        if len(document) > MAX_JSON_PATCH_OPERATIONS:
            raise RequestEntityTooLarge(
                f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(document)}"
            )
        return patches.apply_json_patch(current, document)
    if not isinstance(document, dict):
        raise BadRequest("the patch must be a JSON object")
    if media == MERGE_PATCH:
        return patches.apply_merge_patch(current, document)
    return patches.apply_strategic_merge_patch(current, document, kind.strategic_merge_keys)
