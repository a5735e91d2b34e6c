"""CustomResourceDefinition objects for every kind served as a CRD (Kueue's kinds, JobSet).

Owns the rendering ``KindInfo`` -> ``apiextensions.k8s.io/v1`` CRD: names, scope, every served
version with its structural schema, the storage flag, deprecation, the status subresource,
printer columns and selectable fields. ``pykueue install`` prints these and the embedded API
server lists/serves them, so a CRD installed into a real cluster and the embedded server agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pykueue.api.catalogue import build_catalogue
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

__all__ = ["custom_resource_definition", "custom_resource_definitions"]


def _columns(info: KindInfo, version: str) -> list[JSONDict]:
    out: list[JSONDict] = []
    for column in info.printer_columns.get(version, ()):
        entry: JSONDict = {"name": column.name, "type": column.type, "jsonPath": column.json_path}
        if column.priority:
            entry["priority"] = column.priority
        if column.description:
            entry["description"] = column.description
        if column.format:
            entry["format"] = column.format
        out.append(entry)
    return out


def _version(info: KindInfo, version: str) -> JSONDict:
    entry: JSONDict = {
        "name": version,
        "served": True,
        "storage": version == info.storage_version,
        "schema": {"openAPIV3Schema": info.schema[version]},
    }
    if version in info.deprecated_versions:
        entry["deprecated"] = True
        entry["deprecationWarning"] = info.deprecated_versions[version]
    if "status" in info.subresources:
        entry["subresources"] = {"status": {}}
    columns = _columns(info, version)
    if columns:
        entry["additionalPrinterColumns"] = columns
    if info.selectable_fields:
        entry["selectableFields"] = [{"jsonPath": path} for path in info.selectable_fields]
    return entry


def custom_resource_definition(info: KindInfo, *, conversion_webhook: JSONDict | None = None) -> JSONDict:
    """The CRD of one kind. ``conversion_webhook`` is a ``clientConfig`` (url or service + caBundle);
    without it multi-version CRDs use ``strategy: None`` (fine for the embedded server, which
    converts in process, but a real cluster needs the webhook for Kueue's v1beta1)."""
    names: JSONDict = {
        "kind": info.kind,
        "listKind": f"{info.kind}List",
        "plural": info.plural,
        "singular": info.singular,
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    if info.categories:
        names["categories"] = list(info.categories)
    spec: dict[str, Any] = {
        "group": info.group,
        "names": names,
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "versions": [_version(info, v) for v in info.versions],
    }
    if len(info.versions) > 1 and conversion_webhook is not None:
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {"clientConfig": conversion_webhook, "conversionReviewVersions": ["v1"]},
        }
    else:
        spec["conversion"] = {"strategy": "None"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{info.plural}.{info.group}"},
        "spec": spec,
    }


def custom_resource_definitions(
    *,
    conversion_webhook: JSONDict | None = None,
    groups: tuple[str, ...] | None = None,
    kinds: Iterable[KindInfo] | None = None,
) -> list[JSONDict]:
    """CRDs for every ``is_crd`` kind of ``kinds`` (pykueue's whole catalogue by default; optionally
    only those of ``groups``), in catalogue order."""
    served = build_catalogue() if kinds is None else kinds
    return [
        custom_resource_definition(info, conversion_webhook=conversion_webhook)
        for info in served
        if info.is_crd and (groups is None or info.group in groups)
    ]
