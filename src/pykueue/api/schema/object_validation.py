"""Generic validation of one object: ``KindInfo.validate(obj, old)`` and unknown-field detection.

Owns the order kube-apiserver checks a write in: object metadata (name format, labels,
annotations), then the structural schema of the object's version with its CEL rules (``oldSelf``
bound on update), then the kind's own rules, which the kind's package hands in (Kueue's webhooks,
the built-in kinds' rules). Called by the registry after defaulting, on the storage-version object;
``old`` is the stored object (``None`` on create).

Invariant: returns every problem it finds as a :class:`FieldError`; never raises on user input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pykueue.api.meta import names
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.api.schema import structural
from pykueue.api.schema.defaults import schema_defaulter

__all__ = ["KindRule", "unknown_fields", "validate_object", "with_checks"]

KindRule = Callable[[JSONDict, JSONDict | None], list[FieldError]]
"""A kind's own rules beyond its schema: (object, stored object or None) -> the problems found."""


def _version(obj: JSONDict, info: KindInfo) -> str:
    api_version = str(obj.get("apiVersion") or "")
    version = api_version.rsplit("/", 1)[-1] if api_version else info.storage_version
    return version if version in info.versions else info.storage_version


def validate_object(
    info: KindInfo,
    obj: JSONDict,
    old: JSONDict | None,
    *,
    rule: KindRule | None = None,
    webhook: str = "",
    rule_version: str = "",
    name_format: str = "subdomain",
) -> list[FieldError]:
    """Metadata + schema (+CEL) + the kind's ``rule`` for ``obj`` in its own apiVersion.

    ``rule_version``: the version the rule reads (Kueue's hub); an object in another version is
    converted with ``info.convert`` first. ``webhook``: the validating webhook the rule stands for.
    ``name_format``: "subdomain" (most kinds) or "label" (a Namespace's name is a DNS label).
    """
    if not isinstance(obj, dict):
        return [FieldError("", "Invalid value: the object must be a JSON object", "FieldValueTypeInvalid")]
    meta = obj.get("metadata")
    if _same_checked_metadata(meta, old):
        errors: list[FieldError] = []  # what it checks is what the stored object passed with
    else:
        errors = names.validate_metadata(meta, name_format=name_format)
    version = _version(obj, info)
    schema = info.schema.get(version) if info.schema else None
    if schema:
        top = _without_metadata(schema)
        body = {k: v for k, v in obj.items() if k != "metadata"}
        old_body = {k: v for k, v in old.items() if k != "metadata"} if isinstance(old, dict) else None
        errors.extend(structural.validate_schema(top, body, old_body))
    if rule is not None:
        if rule_version and version != rule_version:
            hub = info.convert(obj, rule_version)
            hub_old = info.convert(old, rule_version) if old is not None else None
            found = rule(hub, hub_old)
        else:
            found = rule(obj, old)
        errors.extend(replace(e, webhook=webhook) for e in found)
    return list(dict.fromkeys(errors))  # the same problem found by schema and rule is reported once


_TOPS: dict[int, tuple[JSONDict, JSONDict]] = {}


def _without_metadata(schema: JSONDict) -> JSONDict:
    """The object's schema minus ``metadata``, which is the registry's (objectmeta) and
    ``names.validate_metadata``'s. Built once per schema (the walker memoises per schema node)."""
    hit = _TOPS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    top = {
        **schema,
        "required": [r for r in schema.get("required") or () if r != "metadata"],
        "properties": {k: v for k, v in (schema.get("properties") or {}).items() if k != "metadata"},
    }
    if len(_TOPS) >= 1024:  # tests build throwaway schemas; the catalogue's live on
        _TOPS.clear()
    _TOPS[id(schema)] = (schema, top)
    return top


_CHECKED_METADATA = ("name", "generateName", "labels", "annotations")
"""What ``names.validate_metadata`` reads: the only inputs of its verdict."""


def _same_checked_metadata(meta: object, old: JSONDict | None) -> bool:
    """On update, are the metadata fields ``names.validate_metadata`` reads unchanged? Then its
    verdict is the stored object's, which passed it (a status write re-checked every label)."""
    if not isinstance(old, dict) or not isinstance(meta, dict):
        return False
    old_meta = old.get("metadata")
    if not isinstance(old_meta, dict):
        return False
    return all(meta.get(k) == old_meta.get(k) for k in _CHECKED_METADATA)


def with_checks(
    info: KindInfo,
    *,
    rule: KindRule | None = None,
    webhook: str = "",
    rule_version: str = "",
    name_format: str = "subdomain",
    schema_defaults: bool = False,
    hand_written: Callable[[JSONDict], None] | None = None,
) -> KindInfo:
    """``info`` with its ``default`` and ``validate`` hooks set (its ``convert`` must be set already).

    ``schema_defaults``: fill the schema's defaults (kinds served as CRDs); ``hand_written``: the
    kind's own defaults, run after them on a private copy. The rest is :func:`validate_object`'s.
    """

    def validate(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
        return validate_object(
            checked, obj, old, rule=rule, webhook=webhook, rule_version=rule_version, name_format=name_format
        )

    default = schema_defaulter(info.schema if schema_defaults else None, info.storage_version, hand_written)
    checked = replace(info, default=default, validate=validate)
    return checked


def unknown_fields(info: KindInfo, version: str, obj: JSONDict, metadata_schema: JSONDict) -> list[str]:
    """Paths of fields ``obj`` carries that the kind's schema in ``version`` does not declare.

    The registry uses it for ``fieldValidation``: Strict -> 400 with
    :func:`pykueue.api.schema.structural.strict_decoding_error`, Warn -> one warning per path.
    ``metadata`` is checked against ``metadata_schema`` (ObjectMeta's) for every kind.
    """
    schema = info.schema.get(version) if info.schema else None
    if not schema or not isinstance(obj, dict):
        return []
    found: list[str] = []
    body = {k: v for k, v in obj.items() if k != "metadata"}
    found.extend(structural.unknown_field_paths(schema, body))
    if isinstance(obj.get("metadata"), dict):
        found.extend(structural.unknown_field_paths(metadata_schema, obj["metadata"], "metadata"))
    return found
