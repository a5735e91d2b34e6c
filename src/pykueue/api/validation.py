"""Validation for every served kind: ``KindInfo.validate(obj, old)`` and unknown-field detection.

Owns the order kube-apiserver checks a write in: object metadata (name format, labels,
annotations), then the structural schema of the object's version with its CEL rules (``oldSelf``
bound on update), then the kind's own rules — Kueue's webhooks (:mod:`kueue_validation`,
:mod:`workload_validation`) or the built-in kinds' (:mod:`core_validation`). Called by the registry
after defaulting, on the storage-version object; ``old`` is the stored object (``None`` on create).

Invariant: returns every problem it finds as a :class:`FieldError`; never raises on user input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pykueue.api import builtin_validation, core_validation, kueue_validation, names, structural, workload_validation
from pykueue.api.kinds import FieldError, JSONDict, KindInfo, find_kind

__all__ = ["unknown_fields", "validate", "validate_object"]

_KindRule = Callable[[JSONDict, JSONDict | None], list[FieldError]]

_RULES: dict[tuple[str, str], _KindRule] = {
    ("kueue.x-k8s.io", "ClusterQueue"): kueue_validation.validate_cluster_queue,
    ("kueue.x-k8s.io", "Cohort"): kueue_validation.validate_cohort,
    ("kueue.x-k8s.io", "ResourceFlavor"): kueue_validation.validate_resource_flavor,
    ("kueue.x-k8s.io", "Workload"): workload_validation.validate_workload,
    ("batch", "Job"): core_validation.validate_job,
    ("", "Pod"): core_validation.validate_pod,
    ("scheduling.k8s.io", "PriorityClass"): core_validation.validate_priority_class,
    ("jobset.x-k8s.io", "JobSet"): core_validation.validate_jobset,
    **builtin_validation.RULES,
}

_WEBHOOKS: dict[tuple[str, str], str] = {
    ("kueue.x-k8s.io", "ClusterQueue"): "vclusterqueue.kb.io",
    ("kueue.x-k8s.io", "Cohort"): "vcohort.kb.io",
    ("kueue.x-k8s.io", "ResourceFlavor"): "vresourceflavor.kb.io",
    ("kueue.x-k8s.io", "Workload"): "vworkload.kb.io",
}
"""The kinds whose rules are Kueue's validating webhooks (by Kueue's webhook names): what they find
reaches the client as a webhook denial (403), not as a schema error (422)."""

# Kinds whose names must be DNS labels rather than subdomains.
_LABEL_NAMED = {("", "Namespace")}


def _version(obj: JSONDict, info: KindInfo) -> str:
    api_version = str(obj.get("apiVersion") or "")
    version = api_version.rsplit("/", 1)[-1] if api_version else info.storage_version
    return version if version in info.versions else info.storage_version


def validate_object(info: KindInfo, obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    """Metadata + schema (+CEL) + kind rules for ``obj`` in its own apiVersion."""
    if not isinstance(obj, dict):
        return [FieldError("", "Invalid value: the object must be a JSON object", "FieldValueTypeInvalid")]
    name_format = "label" if (info.group, info.kind) in _LABEL_NAMED else "subdomain"
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
    rule = _RULES.get((info.group, info.kind))
    if rule is not None:
        if info.group == "kueue.x-k8s.io" and version != "v1beta2":
            hub = info.convert(obj, "v1beta2")
            hub_old = info.convert(old, "v1beta2") if old is not None else None
            found = rule(hub, hub_old)
        else:
            found = rule(obj, old)
        webhook = _WEBHOOKS.get((info.group, info.kind), "")
        errors.extend(replace(e, webhook=webhook) for e in found)
    return list(dict.fromkeys(errors))  # the same problem found by schema and rule is reported once


_TOPS: dict[int, tuple[JSONDict, JSONDict]] = {}


def _without_metadata(schema: JSONDict) -> JSONDict:
    """The object's schema minus ``metadata``, which is the registry's (objectmeta) and
    ``names.validate_metadata``'s. Built once per schema (the walker memoises per schema node)."""
    hit = _TOPS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    top = {**schema, "required": [r for r in schema.get("required") or () if r != "metadata"],
           "properties": {k: v for k, v in (schema.get("properties") or {}).items() if k != "metadata"}}
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


def validate(group: str, kind: str, obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    info = find_kind(group, kind)
    if info is None:
        return []
    return validate_object(info, obj, old)


def unknown_fields(info: KindInfo, version: str, obj: JSONDict) -> list[str]:
    """Paths of fields ``obj`` carries that the kind's schema in ``version`` does not declare.

    The registry uses it for ``fieldValidation``: Strict -> 400 with
    :func:`pykueue.api.structural.strict_decoding_error`, Warn -> one warning per path.
    ``metadata`` is checked against ObjectMeta for every kind.
    """
    from pykueue.api import core_schemas

    schema = info.schema.get(version) if info.schema else None
    if not schema or not isinstance(obj, dict):
        return []
    found: list[str] = []
    body = {k: v for k, v in obj.items() if k != "metadata"}
    found.extend(structural.unknown_field_paths(schema, body))
    if isinstance(obj.get("metadata"), dict):
        found.extend(structural.unknown_field_paths(core_schemas.shared_model_schema("V1ObjectMeta"), obj["metadata"],
                                                    "metadata"))
    return found
