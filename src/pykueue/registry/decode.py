"""Request bodies into objects: decoding, type checks, and ``fieldValidation``.

Owned by ``registry/``; the registry calls it first on every create/update/patch. Owns what
kube-apiserver's decoder does before admission, once the body's bytes are JSON values
(:mod:`.bodies`): the body's ``apiVersion``/``kind`` against the URL, and unknown fields under
``fieldValidation=Strict|Warn|Ignore`` (Strict -> 400 ``strict decoding error: unknown field
"spec.foo"``; Warn -> one warning per field; unknown fields are pruned in Warn/Ignore, as a
structural CRD schema prunes them).

Invariant: never returns an object that aliases the caller's dict; never raises anything but
``BadRequest``.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.errors import BadRequest
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.api.schema.structural import strict_decoding_error, unknown_field_paths

from .admission import clone

__all__ = ["FIELD_VALIDATION", "api_version", "check_fields", "typed_body"]

FIELD_VALIDATION = ("Strict", "Warn", "Ignore")

_OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata"})


def api_version(kind: KindInfo, version: str) -> str:
    return f"{kind.group}/{version}" if kind.group else version


def typed_body(kind: KindInfo, body: Any, version: str, *, owned: bool = False) -> JSONDict:
    """A private copy of ``body`` with apiVersion/kind checked against the URL and filled in
    (``owned``: ``body`` is already the caller's private object, e.g. a patch result: no copy)."""
    if not isinstance(body, dict):
        raise BadRequest("the body of the request must be a JSON or YAML object")
    try:
        obj: JSONDict = body if owned else clone(body)
    except TypeError as err:  # an in-process caller's value JSON cannot hold (an integer past 64 bits)
        raise BadRequest(f"the object cannot be encoded as JSON: {err}") from None
    expected = api_version(kind, version)
    given_kind = obj.get("kind")
    if given_kind not in (None, "") and given_kind != kind.kind:
        raise BadRequest(f"the kind in the data ({given_kind}) does not match the expected kind ({kind.kind})")
    given_version = obj.get("apiVersion")
    if given_version not in (None, "") and given_version != expected:
        raise BadRequest(
            f"the API version in the data ({given_version}) does not match the expected API version ({expected})"
        )
    obj["apiVersion"] = expected
    obj["kind"] = kind.kind
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise BadRequest(
            'json: cannot unmarshal into Go struct field of type v1.ObjectMeta: "metadata" must be an object'
        )
    return obj


def check_fields(
    kind: KindInfo, obj: JSONDict, version: str, mode: str | None, unchanged_from: JSONDict | None = None
) -> list[str]:
    """Enforce ``fieldValidation``: raise (Strict), or prune and return warnings (Warn/Ignore).

    ``unchanged_from``: the stored object a patch was applied to (same version); fields equal to
    its own (at any level: properties by name, list items by index) came from storage, which holds
    no unknown fields, and are not walked again.
    """
    mode = mode or "Strict"
    if mode not in FIELD_VALIDATION:
        raise BadRequest(f'invalid fieldValidation directive: "{mode}", must be one of "Strict", "Warn" or "Ignore"')
    paths = _unknown_paths(kind, obj, version, unchanged_from)
    if not paths:
        return []
    if mode == "Strict":
        raise BadRequest(strict_decoding_error(paths))
    _prune(kind, obj, version)
    if mode == "Warn":
        return [f'unknown field "{p}"' for p in paths]
    return []


def _schema(kind: KindInfo, version: str) -> JSONDict:
    try:
        schema = kind.schema[version]
    except KeyError:
        return {}
    return schema if isinstance(schema, dict) else {}


def _unknown_paths(kind: KindInfo, obj: JSONDict, version: str, unchanged_from: JSONDict | None = None) -> list[str]:
    paths: list[str] = []
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        paths.extend(f"metadata.{k}" for k in metadata if k not in _OBJECT_META_FIELDS)
    schema = _schema(kind, version)
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return paths
    body = {k: v for k, v in obj.items() if k not in _TOP_LEVEL}
    top = {**schema, "properties": {k: v for k, v in properties.items() if k not in _TOP_LEVEL}}
    paths.extend(unknown_field_paths(top, body, old=unchanged_from))
    return paths


def _prune(kind: KindInfo, obj: JSONDict, version: str) -> None:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        for key in [k for k in metadata if k not in _OBJECT_META_FIELDS]:
            del metadata[key]
    schema = _schema(kind, version)
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return
    for key in [k for k in obj if k not in _TOP_LEVEL]:
        if key not in properties and not _open(schema):
            del obj[key]
        elif key in properties:
            obj[key] = _prune_value(properties[key], obj[key])


def _open(schema: JSONDict) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("additionalProperties"))


def _prune_value(schema: Any, value: Any) -> Any:
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        if properties is None:
            if isinstance(extra, dict):
                return {k: _prune_value(extra, v) for k, v in value.items()}
            return value
        out: JSONDict = {}
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for key, child in value.items():
            if embedded and key in _TOP_LEVEL and key not in properties:
                out[key] = child  # an embedded object keeps its apiVersion, kind and metadata
            elif key in properties:
                out[key] = _prune_value(properties[key], child)
            elif isinstance(extra, dict):
                out[key] = _prune_value(extra, child)
            elif extra or schema.get("x-kubernetes-preserve-unknown-fields"):
                out[key] = child
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_prune_value(schema["items"], item) for item in value]
    return value
