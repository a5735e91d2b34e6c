"""``TokenReview`` and ``SubjectAccessReview``: the two questions a delegating server asks the API server.

Owned by ``apiserver/``. A component that serves its own HTTPS endpoint behind Kubernetes identities
(``pykueue controller``'s metrics, Kueue's controller-manager's through controller-runtime) does not
know the cluster's tokens or its RBAC; it asks the API server, as kube-apiserver answers them::

    POST /apis/authentication.k8s.io/v1/tokenreviews          -> 201, status.authenticated / user
    POST /apis/authorization.k8s.io/v1/subjectaccessreviews   -> 201, status.allowed / denied / reason

Both are create-only and cluster-scoped; nothing is stored. The answer is the request object with its
``status`` filled in (and ``metadata: {creationTimestamp: null}``, as kube's encoder writes an
unstored object). Fails closed as kube-apiserver does: a TokenReview without ``spec.token`` is a 400;
a SubjectAccessReview naming neither or both of ``resourceAttributes``/``nonResourceAttributes``, or
neither a user nor a group, or with metadata, is a 422 naming the field; a field of the wrong JSON type
a 400 naming it; a body of another kind or version a 400; any other method a 405.

What the embedded server answers:

- TokenReview: the token is checked exactly as the server checks its own requests' bearer tokens (the
  kubeconfig's admin token, ``--token-auth-file``); an unknown token is ``authenticated`` false with
  an empty ``user``, as kube's. The server has no API audiences (no service-account issuer): a review
  that names ``spec.audiences`` is not authenticated, as kube-apiserver's static token authenticator
  answers when the audiences do not meet its own;
- SubjectAccessReview: the server enforces no RBAC (every identity it authenticates may do
  everything), so the review is ``allowed`` for every subject but an anonymous one
  (``system:anonymous`` or the group ``system:unauthenticated``), which the server never serves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.errors import BadRequest, Invalid, MethodNotAllowed
from pykueue.api.meta.json_types import JSONDict
from pykueue.registry.bodies import JSON, YAML, decode_object, media_type, unsupported
from pykueue.registry.suspend import UserInfo

from .http import json_response, read_body

__all__ = [
    "AUTHENTICATION",
    "AUTHORIZATION",
    "GROUPS",
    "REVIEW_PATHS",
    "VERSION",
    "add_to_aggregated",
    "add_to_group_list",
    "api_group",
    "openapi_documents",
    "resource_list",
    "review_routes",
    "subject_access_review",
    "token_review",
]

AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
VERSION = "v1"
GROUPS = (AUTHENTICATION, AUTHORIZATION)
_RESOURCES = {
    AUTHENTICATION: ("tokenreviews", "tokenreview", "TokenReview"),
    AUTHORIZATION: ("subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview"),
}
REVIEW_PATHS = {group: f"/apis/{group}/{VERSION}/{plural}" for group, (plural, _, _) in _RESOURCES.items()}
ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
ALLOWED_REASON = "pykueue's API server enforces no RBAC: every authenticated user may make every request"
ANONYMOUS_REASON = "pykueue's API server serves no anonymous requests"

Authenticate = Callable[[str], UserInfo | None]
"""A bearer token -> the user it authenticates (None: unknown), as the server's own request check."""


# ---------------------------------------------------------------------- decoding


def _type_error(path: str, value: Any, expected: str) -> BadRequest:
    got = "null" if value is None else type(value).__name__
    return BadRequest(f"{path}: expected {expected}, got {got}")


def _object(value: Any, path: str) -> JSONDict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _type_error(path, value, "an object")
    return value


def _string(value: Any, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _type_error(path, value, "a string")
    return value


def _strings(value: Any, path: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _type_error(path, value, "a list of strings")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise _type_error(f"{path}[{index}]", item, "a string")
    return list(value)


def _extra(value: Any, path: str) -> dict[str, list[str]]:
    return {key: _strings(items, f"{path}.{key}") for key, items in _object(value, path).items()}


def _review_body(body: JSONDict, group: str) -> JSONDict:
    """The body checked against the endpoint's kind (absent apiVersion/kind default to it, as kube's decoder)."""
    kind = _RESOURCES[group][2]
    expected = f"{group}/{VERSION}"
    api_version = body.get("apiVersion", expected)
    if api_version != expected:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API version ({expected})"
        )
    if body.get("kind", kind) != kind:
        raise BadRequest(f"the kind in the data ({body.get('kind')}) does not match the expected kind ({kind})")
    return body


async def _read(request: web.Request, group: str) -> JSONDict:
    media = media_type(request.headers.get("Content-Type", ""))
    if media not in (JSON, YAML):
        raise unsupported((JSON, YAML))
    return _review_body(decode_object(await read_body(request), media), group)


def _answer(body: JSONDict, group: str, spec: JSONDict, status: JSONDict) -> JSONDict:
    metadata = {k: v for k, v in _object(body.get("metadata"), "metadata").items() if k != "creationTimestamp"}
    return {
        "kind": _RESOURCES[group][2],
        "apiVersion": f"{group}/{VERSION}",
        "metadata": {**metadata, "creationTimestamp": None},
        "spec": spec,
        "status": status,
    }


# ---------------------------------------------------------------------- the two reviews


def token_review(body: JSONDict, authenticate: Authenticate) -> JSONDict:
    """The TokenReview ``body`` answered (BadRequest for a missing token or a wrongly typed field)."""
    spec = _object(body.get("spec"), "spec")
    token = _string(spec.get("token"), "spec.token")
    audiences = _strings(spec.get("audiences"), "spec.audiences")
    if not token:
        raise BadRequest("token is required for TokenReview in authentication")
    user = None if audiences else authenticate(token)
    status: JSONDict = {"user": {}}
    if user is not None:
        status = {"authenticated": True, "user": user.to_json()}
    return _answer(body, AUTHENTICATION, spec, status)


def subject_access_review(body: JSONDict) -> JSONDict:
    """The SubjectAccessReview ``body`` answered (Invalid naming each bad field, BadRequest for a wrong type)."""
    spec = _object(body.get("spec"), "spec")
    resource = (
        _object(spec.get("resourceAttributes"), "spec.resourceAttributes") if "resourceAttributes" in spec else None
    )
    non_resource = (
        _object(spec.get("nonResourceAttributes"), "spec.nonResourceAttributes")
        if "nonResourceAttributes" in spec
        else None
    )
    user = _string(spec.get("user"), "spec.user")
    groups = _strings(spec.get("groups"), "spec.groups")
    _string(spec.get("uid"), "spec.uid")
    _extra(spec.get("extra"), "spec.extra")
    for section, path in ((resource, "spec.resourceAttributes"), (non_resource, "spec.nonResourceAttributes")):
        for key, value in (section or {}).items():
            if key in ("fieldSelector", "labelSelector"):
                _object(value, f"{path}.{key}")
            else:
                _string(value, f"{path}.{key}")
    errors: list[fe.FieldError] = []
    if resource is not None and non_resource is not None:
        errors.append(
            fe.invalid(
                "spec.nonResourceAttributes", non_resource, "cannot be specified in combination with resourceAttributes"
            )
        )
    if resource is None and non_resource is None:
        errors.append(
            fe.invalid(
                "spec.resourceAttributes",
                None,
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if not user and not groups:
        errors.append(fe.invalid("spec.user", user, "at least one of user or group must be specified"))
    metadata = {k: v for k, v in _object(body.get("metadata"), "metadata").items() if k not in ("managedFields",)}
    if metadata and metadata != {"creationTimestamp": None}:
        errors.append(fe.invalid("metadata", metadata, "must be empty"))
    if errors:
        raise Invalid("SubjectAccessReview", "", errors, AUTHORIZATION)
    anonymous = user == ANONYMOUS_USER or UNAUTHENTICATED_GROUP in groups
    status: JSONDict = {"allowed": not anonymous, "reason": ANONYMOUS_REASON if anonymous else ALLOWED_REASON}
    return _answer(body, AUTHORIZATION, spec, status)


def review_routes(app: web.Application, authenticate: Authenticate) -> None:
    """Serve both reviews on ``app`` (before its generic ``/apis/{group}/...`` routes)."""

    async def tokenreviews(request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        answer = token_review(await _read(request, AUTHENTICATION), authenticate)
        return json_response(answer, status=201)

    async def subjectaccessreviews(request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        answer = subject_access_review(await _read(request, AUTHORIZATION))
        return json_response(answer, status=201)

    app.router.add_route("*", REVIEW_PATHS[AUTHENTICATION], tokenreviews)
    app.router.add_route("*", REVIEW_PATHS[AUTHORIZATION], subjectaccessreviews)


# ---------------------------------------------------------------------- discovery


def _resource(group: str) -> JSONDict:
    plural, singular, kind = _RESOURCES[group]
    return {
        "name": plural,
        "singularName": singular,
        "namespaced": False,
        "kind": kind,
        "verbs": ["create"],
    }


def resource_list(group: str) -> JSONDict:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{VERSION}",
        "resources": [_resource(group)],
    }


def api_group(group: str) -> JSONDict:
    entry = {"groupVersion": f"{group}/{VERSION}", "version": VERSION}
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": [entry], "preferredVersion": entry}


def add_to_group_list(body: JSONDict) -> JSONDict:
    names = {g.get("name") for g in body.get("groups", [])}
    extra = [api_group(group) for group in GROUPS if group not in names]
    return {**body, "groups": [*body.get("groups", []), *extra]}


def add_to_aggregated(body: JSONDict) -> JSONDict:
    names = {(item.get("metadata") or {}).get("name") for item in body.get("items", [])}
    items = list(body.get("items", []))
    for group in GROUPS:
        if group in names:
            continue
        plural, singular, kind = _RESOURCES[group]
        resource = {
            "resource": plural,
            "responseKind": {"group": group, "version": VERSION, "kind": kind},
            "scope": "Cluster",
            "singularResource": singular,
            "verbs": ["create"],
        }
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [{"version": VERSION, "resources": [resource], "freshness": "Current"}],
            }
        )
    return {**body, "items": items}


# ---------------------------------------------------------------------- OpenAPI v3

_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
_EXTRA = {"type": "object", "additionalProperties": _STRINGS}
_SCHEMAS: dict[str, JSONDict] = {
    AUTHENTICATION: {
        "spec": {
            "type": "object",
            "description": "TokenReviewSpec is a description of the token authentication request.",
            "properties": {"token": _STRING, "audiences": _STRINGS},
        },
        "status": {
            "type": "object",
            "description": "TokenReviewStatus is the result of the token authentication request.",
            "properties": {
                "authenticated": {"type": "boolean"},
                "user": {
                    "type": "object",
                    "properties": {"username": _STRING, "uid": _STRING, "groups": _STRINGS, "extra": _EXTRA},
                },
                "audiences": _STRINGS,
                "error": _STRING,
            },
        },
    },
    AUTHORIZATION: {
        "spec": {
            "type": "object",
            "description": "SubjectAccessReviewSpec names a user and groups and the request to authorize "
            "(exactly one of resourceAttributes and nonResourceAttributes).",
            "properties": {
                "resourceAttributes": {
                    "type": "object",
                    "properties": {
                        **{
                            key: _STRING
                            for key in ("namespace", "verb", "group", "version", "resource", "subresource", "name")
                        },
                        "fieldSelector": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        "labelSelector": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                },
                "nonResourceAttributes": {"type": "object", "properties": {"path": _STRING, "verb": _STRING}},
                "user": _STRING,
                "groups": _STRINGS,
                "extra": _EXTRA,
                "uid": _STRING,
            },
        },
        "status": {
            "type": "object",
            "required": ["allowed"],
            "properties": {
                "allowed": {"type": "boolean"},
                "denied": {"type": "boolean"},
                "reason": _STRING,
                "evaluationError": _STRING,
            },
        },
    },
}


def _openapi_document(group: str, object_meta: JSONDict) -> JSONDict:
    plural, _, kind = _RESOURCES[group]
    short = group.split(".", 1)[0]
    name = f"io.k8s.api.{short}.{VERSION}.{kind}"
    gvk = {"group": group, "version": VERSION, "kind": kind}
    ref = {"$ref": f"#/components/schemas/{name}"}
    content = {media: {"schema": ref} for media in ("application/json", "application/yaml")}
    responses = {
        "200": {"description": "OK", "content": content},
        "201": {"description": "Created", "content": content},
        "202": {"description": "Accepted", "content": content},
        "401": {"description": "Unauthorized"},
    }
    parameters = [
        {"name": key, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
        for key in ("dryRun", "fieldManager", "fieldValidation")
    ]
    schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {
            "apiVersion": _STRING,
            "kind": _STRING,
            "metadata": object_meta,
            **_SCHEMAS[group],
        },
        "x-kubernetes-group-version-kind": [gvk],
    }
    operation = {
        "operationId": f"create{kind}",
        "requestBody": {"content": content, "required": True},
        "responses": responses,
        "parameters": parameters,
        "x-kubernetes-action": "post",
        "x-kubernetes-group-version-kind": gvk,
    }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": {f"/apis/{group}/{VERSION}/{plural}": {"post": operation}},
        "components": {"schemas": {name: schema}},
    }


def openapi_documents(object_meta: JSONDict) -> dict[str, JSONDict]:
    """The v3 documents of both groups (``apis/<group>/v1`` -> document): create only, as kube's."""
    return {f"apis/{group}/{VERSION}": _openapi_document(group, object_meta) for group in GROUPS}
