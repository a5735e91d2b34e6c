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
Operations are declared the way kube-apiserver's documents declare them, so a generic OpenAPI
client or fuzzer can use them unpatched: ``{namespace}`` and ``{name}`` path parameters (on the path
item), the list parameters (``labelSelector``, ``fieldSelector``, ``limit``, ``continue``), request
bodies (the kind's schema for POST/PUT, the patch media types for PATCH) and the responses
``200``/``201``/``202`` with the object's schema and ``401``. ``/openapi/v2`` holds the same paths
in Swagger 2.0 (a ``body`` parameter, ``consumes``/``produces``, ``#/definitions/`` references).
Documents are built once per kind list and cached with a content hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cached_property
from typing import Any

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


def _param(name: str, description: str, schema_type: str = "string", where: str = "query") -> JSONDict:
    """A parameter as kube's v3 documents write one (``paths_v2`` turns it into Swagger 2.0)."""
    return {
        "name": name,
        "in": where,
        "description": description,
        **({"required": True} if where == "path" else {}),
        "schema": {"type": schema_type, "uniqueItems": True},
    }


_DRY_RUN = _param(
    "dryRun",
    "When present, indicates that modifications should not be persisted. Valid "
    "values are: - All: all dry run stages will be processed",
)
_FIELD_MANAGER = _param(
    "fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."
)
_FIELD_VALIDATION = _param(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects "
    "in the request containing unknown or duplicate fields: "
    "Ignore, Warn or Strict.",
)
_FORCE = _param("force", 'Force is going to "force" Apply requests.', "boolean")
_NAME = _param("name", "name of the object", where="path")
_NAMESPACE = _param("namespace", "object name and auth scope, such as for teams and projects", where="path")
_LIST = [
    _param("labelSelector", "A selector to restrict the list of returned objects by their labels."),
    _param("fieldSelector", "A selector to restrict the list of returned objects by their fields."),
    _param("limit", "limit is a maximum number of responses to return for a list call.", "integer"),
    _param("continue", "The continue option should be set when retrieving more results from the server."),
]
_PROPAGATION = _param(
    "propagationPolicy", "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'."
)
_MEDIA = ("application/json", "application/yaml")
_UNAUTHORIZED = {"401": {"description": "Unauthorized"}}


def _responses(schema: JSONDict, *codes: tuple[str, str]) -> JSONDict:
    """kube's responses: the success codes with the object, and 401 (errors are ``Status`` objects)."""
    content = {media: {"schema": schema} for media in _MEDIA}
    return {**{code: {"description": text, "content": content} for code, text in codes}, **_UNAUTHORIZED}


_OK = ("200", "OK")
_CREATED = ("201", "Created")
_ACCEPTED = ("202", "Accepted")


def _operations(kind: KindInfo, group: str, version: str, ref: str, list_ref: str) -> dict[str, JSONDict]:
    """The v3 path items of one kind: collection, object and ``status``, keyed by path."""
    prefix = "/" + _gv_path(group, version)
    scope = f"{prefix}/namespaces/{{namespace}}/{kind.plural}" if kind.namespaced else f"{prefix}/{kind.plural}"
    scope_params = [_NAMESPACE] if kind.namespaced else []
    gvk = {"group": group, "version": version, "kind": kind.kind}
    obj = {"$ref": ref}
    body = {"content": {media: {"schema": obj} for media in _MEDIA}, "required": True}
    patch_types = _PATCH_TYPES + ([] if kind.is_crd else [_SMP])
    patch_body = {"content": {t: {"schema": {"type": "object"}} for t in patch_types}, "required": True}
    writes = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]

    def op(action: str, operation_id: str, responses: JSONDict, **extra: Any) -> JSONDict:
        return {
            "operationId": operation_id,
            "responses": responses,
            **extra,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        }

    item: JSONDict = {
        "get": op("get", f"read{kind.kind}", _responses(obj, _OK)),
        "put": op("put", f"replace{kind.kind}", _responses(obj, _OK, _CREATED), requestBody=body, parameters=writes),
        "patch": op(
            "patch",
            f"patch{kind.kind}",
            _responses(obj, _OK, _CREATED),
            requestBody=patch_body,
            parameters=[*writes, _FORCE],
        ),
        "delete": op(
            "delete",
            f"delete{kind.kind}",
            _responses({"type": "object"}, _OK, _ACCEPTED),
            parameters=[_DRY_RUN, _PROPAGATION],
        ),
        "parameters": [_NAME, *scope_params],
    }
    paths: dict[str, JSONDict] = {
        scope: {
            "get": op("list", f"list{kind.kind}", _responses({"$ref": list_ref}, _OK), parameters=_LIST),
            "post": op(
                "post",
                f"create{kind.kind}",
                _responses(obj, _OK, _CREATED, _ACCEPTED),
                requestBody=body,
                parameters=writes,
            ),
            "parameters": scope_params,
        },
        f"{scope}/{{name}}": item,
    }
    if "status" in kind.subresources:
        paths[f"{scope}/{{name}}/status"] = {
            k: ({**v, "operationId": v["operationId"] + "Status"} if k in ("get", "put", "patch") else v)
            for k, v in item.items()
            if k != "delete"
        }
    return paths


def _v2_operation(operation: JSONDict) -> JSONDict:
    """A v3 operation in Swagger 2.0: a ``body`` parameter, ``consumes``/``produces``, bare schemas."""
    out = {k: v for k, v in operation.items() if k not in ("requestBody", "responses", "parameters")}
    parameters = [_v2_parameter(p) for p in operation.get("parameters", [])]
    request = operation.get("requestBody")
    if request is not None:
        media, first = next(iter(request["content"].items()))
        parameters.append({"name": "body", "in": "body", "required": True, "schema": _v2_refs(first["schema"])})
        out["consumes"] = list(request["content"]) if media != _MEDIA[0] else ["*/*"]
    if parameters:
        out["parameters"] = parameters
    out["produces"] = list(_MEDIA)
    out["responses"] = {
        code: (
            {"description": r["description"], "schema": _v2_refs(next(iter(r["content"].values()))["schema"])}
            if "content" in r
            else r
        )
        for code, r in operation["responses"].items()
    }
    return out


def _v2_parameter(parameter: JSONDict) -> JSONDict:
    out = {k: v for k, v in parameter.items() if k != "schema"}
    out["type"] = parameter["schema"]["type"]
    out["uniqueItems"] = True
    return out


def _v2_refs(schema: JSONDict) -> JSONDict:
    ref = schema.get("$ref")
    return {"$ref": ref.replace("#/components/schemas/", "#/definitions/")} if isinstance(ref, str) else schema


class OpenAPI:
    def __init__(
        self, kinds: Iterable[KindInfo], object_meta: JSONDict | None, extra: dict[str, JSONDict] | None = None
    ) -> None:
        """``extra``: v3 documents of groups served without stored kinds (``apis/<g>/<v>`` -> document)."""
        self._kinds = list(kinds)
        self._object_meta = object_meta or {"type": "object"}
        self._docs: dict[str, bytes] = {}
        self._extra = dict(extra or {})

    # ------------------------------------------------------------------ v3

    @cached_property
    def _versions(self) -> dict[str, list[str]]:
        return group_versions(self._kinds)

    def v3_paths(self) -> list[str]:
        paths = [_gv_path(g, v) for g, vs in self._versions.items() for v in vs]
        return [*paths, *(p for p in self._extra if p not in paths)]

    def v3_document(self, path: str) -> bytes | None:
        """The serialized document for ``api/v1`` / ``apis/<g>/<v>``, or None if unknown."""
        if path in self._docs:
            return self._docs[path]
        if path in self._extra:
            self._docs[path] = orjson.dumps(self._extra[path])
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
        return {"paths": {p: {"serverRelativeURL": f"/openapi/v3/{p}?hash={self.v3_hash(p)}"} for p in self.v3_paths()}}

    def _kind_schema(self, kind: KindInfo, version: str) -> JSONDict:
        try:
            schema = dict(kind.schema[version])
        except KeyError:
            schema = {"type": "object"}
        properties = dict(schema.get("properties") or {})
        metadata = properties.get("metadata")
        if not isinstance(metadata, dict) or "properties" not in metadata:
            properties["metadata"] = {
                **self._object_meta,
                "description": "Standard object's metadata. More info: https://git.k8s.io/community/"
                "contributors/devel/sig-architecture/api-conventions.md#metadata",
            }
        properties.setdefault(
            "apiVersion",
            {
                "type": "string",
                "description": "APIVersion defines the versioned schema of this representation of an object.",
            },
        )
        properties.setdefault(
            "kind",
            {
                "type": "string",
                "description": "Kind is a string value representing the REST resource this object represents.",
            },
        )
        schema["properties"] = properties
        schema.setdefault("type", "object")
        schema["x-kubernetes-group-version-kind"] = [{"group": kind.group, "kind": kind.kind, "version": version}]
        return schema

    @staticmethod
    def _list_schema(kind: KindInfo, version: str, name: str) -> JSONDict:
        return {
            "type": "object",
            "description": f"{kind.kind}List is a list of {kind.kind}",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object"},
                "items": {"type": "array", "items": {"$ref": f"#/components/schemas/{name}"}},
            },
            "x-kubernetes-group-version-kind": [{"group": kind.group, "kind": f"{kind.kind}List", "version": version}],
        }

    def _build_v3(self, group: str, version: str) -> JSONDict:
        schemas: JSONDict = {}
        paths: JSONDict = {}
        for kind in self._kinds:
            if kind.group != group or version not in kind.versions:
                continue
            name = schema_name(kind, version)
            schemas[name] = self._kind_schema(kind, version)
            list_name = f"{name}List"
            schemas[list_name] = self._list_schema(kind, version, name)
            paths.update(
                _operations(kind, group, version, f"#/components/schemas/{name}", f"#/components/schemas/{list_name}")
            )
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "v1.32.0"},
            "paths": paths,
            "components": {"schemas": schemas},
        }

    # ------------------------------------------------------------------ v2

    @cached_property
    def v2_document(self) -> bytes:
        definitions: JSONDict = {}
        paths: JSONDict = {}
        for kind in self._kinds:
            for version in kind.versions:
                name = schema_name(kind, version)
                definitions[name] = self._kind_schema(kind, version)
                definitions[f"{name}List"] = _v2_refs_deep(self._list_schema(kind, version, name))
                for path, item in _operations(
                    kind, kind.group, version, f"#/definitions/{name}", f"#/definitions/{name}List"
                ).items():
                    paths[path] = {
                        k: ([_v2_parameter(p) for p in v] if k == "parameters" else _v2_operation(v))
                        for k, v in item.items()
                    }
        return orjson.dumps(
            {
                "swagger": "2.0",
                "info": {"title": "Kubernetes", "version": "v1.32.0"},
                "paths": paths,
                "definitions": definitions,
            }
        )


def _v2_refs_deep(schema: JSONDict) -> JSONDict:
    items = schema["properties"]["items"]
    return {**schema, "properties": {**schema["properties"], "items": {**items, "items": _v2_refs(items["items"])}}}
