"""A served kind from a CustomResourceDefinition: what kube-apiserver builds when a CRD is established.

Owns the translation CRD object -> :class:`KindInfo`: names, scope, the served versions (storage
version first), each version's schema, printer columns, selectable fields, the ``status`` and
``scale`` subresources, and the three hooks every custom resource gets: schema defaults
(``default``), metadata + structural schema + CEL rules (``validate``, via
:func:`pykueue.api.schema.object_validation.validate_object`) and ``conversion.strategy: None`` (only
``apiVersion`` changes between versions). Kinds whose admission logic pykueue implements (Kueue's
and JobSet's webhooks) are looked up by group/kind in ``known`` and keep their own hooks.

Also owns the KindInfo of ``customresourcedefinitions.apiextensions.k8s.io`` itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pykueue.api.kinds.custom import crd_rules
from pykueue.api.meta.field_errors import FieldError
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.api.meta.kind_info import KindInfo, PrinterColumn
from pykueue.api.schema import object_validation
from pykueue.api.schema.defaults import apply_schema_defaults

__all__ = ["CRD_GROUP", "CRD_KIND", "CRD_RESOURCE", "CRD_VERSION", "crd_names", "custom_kind", "list_keys"]

CRD_GROUP = "apiextensions.k8s.io"
CRD_VERSION = "v1"
CRD_RESOURCE = "customresourcedefinitions.apiextensions.k8s.io"


def _dict(value: Any) -> JSONDict:
    return value if isinstance(value, dict) else {}


def crd_names(crd: JSONDict) -> JSONDict:
    """``spec.names`` with kube's defaults (``singular`` = lower-case kind, ``listKind`` = kind+List)."""
    names = dict(_dict(_dict(crd.get("spec")).get("names")))
    kind = str(names.get("kind") or "")
    names.setdefault("singular", kind.lower())
    names.setdefault("listKind", f"{kind}List")
    return names


def _columns(version: JSONDict) -> tuple[PrinterColumn, ...]:
    return tuple(
        PrinterColumn(
            str(c.get("name", "")),
            str(c.get("type", "string")),
            str(c.get("jsonPath", "")),
            int(c.get("priority") or 0),
            str(c.get("description") or ""),
            str(c.get("format") or ""),
        )
        for c in version.get("additionalPrinterColumns") or ()
        if isinstance(c, dict)
    )


def list_keys(schema: Any, path: str = "") -> dict[str, str]:
    """Server-side apply's list identities from a structural schema: the dotted path of every list
    (indices elided) -> its ``x-kubernetes-list-map-keys`` joined by commas, or "" for a set."""
    out: dict[str, str] = {}
    if not isinstance(schema, dict):
        return out
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "map" and schema.get("x-kubernetes-list-map-keys"):
        out[path] = ",".join(str(k) for k in schema["x-kubernetes-list-map-keys"])
    elif list_type == "set":
        out[path] = ""
    for name, sub in _dict(schema.get("properties")).items():
        out.update(list_keys(sub, f"{path}.{name}" if path else str(name)))
    if isinstance(schema.get("items"), dict):
        out.update(list_keys(schema["items"], path))
    return out


def _version_name(obj: JSONDict, fallback: str) -> str:
    api_version = str(obj.get("apiVersion") or "")
    return api_version.rsplit("/", 1)[-1] if api_version else fallback


def _deprecation(group: str, version: str, names: JSONDict, versions: list[JSONDict]) -> str:
    """kube-apiserver's default warning: "<group>/<version> <Kind> is deprecated; use <group>/<v> <Kind>"."""
    kind = names.get("kind")
    message = f"{group}/{version} {kind} is deprecated"
    current = next((v["name"] for v in versions if not v.get("deprecated")), None)
    return f"{message}; use {group}/{current} {kind}" if current else message


def custom_kind(crd: JSONDict, known: Mapping[tuple[str, str], KindInfo] | None = None) -> KindInfo:
    """The kind an (accepted) CRD serves. ``known``: kinds whose hooks pykueue implements."""
    spec = _dict(crd.get("spec"))
    group = str(spec.get("group") or "")
    names = crd_names(crd)
    versions = [v for v in spec.get("versions") or () if isinstance(v, dict) and v.get("served")]
    versions.sort(key=lambda v: not v.get("storage"))
    storage = next((v for v in spec.get("versions") or () if isinstance(v, dict) and v.get("storage")), None)
    if storage is not None and not storage.get("served"):
        versions.insert(0, storage)  # stored but not served: kept first so storage_version is right
    schemas = {str(v["name"]): _dict(_dict(v.get("schema")).get("openAPIV3Schema")) for v in versions}
    first = versions[0] if versions else {}
    subresources = _dict(first.get("subresources"))
    selectable = tuple(str(f.get("jsonPath", "")) for f in first.get("selectableFields") or () if isinstance(f, dict))
    info = KindInfo(
        group=group,
        kind=str(names.get("kind") or ""),
        plural=str(names.get("plural") or ""),
        singular=str(names["singular"]),
        versions=tuple(str(v["name"]) for v in versions),
        namespaced=spec.get("scope") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        subresources=tuple(s for s in ("status", "scale") if s in subresources),
        printer_columns={str(v["name"]): _columns(v) for v in versions},
        schema=schemas,
        is_crd=True,
        selectable_fields=selectable,
        deprecated_versions={
            str(v["name"]): str(v.get("deprecationWarning") or _deprecation(group, str(v["name"]), names, versions))
            for v in versions
            if v.get("deprecated")
        },
        scale={k: str(v) for k, v in _dict(subresources.get("scale")).items() if isinstance(v, str)},
        strategic_merge_keys=list_keys(schemas.get(str(first.get("name")), {})),
    )
    hooked = (known or {}).get((group, info.kind))
    if hooked is not None:
        # Kueue's and JobSet's admission logic (defaulting, validation, conversion webhooks).
        return dataclasses.replace(
            info,
            default=hooked.default,
            validate=hooked.validate,
            convert=hooked.convert,
            schema=hooked.schema,
            strategic_merge_keys=hooked.strategic_merge_keys or info.strategic_merge_keys,
            deprecated_versions=hooked.deprecated_versions or info.deprecated_versions,
        )
    holder: list[KindInfo] = []

    def default(obj: JSONDict) -> JSONDict:
        out: JSONDict = json_copy(obj)
        schema = schemas.get(_version_name(obj, info.storage_version))
        if schema:
            apply_schema_defaults(schema, out)
        return out

    def validate(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
        return object_validation.validate_object(holder[0], obj, old)

    def convert(obj: JSONDict, to_version: str) -> JSONDict:
        return {**obj, "apiVersion": f"{group}/{to_version}"}

    served = dataclasses.replace(info, default=default, validate=validate, convert=convert)
    holder.append(served)
    return served


# ---------------------------------------------------------------------- the CRD kind itself


def _object(description: str, properties: JSONDict | None = None, **extra: Any) -> JSONDict:
    out: JSONDict = {"type": "object", "description": description, **extra}
    if properties is not None:
        out["properties"] = properties
    return out


def _string(description: str) -> JSONDict:
    return {"type": "string", "description": description}


def _strings(description: str) -> JSONDict:
    return {"type": "array", "description": description, "items": {"type": "string"}}


_NAMES = _object(
    "names specify the resource and kind names for the custom resource.",
    {
        "plural": _string("plural is the plural name of the resource to serve. Must be all lowercase."),
        "singular": _string("singular is the singular name of the resource. Defaults to lowercased kind."),
        "kind": _string("kind is the serialized kind of the resource. It is normally CamelCase and singular."),
        "listKind": _string('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".'),
        "shortNames": _strings("shortNames are short names for the resource, exposed in API discovery."),
        "categories": _strings(
            "categories is a list of grouped resources this custom resource belongs to (e.g. 'all')."
        ),
    },
    required=["plural", "kind"],
)
_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
_VERSION = _object(
    "CustomResourceDefinitionVersion describes a version for CRD.",
    {
        "name": _string('name is the version name, e.g. "v1", "v2beta1".'),
        "served": {
            "type": "boolean",
            "description": "served is a flag enabling/disabling this version from being served via REST APIs",
        },
        "storage": {
            "type": "boolean",
            "description": "storage indicates this version should be used when "
            "persisting custom resources to storage. There must be "
            "exactly one version with storage=true.",
        },
        "deprecated": {
            "type": "boolean",
            "description": "deprecated indicates this version of the custom resource API is deprecated.",
        },
        "deprecationWarning": _string("deprecationWarning overrides the default warning returned to API clients."),
        "schema": _object(
            "schema describes the schema used for validation, pruning, and defaulting of this "
            "version of the custom resource.",
            {
                "openAPIV3Schema": {
                    **_OPEN,
                    "description": "openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.",
                }
            },
        ),
        "subresources": _object(
            "subresources specify what subresources this version of the defined custom resource have.",
            {"status": _OPEN, "scale": _OPEN},
        ),
        "additionalPrinterColumns": {
            "type": "array",
            "description": "additionalPrinterColumns specifies additional columns returned in Table output.",
            "items": _OPEN,
        },
        "selectableFields": {
            "type": "array",
            "description": "selectableFields specifies paths to fields that may be used as field selectors.",
            "items": _OPEN,
        },
    },
    required=["name", "served", "storage"],
)
CRD_SCHEMA: JSONDict = _object(
    "CustomResourceDefinition represents a resource that should be exposed on the API server. Its name "
    "MUST be in the format <.spec.name>.<.spec.group>.",
    {
        "apiVersion": _string("APIVersion defines the versioned schema of this representation of an object."),
        "kind": _string("Kind is a string value representing the REST resource this object represents."),
        "metadata": {"type": "object"},
        "spec": _object(
            "spec describes how the user wants the resources to appear",
            {
                "group": _string("group is the API group of the defined custom resource."),
                "names": _NAMES,
                "scope": _string(
                    "scope indicates whether the defined custom resource is cluster- or "
                    "namespace-scoped. Allowed values are `Cluster` and `Namespaced`."
                ),
                "versions": {
                    "type": "array",
                    "description": "versions is the list of all API versions of the defined custom resource.",
                    "items": _VERSION,
                },
                "conversion": {**_OPEN, "description": "conversion defines conversion settings for the CRD."},
                "preserveUnknownFields": {
                    "type": "boolean",
                    "description": "preserveUnknownFields indicates "
                    "that object fields which are not specified in the OpenAPI schema "
                    "should be preserved when persisting to storage.",
                },
            },
            required=["group", "names", "scope", "versions"],
        ),
        "status": {**_OPEN, "description": "status indicates the actual state of the CustomResourceDefinition"},
    },
    required=["spec"],
)


def _validate_crd(obj: JSONDict, old: JSONDict | None) -> list[FieldError]:
    errors = object_validation.validate_object(CRD_KIND, obj, old)
    return errors + crd_rules.validate_crd(obj, old)


def _default_crd(obj: JSONDict) -> JSONDict:
    out: JSONDict = json_copy(obj)
    spec = out.get("spec")
    if isinstance(spec, dict):
        names = spec.get("names")
        if isinstance(names, dict) and isinstance(names.get("kind"), str):
            names.setdefault("singular", names["kind"].lower())
            names.setdefault("listKind", f"{names['kind']}List")
        spec.setdefault("conversion", {"strategy": "None"})
    return out


CRD_KIND = KindInfo(
    group=CRD_GROUP,
    kind="CustomResourceDefinition",
    plural="customresourcedefinitions",
    singular="customresourcedefinition",
    versions=(CRD_VERSION,),
    namespaced=False,
    short_names=("crd", "crds"),
    categories=("api-extensions",),
    subresources=("status",),
    printer_columns={CRD_VERSION: (PrinterColumn("Created At", "string", ".metadata.creationTimestamp"),)},
    schema={CRD_VERSION: CRD_SCHEMA},
    default=_default_crd,
    validate=_validate_crd,
)
