"""OpenAPI documents: ``/openapi/v2`` and ``/openapi/v3`` (root + one document per group-version).

Owned by ``apiserver/``. kubectl 1.32 reads ``/openapi/v3`` (the root lists
``{"paths": {"apis/<g>/<v>": {"serverRelativeURL": "/openapi/v3/apis/<g>/<v>?hash=..."}}}``) and
then fetches each group-version document it needs:
- ``kubectl explain`` finds the schema in ``components.schemas`` whose
  ``x-kubernetes-group-version-kind`` names the kind, and walks its properties;
- server-side field validation detection (QueryParamVerifierV3) looks for a path with a PATCH
  operation tagged with the kind's GVK that declares the ``fieldValidation`` (and ``dryRun``) query
  parameters;
- client-side ``kubectl apply`` builds a strategic merge patch only when the PATCH request body
  lists ``application/strategic-merge-patch+json`` (built-in kinds), a JSON merge patch otherwise
  (CRDs), exactly as against a real cluster.
Documents are built once per kind list and cached with a content hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cached_property

import orjson

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo

from .discovery import group_versions

__all__ = ["OpenAPI", "schema_name"]

_PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"]
_SMP = "application/strategic-merge-patch+json"


def schema_name(kind: KindInfo, version: str) -> str:
    """kube's definition names: ``io.k8s.api.batch.v1.Job``, ``io.x-k8s.kueue.v1beta2.ClusterQueue``."""
    if not kind.is_crd:
        short = kind.group.split(".", 1)[0] if kind.group else "core"
        return f"io.k8s.api.{short}.{version}.{kind.kind}"
    reversed_group = ".".join(reversed(kind.group.split(".")))
    return f"{reversed_group}.{version}.{kind.kind}"


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _param(name: str, description: str, schema_type: str = "string") -> JSONDict:
    return {"name": name, "in": "query", "description": description, "schema": {"type": schema_type,
                                                                             "uniqueItems": True}}


_DRY_RUN = _param("dryRun", "When present, indicates that modifications should not be persisted. Valid "
                             "values are: - All: all dry run stages will be processed")
_FIELD_MANAGER = _param("fieldManager", "fieldManager is a name associated with the actor or entity that is "
                                        "making these changes.")
_FIELD_VALIDATION = _param("fieldValidation", "fieldValidation instructs the server on how to handle objects "
                                              "in the request containing unknown or duplicate fields: "
                                              "Ignore, Warn or Strict.")
_FORCE = _param("force", "Force is going to \"force\" Apply requests.", "boolean")


class OpenAPI:
    def __init__(self, kinds: Iterable[KindInfo], object_meta: JSONDict | None) -> None:
        self._kinds = list(kinds)
        self._object_meta = object_meta or {"type": "object"}
        self._docs: dict[str, bytes] = {}

    # ------------------------------------------------------------------ v3

    @cached_property
    def _versions(self) -> dict[str, list[str]]:
        return group_versions(self._kinds)

    def v3_paths(self) -> list[str]:
        return [_gv_path(g, v) for g, vs in self._versions.items() for v in vs]

    def v3_document(self, path: str) -> bytes | None:
        """The serialized document for ``api/v1`` / ``apis/<g>/<v>``, or None if unknown."""
        if path in self._docs:
            return self._docs[path]
        for group, versions in self._versions.items():
            for version in versions:
                if _gv_path(group, version) == path:
                    self._docs[path] = orjson.dumps(self._build_v3(group, version))
                    return self._docs[path]
        return None

    def v3_hash(self, path: str) -> str:
        document = self.v3_document(path) or b""
        return hashlib.sha512(document).hexdigest()[:64].upper()

    def v3_root(self) -> JSONDict:
        return {"paths": {p: {"serverRelativeURL": f"/openapi/v3/{p}?hash={self.v3_hash(p)}"}
                          for p in self.v3_paths()}}

    def _kind_schema(self, kind: KindInfo, version: str) -> JSONDict:
        try:
            schema = dict(kind.schema[version])
        except KeyError:
            schema = {"type": "object"}
        properties = dict(schema.get("properties") or {})
        metadata = properties.get("metadata")
        if not isinstance(metadata, dict) or "properties" not in metadata:
            properties["metadata"] = {**self._object_meta, "description":
                                      "Standard object's metadata. More info: https://git.k8s.io/community/"
                                      "contributors/devel/sig-architecture/api-conventions.md#metadata"}
        properties.setdefault("apiVersion", {"type": "string", "description": "APIVersion defines the "
                                             "versioned schema of this representation of an object."})
        properties.setdefault("kind", {"type": "string", "description": "Kind is a string value "
                                       "representing the REST resource this object represents."})
        schema["properties"] = properties
        schema.setdefault("type", "object")
        schema["x-kubernetes-group-version-kind"] = [{"group": kind.group, "kind": kind.kind, "version": version}]
        return schema

    def _build_v3(self, group: str, version: str) -> JSONDict:
        schemas: JSONDict = {}
        paths: JSONDict = {}
        prefix = "/" + _gv_path(group, version)
        for kind in self._kinds:
            if kind.group != group or version not in kind.versions:
                continue
            name = schema_name(kind, version)
            schemas[name] = self._kind_schema(kind, version)
            list_name = f"{name}List"
            schemas[list_name] = {
                "type": "object", "description": f"{kind.kind}List is a list of {kind.kind}",
                "required": ["items"],
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                               "metadata": {"type": "object"},
                               "items": {"type": "array", "items": {"$ref": f"#/components/schemas/{name}"}}},
                "x-kubernetes-group-version-kind": [{"group": group, "kind": f"{kind.kind}List",
                                                     "version": version}]}
            gvk = {"group": group, "version": version, "kind": kind.kind}
            ref = {"$ref": f"#/components/schemas/{name}"}
            body = {"application/json": {"schema": ref}, "application/yaml": {"schema": ref}}
            ok = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
            scope = f"{prefix}/namespaces/{{namespace}}/{kind.plural}" if kind.namespaced else f"{prefix}/{kind.plural}"
            patch_types = _PATCH_TYPES + ([] if kind.is_crd else [_SMP])
            item = {
                "get": {"operationId": f"read{kind.kind}", "responses": ok,
                        "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk},
                "put": {"operationId": f"replace{kind.kind}", "requestBody": {"content": body}, "responses": ok,
                        "parameters": [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                        "x-kubernetes-action": "put", "x-kubernetes-group-version-kind": gvk},
                "patch": {"operationId": f"patch{kind.kind}",
                          "requestBody": {"content": {t: {"schema": {"type": "object"}} for t in patch_types}},
                          "responses": ok, "parameters": [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION, _FORCE],
                          "x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk},
                "delete": {"operationId": f"delete{kind.kind}", "responses": ok, "parameters": [_DRY_RUN],
                           "x-kubernetes-action": "delete", "x-kubernetes-group-version-kind": gvk},
                "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
            }
            paths[f"{scope}/{{name}}"] = item
            paths[scope] = {
                "get": {"operationId": f"list{kind.kind}", "responses": {"200": {"description": "OK"}},
                        "x-kubernetes-action": "list", "x-kubernetes-group-version-kind": gvk},
                "post": {"operationId": f"create{kind.kind}", "requestBody": {"content": body}, "responses": ok,
                         "parameters": [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                         "x-kubernetes-action": "post", "x-kubernetes-group-version-kind": gvk},
            }
            for sub in kind.subresources:
                if sub == "status":
                    paths[f"{scope}/{{name}}/status"] = {k: v for k, v in item.items() if k != "delete"}
        return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
                "paths": paths, "components": {"schemas": schemas}}

    # ------------------------------------------------------------------ v2

    @cached_property
    def v2_document(self) -> bytes:
        definitions: JSONDict = {}
        for kind in self._kinds:
            for version in kind.versions:
                definitions[schema_name(kind, version)] = self._kind_schema(kind, version)
        return orjson.dumps({"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"},
                             "paths": {}, "definitions": definitions})
