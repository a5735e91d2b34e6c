"""API discovery: ``/api``, ``/apis``, ``/apis/<g>``, ``/api/v1``, ``/apis/<g>/<v>``, and the
aggregated discovery document (``apidiscovery.k8s.io/v2``) kubectl 1.30+ asks for first.

Owned by ``apiserver/``; built from the registry's kinds, so every served kind (and each of its
subresources) is discoverable the same way a CRD is on a real cluster. Documents are pure
functions of the kind list and are cached by the app.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

__all__ = [
    "CRD_GROUP",
    "CRD_VERSION",
    "aggregated",
    "api_group",
    "api_group_list",
    "api_versions",
    "group_versions",
    "resource_list",
]

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUBRESOURCE_VERBS = {"status": ["get", "patch", "update"], "scale": ["get", "patch", "update"], "log": ["get"]}
CRD_GROUP = "apiextensions.k8s.io"
CRD_VERSION = "v1"


def storage_version_hash(group: str, version: str, kind: str) -> str:
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def group_versions(kinds: Iterable[KindInfo]) -> dict[str, list[str]]:
    """group -> versions (preferred first), in a stable order; the core group is ""."""
    out: dict[str, list[str]] = {}
    for kind in sorted(kinds, key=lambda k: (k.group, k.plural)):
        versions = out.setdefault(kind.group, [])
        for version in kind.versions:
            if version not in versions:
                versions.append(version)
    return {group: sorted(versions, key=version_priority) for group, versions in out.items()}


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """kube's order of versions, preferred first: v2, v1, v1beta2, v1beta1, v1alpha1, then others by name."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    return (stage, -int(match.group(1)), -int(match.group(3) or 0), version)


def _gv(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def api_versions() -> JSONDict:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    }


def api_group(group: str, versions: list[str]) -> JSONDict:
    entries = [{"groupVersion": _gv(group, v), "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(kinds: Iterable[KindInfo]) -> JSONDict:
    groups = [api_group(g, vs) for g, vs in group_versions(kinds).items() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def resource_list(kinds: Iterable[KindInfo], group: str, version: str) -> JSONDict:
    resources: list[JSONDict] = []
    for kind in sorted(kinds, key=lambda k: k.plural):
        if kind.group != group or version not in kind.versions:
            continue
        entry: JSONDict = {
            "name": kind.plural,
            "singularName": kind.singular,
            "namespaced": kind.namespaced,
            "kind": kind.kind,
            "verbs": VERBS,
            "storageVersionHash": storage_version_hash(group, kind.storage_version, kind.kind),
        }
        if kind.short_names:
            entry["shortNames"] = list(kind.short_names)
        if kind.categories:
            entry["categories"] = list(kind.categories)
        resources.append(entry)
        for sub in kind.subresources:
            resources.append(
                {
                    "name": f"{kind.plural}/{sub}",
                    "singularName": "",
                    "namespaced": kind.namespaced,
                    "kind": kind.kind,
                    "verbs": SUBRESOURCE_VERBS.get(sub, ["get"]),
                }
            )
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": _gv(group, version), "resources": resources}


def _aggregated_resource(kind: KindInfo, version: str) -> JSONDict:
    response_kind = {"group": kind.group, "version": version, "kind": kind.kind}
    entry: JSONDict = {
        "resource": kind.plural,
        "responseKind": response_kind,
        "scope": "Namespaced" if kind.namespaced else "Cluster",
        "singularResource": kind.singular,
        "verbs": VERBS,
    }
    if kind.short_names:
        entry["shortNames"] = list(kind.short_names)
    if kind.categories:
        entry["categories"] = list(kind.categories)
    if kind.subresources:
        entry["subresources"] = [
            {"subresource": sub, "responseKind": response_kind, "verbs": SUBRESOURCE_VERBS.get(sub, ["get"])}
            for sub in kind.subresources
        ]
    return entry


def aggregated(kinds: Iterable[KindInfo], *, legacy: bool) -> JSONDict:
    """``APIGroupDiscoveryList`` for ``/api`` (legacy=True: the core group) or ``/apis``."""
    kinds = list(kinds)
    items: list[JSONDict] = []
    for group, versions in group_versions(kinds).items():
        if (group == "") != legacy:
            continue
        version_entries: list[JSONDict] = []
        for version in versions:
            resources = [
                _aggregated_resource(k, version)
                for k in sorted(kinds, key=lambda k: k.plural)
                if k.group == group and version in k.versions
            ]
            version_entries.append({"version": version, "resources": resources, "freshness": "Current"})
        metadata: JSONDict = {"creationTimestamp": None}
        if group:
            metadata["name"] = group
        items.append({"metadata": metadata, "versions": version_entries})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}
