"""The identity and access reviews: ``TokenReview``, ``SubjectAccessReview`` and the "self" reviews.

Owned by ``apiserver/``. A component that serves its own HTTPS endpoint behind Kubernetes identities
(``pykueue controller``'s metrics, Kueue's controller-manager's through controller-runtime) does not
know the cluster's tokens or its RBAC; it asks the API server. A user asks about itself:
``kubectl auth can-i`` sends a SelfSubjectAccessReview (``--list``: a SelfSubjectRulesReview),
``kubectl auth whoami`` a SelfSubjectReview. All are answered as kube-apiserver answers them::

    POST /apis/authentication.k8s.io/v1/tokenreviews              -> 201, status.authenticated / user
    POST /apis/authentication.k8s.io/v1/selfsubjectreviews        -> 201, status.userInfo (the requester)
    POST /apis/authorization.k8s.io/v1/subjectaccessreviews       -> 201, status.allowed / denied / reason
    POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews   -> 201, the same, for the requester
    POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews    -> 201, status.resourceRules / ...

All are create-only and cluster-scoped; nothing is stored. The answer is the request object with its
``status`` filled in (and ``metadata: {creationTimestamp: null}``, as kube's encoder writes an
unstored object); a SelfSubjectReview's and a SelfSubjectRulesReview's answers are new objects (the
former stamped with the time it was made), as kube's.

Fails closed as kube-apiserver does: a TokenReview without ``spec.token`` or a SelfSubjectRulesReview
without ``spec.namespace`` is a 400; an access review naming neither or both of
``resourceAttributes``/``nonResourceAttributes`` or with metadata, or a SubjectAccessReview naming
neither a user nor a group, is a 422 naming the field; a field of the wrong JSON type a 400 naming it;
a body of another kind or version a 400; any other method a 405. Bodies may be JSON, YAML or protobuf
(:mod:`.protobuf`: what client-go's typed clients, kubectl's included, send). Unknown fields follow
``?fieldValidation`` as every other write's (:func:`pykueue.registry.decode.check_fields`): Strict ->
400 naming them, Warn (the default) -> dropped with a ``Warning`` header each, Ignore -> dropped.

What the embedded server answers:

- TokenReview: the token is checked exactly as the server checks its own requests' bearer tokens (the
  kubeconfig's admin token, ``--token-auth-file``); an unknown token is ``authenticated`` false with
  an empty ``user``, as kube's. The server has no API audiences (no service-account issuer): a review
  that names ``spec.audiences`` is not authenticated, as kube-apiserver's static token authenticator
  answers when the audiences do not meet its own;
- SelfSubjectReview: the user the request's bearer token authenticated (name, uid, groups);
- SubjectAccessReview and SelfSubjectAccessReview: the server enforces no RBAC (every identity it
  authenticates may do everything), so the review is ``allowed`` for every subject but an anonymous
  one (``system:anonymous`` or the group ``system:unauthenticated``), which the server never serves;
  a self review's subject is the requester, who is always authenticated, so it is always allowed;
- SelfSubjectRulesReview: the rules of kube's ``cluster-admin`` (every verb on every resource of
  every group, every verb on every non-resource URL), for every requester in every namespace.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from pykueue.api.meta import field_errors as fe
from pykueue.api.meta.errors import BadRequest, Invalid, MethodNotAllowed
from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.kind_info import KindInfo
from pykueue.registry.bodies import JSON, YAML, decode_object, media_type, unsupported
from pykueue.registry.decode import check_fields
from pykueue.registry.suspend import UserInfo

from .audit import USER_KEY
from .http import field_validation, json_response, read_body
from .protobuf import PROTOBUF, decode_protobuf
from .protobuf_layout import REVIEW_KINDS

__all__ = [
    "ALLOWED_REASON",
    "ANONYMOUS_REASON",
    "AUTHENTICATION",
    "AUTHORIZATION",
    "GROUPS",
    "REVIEWS",
    "SELF_SUBJECT_ACCESS_REVIEW",
    "SELF_SUBJECT_REVIEW",
    "SELF_SUBJECT_RULES_REVIEW",
    "SUBJECT_ACCESS_REVIEW",
    "TOKEN_REVIEW",
    "VERSION",
    "Review",
    "add_to_aggregated",
    "add_to_group_list",
    "api_group",
    "openapi_documents",
    "resource_list",
    "review_routes",
    "self_subject_access_review",
    "self_subject_review",
    "self_subject_rules_review",
    "subject_access_review",
    "token_review",
]

AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
VERSION = "v1"
GROUPS = (AUTHENTICATION, AUTHORIZATION)


@dataclass(frozen=True)
class Review:
    """One review kind: where it is served and what it is called."""

    group: str
    plural: str
    kind: str

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{VERSION}"

    @property
    def path(self) -> str:
        return f"/apis/{self.group}/{VERSION}/{self.plural}"


TOKEN_REVIEW = Review(AUTHENTICATION, "tokenreviews", "TokenReview")
SELF_SUBJECT_REVIEW = Review(AUTHENTICATION, "selfsubjectreviews", "SelfSubjectReview")
SUBJECT_ACCESS_REVIEW = Review(AUTHORIZATION, "subjectaccessreviews", "SubjectAccessReview")
SELF_SUBJECT_ACCESS_REVIEW = Review(AUTHORIZATION, "selfsubjectaccessreviews", "SelfSubjectAccessReview")
SELF_SUBJECT_RULES_REVIEW = Review(AUTHORIZATION, "selfsubjectrulesreviews", "SelfSubjectRulesReview")
REVIEWS = (
    SELF_SUBJECT_REVIEW,
    TOKEN_REVIEW,
    SELF_SUBJECT_ACCESS_REVIEW,
    SELF_SUBJECT_RULES_REVIEW,
    SUBJECT_ACCESS_REVIEW,
)
"""In kube-apiserver's discovery order (by resource name within each group)."""

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
ALLOWED_REASON = "pykueue's API server enforces no RBAC: every authenticated user may make every request"
ANONYMOUS_REASON = "pykueue's API server serves no anonymous requests"
EVERYTHING: JSONDict = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}
"""A SelfSubjectRulesReview's status for everyone: kube's ``cluster-admin`` rules (no RBAC is enforced)."""

_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
"""What a review body may be: client-go's typed clients (kubectl auth can-i, whoami) send protobuf."""

Authenticate = Callable[[str], UserInfo | None]
"""A bearer token -> the user it authenticates (None: unknown), as the server's own request check."""


# ---------------------------------------------------------------------- schemas

_STRING: JSONDict = {"type": "string"}
_STRINGS: JSONDict = {"type": "array", "items": _STRING}
_EXTRA: JSONDict = {"type": "object", "additionalProperties": _STRINGS}
_USER_INFO = {
    "type": "object",
    "description": "UserInfo holds the information about the user needed to implement the user.Info interface.",
    "properties": {"username": _STRING, "uid": _STRING, "groups": _STRINGS, "extra": _EXTRA},
}
_SELECTOR = {
    "type": "object",
    "properties": {
        "rawSelector": _STRING,
        "requirements": {
            "type": "array",
            "items": {"type": "object", "properties": {"key": _STRING, "operator": _STRING, "values": _STRINGS}},
        },
    },
}
_RESOURCE_ATTRIBUTES = {
    "type": "object",
    "description": "ResourceAttributes describes a request to the API server for a resource.",
    "properties": {
        **{key: _STRING for key in ("namespace", "verb", "group", "version", "resource", "subresource", "name")},
        "fieldSelector": _SELECTOR,
        "labelSelector": _SELECTOR,
    },
}
_NON_RESOURCE_ATTRIBUTES = {
    "type": "object",
    "description": "NonResourceAttributes describes a request to the API server for a path that is not a resource.",
    "properties": {"path": _STRING, "verb": _STRING},
}
_ACCESS_STATUS = {
    "type": "object",
    "description": "SubjectAccessReviewStatus: whether the request is allowed, and why.",
    "required": ["allowed"],
    "properties": {
        "allowed": {"type": "boolean"},
        "denied": {"type": "boolean"},
        "reason": _STRING,
        "evaluationError": _STRING,
    },
}
_SCHEMAS: dict[Review, JSONDict] = {
    TOKEN_REVIEW: {
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
                "user": _USER_INFO,
                "audiences": _STRINGS,
                "error": _STRING,
            },
        },
    },
    SELF_SUBJECT_REVIEW: {
        "status": {
            "type": "object",
            "description": "SelfSubjectReviewStatus is filled by the server: who the requester is.",
            "properties": {"userInfo": _USER_INFO},
        },
    },
    SUBJECT_ACCESS_REVIEW: {
        "spec": {
            "type": "object",
            "description": "SubjectAccessReviewSpec names a user and groups and the request to authorize "
            "(exactly one of resourceAttributes and nonResourceAttributes).",
            "properties": {
                "resourceAttributes": _RESOURCE_ATTRIBUTES,
                "nonResourceAttributes": _NON_RESOURCE_ATTRIBUTES,
                "user": _STRING,
                "groups": _STRINGS,
                "extra": _EXTRA,
                "uid": _STRING,
            },
        },
        "status": _ACCESS_STATUS,
    },
    SELF_SUBJECT_ACCESS_REVIEW: {
        "spec": {
            "type": "object",
            "description": "SelfSubjectAccessReviewSpec names the request to authorize for the requester "
            "(exactly one of resourceAttributes and nonResourceAttributes).",
            "properties": {
                "resourceAttributes": _RESOURCE_ATTRIBUTES,
                "nonResourceAttributes": _NON_RESOURCE_ATTRIBUTES,
            },
        },
        "status": _ACCESS_STATUS,
    },
    SELF_SUBJECT_RULES_REVIEW: {
        "spec": {
            "type": "object",
            "description": "SelfSubjectRulesReviewSpec names the namespace to list the requester's rules in.",
            "properties": {"namespace": _STRING},
        },
        "status": {
            "type": "object",
            "description": "SubjectRulesReviewStatus: what the requester may do (resource and non-resource rules).",
            "required": ["resourceRules", "nonResourceRules", "incomplete"],
            "properties": {
                "resourceRules": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {key: _STRINGS for key in ("verbs", "apiGroups", "resources", "resourceNames")},
                    },
                },
                "nonResourceRules": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"verbs": _STRINGS, "nonResourceURLs": _STRINGS}},
                },
                "incomplete": {"type": "boolean"},
                "evaluationError": _STRING,
            },
        },
    },
}
_KINDS = {
    review: KindInfo(
        group=review.group,
        kind=review.kind,
        plural=review.plural,
        singular=review.singular,
        versions=(VERSION,),
        namespaced=False,
        schema={VERSION: {"type": "object", "properties": properties}},
    )
    for review, properties in _SCHEMAS.items()
}
"""The reviews as kinds, for the registry's ``fieldValidation`` check (never registered or stored)."""


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


def _review_body(body: JSONDict, review: Review) -> JSONDict:
    """The body checked against the endpoint's kind (absent apiVersion/kind default to it, as kube's decoder)."""
    api_version = body.get("apiVersion", review.api_version)
    if api_version != review.api_version:
        raise BadRequest(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({review.api_version})"
        )
    if body.get("kind", review.kind) != review.kind:
        raise BadRequest(f"the kind in the data ({body.get('kind')}) does not match the expected kind ({review.kind})")
    return body


async def _read(request: web.Request, review: Review) -> tuple[JSONDict, list[str]]:
    """The request's review body and the warnings its unknown fields raise (fieldValidation=Warn)."""
    media = media_type(request.headers.get("Content-Type", ""))
    if media not in _MEDIA_TYPES:
        raise unsupported(_MEDIA_TYPES)
    data = await read_body(request)
    decoded = decode_protobuf(data, REVIEW_KINDS) if media == PROTOBUF else decode_object(data, media)
    body = _review_body(decoded, review)
    _object(body.get("metadata"), "metadata")
    warnings = check_fields(_KINDS[review], body, VERSION, field_validation(request.query))
    return body, warnings


def _answer(body: JSONDict, review: Review, spec: JSONDict, status: JSONDict) -> JSONDict:
    metadata = {k: v for k, v in _object(body.get("metadata"), "metadata").items() if k != "creationTimestamp"}
    return {
        "kind": review.kind,
        "apiVersion": review.api_version,
        "metadata": {**metadata, "creationTimestamp": None},
        "spec": spec,
        "status": status,
    }


# ---------------------------------------------------------------------- the reviews


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
    return _answer(body, TOKEN_REVIEW, spec, status)


def self_subject_review(body: JSONDict, requester: UserInfo, now: str) -> JSONDict:
    """The SelfSubjectReview ``body`` answered: a new object naming ``requester``, made at ``now``.

    As kube-apiserver, nothing of the body is kept: the review has no spec, and its metadata is
    the answer's own."""
    return {
        "kind": SELF_SUBJECT_REVIEW.kind,
        "apiVersion": SELF_SUBJECT_REVIEW.api_version,
        "metadata": {"creationTimestamp": now},
        "status": {"userInfo": requester.to_json()},
    }


def _access_spec(spec: JSONDict, errors: list[fe.FieldError]) -> None:
    """Check what both access reviews ask about: exactly one of the two attribute sets, each typed."""
    resource, non_resource = (
        None if spec.get(key) is None else _object(spec[key], f"spec.{key}")  # null: absent, as Go's nil pointer
        for key in ("resourceAttributes", "nonResourceAttributes")
    )
    for section, path in ((resource, "spec.resourceAttributes"), (non_resource, "spec.nonResourceAttributes")):
        for key, value in (section or {}).items():
            if key in ("fieldSelector", "labelSelector"):
                _object(value, f"{path}.{key}")
            else:
                _string(value, f"{path}.{key}")
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


def _empty_metadata(body: JSONDict, errors: list[fe.FieldError]) -> None:
    metadata = {k: v for k, v in _object(body.get("metadata"), "metadata").items() if k not in ("managedFields",)}
    if metadata and metadata != {"creationTimestamp": None}:
        errors.append(fe.invalid("metadata", metadata, "must be empty"))


def _access_status(user: str, groups: list[str]) -> JSONDict:
    anonymous = user == ANONYMOUS_USER or UNAUTHENTICATED_GROUP in groups
    return {"allowed": not anonymous, "reason": ANONYMOUS_REASON if anonymous else ALLOWED_REASON}


def subject_access_review(body: JSONDict) -> JSONDict:
    """The SubjectAccessReview ``body`` answered (Invalid naming each bad field, BadRequest for a wrong type)."""
    spec = _object(body.get("spec"), "spec")
    user = _string(spec.get("user"), "spec.user")
    groups = _strings(spec.get("groups"), "spec.groups")
    _string(spec.get("uid"), "spec.uid")
    _extra(spec.get("extra"), "spec.extra")
    errors: list[fe.FieldError] = []
    _access_spec(spec, errors)
    if not user and not groups:
        errors.append(fe.invalid("spec.user", user, "at least one of user or group must be specified"))
    _empty_metadata(body, errors)
    if errors:
        raise Invalid(SUBJECT_ACCESS_REVIEW.kind, "", errors, AUTHORIZATION)
    return _answer(body, SUBJECT_ACCESS_REVIEW, spec, _access_status(user, groups))


def self_subject_access_review(body: JSONDict, requester: UserInfo) -> JSONDict:
    """The SelfSubjectAccessReview ``body`` answered for ``requester`` (the request's own user)."""
    spec = _object(body.get("spec"), "spec")
    errors: list[fe.FieldError] = []
    _access_spec(spec, errors)
    _empty_metadata(body, errors)
    if errors:
        raise Invalid(SELF_SUBJECT_ACCESS_REVIEW.kind, "", errors, AUTHORIZATION)
    return _answer(body, SELF_SUBJECT_ACCESS_REVIEW, spec, _access_status(requester.username, list(requester.groups)))


def self_subject_rules_review(body: JSONDict) -> JSONDict:
    """The SelfSubjectRulesReview ``body`` answered: everything, in any namespace (BadRequest without one).

    As kube-apiserver, the answer is a new object: its spec is empty."""
    spec = _object(body.get("spec"), "spec")
    if not _string(spec.get("namespace"), "spec.namespace"):
        raise BadRequest("no namespace on request")
    return {
        "kind": SELF_SUBJECT_RULES_REVIEW.kind,
        "apiVersion": SELF_SUBJECT_RULES_REVIEW.api_version,
        "metadata": {"creationTimestamp": None},
        "spec": {},
        "status": copy.deepcopy(EVERYTHING),
    }


Answer = Callable[[JSONDict, UserInfo], JSONDict]
"""A review body and the requester -> the answer."""


def review_routes(app: web.Application, authenticate: Authenticate, now: Callable[[], str]) -> None:
    """Serve the reviews on ``app`` (before its generic ``/apis/{group}/...`` routes); ``now``:
    the server clock's time, formatted, for a SelfSubjectReview's creationTimestamp."""
    answers: dict[Review, Answer] = {
        TOKEN_REVIEW: lambda body, _: token_review(body, authenticate),
        SELF_SUBJECT_REVIEW: lambda body, requester: self_subject_review(body, requester, now()),
        SUBJECT_ACCESS_REVIEW: lambda body, _: subject_access_review(body),
        SELF_SUBJECT_ACCESS_REVIEW: self_subject_access_review,
        SELF_SUBJECT_RULES_REVIEW: lambda body, _: self_subject_rules_review(body),
    }
    for review, answer in answers.items():
        app.router.add_route("*", review.path, _handler(review, answer))


def _handler(review: Review, answer: Answer) -> Callable[[web.Request], Any]:
    async def handle(request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            raise MethodNotAllowed("the server does not allow this method on the requested resource")
        body, warnings = await _read(request, review)
        return json_response(answer(body, request[USER_KEY]), status=201, warnings=warnings)

    return handle


# ---------------------------------------------------------------------- discovery


def _in(group: str) -> list[Review]:
    return [review for review in REVIEWS if review.group == group]


def resource_list(group: str) -> JSONDict:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{VERSION}",
        "resources": [
            {
                "name": review.plural,
                "singularName": review.singular,
                "namespaced": False,
                "kind": review.kind,
                "verbs": ["create"],
            }
            for review in _in(group)
        ],
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
        resources = [
            {
                "resource": review.plural,
                "responseKind": {"group": group, "version": VERSION, "kind": review.kind},
                "scope": "Cluster",
                "singularResource": review.singular,
                "verbs": ["create"],
            }
            for review in _in(group)
        ]
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [{"version": VERSION, "resources": resources, "freshness": "Current"}],
            }
        )
    return {**body, "items": items}


# ---------------------------------------------------------------------- OpenAPI v3


def _operation(review: Review, name: str, object_meta: JSONDict) -> tuple[JSONDict, JSONDict]:
    """The create operation of ``review`` and its object's schema (``name``: the schema's key)."""
    gvk = {"group": review.group, "version": VERSION, "kind": review.kind}
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
    properties = _SCHEMAS[review]
    schema: JSONDict = {
        "type": "object",
        **({"required": ["spec"]} if "spec" in properties else {}),
        "properties": {"apiVersion": _STRING, "kind": _STRING, "metadata": object_meta, **properties},
        "x-kubernetes-group-version-kind": [gvk],
    }
    operation = {
        "operationId": f"create{review.kind}",
        "requestBody": {"content": content, "required": True},
        "responses": responses,
        "parameters": parameters,
        "x-kubernetes-action": "post",
        "x-kubernetes-group-version-kind": gvk,
    }
    return operation, schema


def _openapi_document(group: str, object_meta: JSONDict) -> JSONDict:
    short = group.split(".", 1)[0]
    paths: JSONDict = {}
    schemas: JSONDict = {}
    for review in _in(group):
        name = f"io.k8s.api.{short}.{VERSION}.{review.kind}"
        operation, schema = _operation(review, name, object_meta)
        paths[review.path] = {"post": operation}
        schemas[name] = schema
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def openapi_documents(object_meta: JSONDict) -> dict[str, JSONDict]:
    """The v3 documents of both groups (``apis/<group>/v1`` -> document): create only, as kube's."""
    return {f"apis/{group}/{VERSION}": _openapi_document(group, object_meta) for group in GROUPS}
