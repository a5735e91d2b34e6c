"""The read-only ``apiextensions.k8s.io/v1`` CustomResourceDefinition listing.

Owned by ``apiserver/``. Kueue's (and JobSet's) kinds are served as CRDs; this lists them the way
``kubectl get crd`` expects. The documents come from ``pykueue.api.crds`` when the api layer
provides it (the same CRDs ``pykueue install`` renders), else they are derived from the catalogue.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterable
from typing import Any

import orjson
from aiohttp import web

from pykueue.api.errors import BadRequest, NotFound
from pykueue.api.kinds import KindInfo

__all__ = ["crd_list", "crd_table", "find_crd", "stream_crd_watch"]

JSONDict = dict[str, Any]
_CRD_RV = "1"
_MAX_WATCH_SECONDS = 1800.0
"""CRDs never change here; an open watch only carries bookmarks, and ends like kube's (≤ 30 min)."""


def _from_api() -> list[JSONDict] | None:
    try:
        from pykueue.api import crds  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return None
    render = getattr(crds, "custom_resource_definitions", None)
    if render is None:
        return None
    return list(render())


def _derived(kind: KindInfo) -> JSONDict:
    versions: list[JSONDict] = []
    for version in kind.versions:
        try:
            schema = kind.schema[version]
        except KeyError:
            schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        entry: JSONDict = {"name": version, "served": True, "storage": version == kind.storage_version,
                           "schema": {"openAPIV3Schema": schema}}
        if version in kind.deprecated_versions:
            entry["deprecated"] = True
            entry["deprecationWarning"] = kind.deprecated_versions[version]
        if "status" in kind.subresources:
            entry["subresources"] = {"status": {}}
        columns = kind.printer_columns.get(version) or ()
        if columns:
            entry["additionalPrinterColumns"] = [
                {k: v for k, v in {"name": c.name, "type": c.type, "jsonPath": c.json_path,
                                   "priority": c.priority or None, "description": c.description or None,
                                   "format": c.format or None}.items() if v is not None} for c in columns]
        versions.append(entry)
    names: JSONDict = {"plural": kind.plural, "singular": kind.singular, "kind": kind.kind,
                       "listKind": f"{kind.kind}List"}
    if kind.short_names:
        names["shortNames"] = list(kind.short_names)
    if kind.categories:
        names["categories"] = list(kind.categories)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{kind.plural}.{kind.group}"},
            "spec": {"group": kind.group, "names": names,
                     "scope": "Namespaced" if kind.namespaced else "Cluster", "versions": versions},
            "status": {"acceptedNames": names, "storedVersions": [kind.storage_version],
                       "conditions": [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                                       "message": "the initial names have been accepted"}]}}


def _all(kinds: Iterable[KindInfo], created: str) -> list[JSONDict]:
    rendered = _from_api()
    crds = rendered if rendered is not None else [
        _derived(k) for k in sorted(kinds, key=lambda k: (k.group, k.plural)) if k.is_crd]
    out: list[JSONDict] = []
    for crd in crds:
        name = (crd.get("metadata") or {}).get("name", "")
        metadata = {**(crd.get("metadata") or {}), "creationTimestamp": created, "generation": 1,
                    "resourceVersion": "1", "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"crd/{name}"))}
        out.append({**crd, "metadata": metadata})
    return out


def crd_list(kinds: Iterable[KindInfo], created: str) -> JSONDict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinitionList",
            "metadata": {"resourceVersion": _CRD_RV}, "items": _all(kinds, created)}


def crd_table(crds: list[JSONDict], table_version: str) -> JSONDict:
    """``kubectl get crd``: NAME and CREATED AT, as kube-apiserver prints them."""
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "Name of the CRD",
                "priority": 0},
               {"name": "Created At", "type": "date", "format": "", "description": "creation time",
                "priority": 0}]
    rows = [{"cells": [c["metadata"]["name"], c["metadata"]["creationTimestamp"]],
             "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                        "metadata": c["metadata"]}} for c in crds]
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{table_version}", "metadata": {"resourceVersion": "1"},
            "columnDefinitions": columns, "rows": rows}


def find_crd(kinds: Iterable[KindInfo], name: str, created: str) -> JSONDict:
    for crd in _all(kinds, created):
        if (crd.get("metadata") or {}).get("name") == name:
            return crd
    raise NotFound.object("customresourcedefinitions", name, "apiextensions.k8s.io")


async def stream_crd_watch(request: web.Request, crds: list[JSONDict], *,
                           bookmark_interval: float) -> web.StreamResponse:
    """``?watch=true`` on CRDs: the same event stream kube-apiserver sends, for a set that never changes.

    Controllers such as kopf watch CRDs to follow the served kinds. Initial ADDED events are sent when
    no (or a "0") resourceVersion is given or with ``sendInitialEvents``; after that the stream stays
    open (with BOOKMARKs if allowed) until ``timeoutSeconds`` or the client leaves.
    """
    query = request.query
    since = query.get("resourceVersion", "")
    send_initial = query.get("sendInitialEvents", "").lower() == "true"
    bookmarks = query.get("allowWatchBookmarks", "").lower() in ("true", "1")
    try:
        timeout = min(float(query.get("timeoutSeconds", _MAX_WATCH_SECONDS)), _MAX_WATCH_SECONDS)
    except ValueError:
        raise BadRequest(f"invalid timeoutSeconds: {query.get('timeoutSeconds')!r}") from None
    response = web.StreamResponse(headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    await response.prepare(request)
    lines = []
    if since in ("", "0") or send_initial:
        lines = [orjson.dumps({"type": "ADDED", "object": crd}) + b"\n" for crd in crds]
    if send_initial:
        lines.append(orjson.dumps({"type": "BOOKMARK", "object": _bookmark(initial_end=True)}) + b"\n")
    if lines:
        await response.write(b"".join(lines))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (left := deadline - loop.time()) > 0:
        await asyncio.sleep(min(left, bookmark_interval))
        if request.transport is None or request.transport.is_closing():
            break
        if bookmarks and deadline - loop.time() > 0:
            await response.write(orjson.dumps({"type": "BOOKMARK", "object": _bookmark()}) + b"\n")
    with contextlib.suppress(ConnectionError):
        await response.write_eof()
    return response


def _bookmark(*, initial_end: bool = False) -> JSONDict:
    meta: JSONDict = {"resourceVersion": _CRD_RV}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1", "metadata": meta}
