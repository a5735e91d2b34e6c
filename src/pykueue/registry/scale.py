"""The ``scale`` subresource of custom resources: ``autoscaling/v1`` Scale read from and written to the
paths the CRD names (``specReplicasPath``, ``statusReplicasPath``, ``labelSelectorPath``).

Owned by ``registry/``. ``kubectl scale`` PATCHes (or GETs then PUTs) ``<object>/scale``; the
HorizontalPodAutoscaler reads it. A write changes only the replicas at ``specReplicasPath`` and goes
through the object's own admission (schema, CEL rules, webhooks), like kube-apiserver's.

Invariant: the Scale's resourceVersion is the object's; a stale one is a 409.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import json_merge_patch
import jsonpatch

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.errors import BadRequest, Conflict, Invalid
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.api.meta.kind_info import KindInfo

from .bodies import decode_bytes, unsupported

if TYPE_CHECKING:
    from .resource_registry import Registry

__all__ = ["get_scale", "patch_scale", "update_scale"]

_MERGE_TYPES = (
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def _path(path: str) -> list[str]:
    return [p for p in path.lstrip(".").split(".") if p]


def _read(obj: JSONDict, path: str) -> Any:
    node: Any = obj
    for part in _path(path):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _write(obj: JSONDict, path: str, value: Any) -> None:
    parts = _path(path)
    node = obj
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = value


def _scale_of(kind: KindInfo, obj: JSONDict) -> JSONDict:
    metadata = obj.get("metadata") or {}
    replicas = _read(obj, kind.scale.get("specReplicasPath", ".spec.replicas"))
    current = _read(obj, kind.scale.get("statusReplicasPath", ".status.replicas"))
    status: JSONDict = {"replicas": current if isinstance(current, int) else 0}
    selector_path = kind.scale.get("labelSelectorPath")
    if selector_path:
        selector = _read(obj, selector_path)
        if isinstance(selector, str) and selector:
            status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: metadata[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in metadata
        },
        "spec": {"replicas": replicas if isinstance(replicas, int) else 0},
        "status": status,
    }


def get_scale(registry: Registry, kind: KindInfo, namespace: str, name: str) -> JSONDict:
    return _scale_of(kind, registry.get_stored(kind, namespace, name))


def update_scale(
    registry: Registry,
    kind: KindInfo,
    namespace: str,
    name: str,
    scale: Any,
    *,
    dry_run: bool = False,
    field_manager: str | None = None,
) -> JSONDict:
    """Set the replicas of ``scale`` (an autoscaling/v1 Scale) on the object; the new Scale."""
    if not isinstance(scale, dict):
        raise BadRequest("the body of the request must be a JSON or YAML object")
    replicas = (scale.get("spec") or {}).get("replicas") if isinstance(scale.get("spec"), dict) else None
    if replicas is None:
        replicas = 0
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise Invalid(
            "Scale", name, [fe.type_invalid("spec.replicas", replicas, "must be an integer")], group="autoscaling"
        )
    if replicas < 0:
        raise Invalid(
            "Scale",
            name,
            [fe.invalid("spec.replicas", replicas, "must be greater than or equal to 0")],
            group="autoscaling",
        )
    current = registry.get_stored(kind, namespace, name)
    expected = (scale.get("metadata") or {}).get("resourceVersion") if isinstance(scale.get("metadata"), dict) else None
    if expected and expected != current["metadata"].get("resourceVersion"):
        raise Conflict.stale(kind.plural, name, kind.group)
    new = json_copy(current)
    _write(new, kind.scale.get("specReplicasPath", ".spec.replicas"), replicas)
    stored = registry.update_stored(
        kind, current, new, subresource="scale", dry_run=dry_run, field_manager=field_manager
    )
    return _scale_of(kind, stored)


def patch_scale(
    registry: Registry,
    kind: KindInfo,
    namespace: str,
    name: str,
    patch: bytes,
    content_type: str,
    *,
    dry_run: bool = False,
    field_manager: str | None = None,
) -> JSONDict:
    """``kubectl scale``: a merge (or JSON) patch of the Scale, written as :func:`update_scale`."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in ("application/json-patch+json", *_MERGE_TYPES):
        raise unsupported(["application/json-patch+json", *_MERGE_TYPES])
    scale = get_scale(registry, kind, namespace, name)
    body = decode_bytes(patch, media)
    if media == "application/json-patch+json":
        try:
            patched = jsonpatch.apply_patch(scale, body)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
            raise BadRequest(f"the server rejected our request due to an error in our request: {exc}") from None
    else:
        if not isinstance(body, dict):
            raise BadRequest("the body of the request must be a JSON or YAML object")
        patched = json_merge_patch.merge(json_copy(scale), body)
    if isinstance(patched, dict) and isinstance(patched.get("metadata"), dict):
        patched["metadata"].pop("resourceVersion", None)  # a patch applies to the latest version
    return update_scale(registry, kind, namespace, name, patched, dry_run=dry_run, field_manager=field_manager)
