"""The review creates on the embedded server, answered as kube-apiserver answers them.

TokenReview and SubjectAccessReview (what controller-runtime's delegating authenticator and
authorizer send), SelfSubjectAccessReview and SelfSubjectRulesReview (``kubectl auth can-i [--list]``)
and SelfSubjectReview (``kubectl auth whoami``). A real server on a loopback port with an admin token
and a ``--token-auth-file`` identity; every review goes over HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import yaml

from pykueue.api.meta.clock import ManualClock
from pykueue.apiserver import serve
from pykueue.apiserver.access_reviews import ALLOWED_REASON, ANONYMOUS_REASON
from pykueue.apiserver.protobuf import PROTOBUF
from pykueue.registry import Registry
from pykueue.registry.suspend import UserInfo
from pykueue.store import Store

from .test_protobuf_kinds import _bool, _envelope, _meta, _msg, _str

ADMIN_TOKEN = "admin-token-for-the-review-tests"
ROBOT_TOKEN = "robot-token-for-the-review-tests"
ROBOT = UserInfo(
    "system:serviceaccount:monitoring:prometheus",
    uid="uid-7",
    groups=("system:serviceaccounts", "system:serviceaccounts:monitoring", "system:authenticated"),
)
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
SELF_SUBJECT_REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
SELF_SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
SELF_SUBJECT_RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
KINDS = {
    "authentication.k8s.io/v1": [("selfsubjectreviews", "SelfSubjectReview"), ("tokenreviews", "TokenReview")],
    "authorization.k8s.io/v1": [
        ("selfsubjectaccessreviews", "SelfSubjectAccessReview"),
        ("selfsubjectrulesreviews", "SelfSubjectRulesReview"),
        ("subjectaccessreviews", "SubjectAccessReview"),
    ],
}
"""Each group's review kinds in kube-apiserver's discovery order (by resource name)."""
NOW = "2027-01-15T08:00:00Z"
"""The server's ManualClock(1_800_000_000) as kube writes a timestamp."""


class Reviews:
    def __init__(self, url: str, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.session = session

    async def post(
        self, path: str, body: Any, *, content_type: str = "application/json", token: str | None = ADMIN_TOKEN
    ) -> tuple[int, Any]:
        status, answer, _ = await self.post_warned(path, body, content_type=content_type, token=token)
        return status, answer

    async def post_warned(
        self, path: str, body: Any, *, content_type: str = "application/json", token: str | None = ADMIN_TOKEN
    ) -> tuple[int, Any, list[str]]:
        """The status, the body and the ``Warning`` headers of a POST."""
        headers = {"Content-Type": content_type}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        async with self.session.post(self.url + path, data=data, headers=headers) as response:
            return response.status, orjson.loads(await response.read()), response.headers.getall("Warning", [])

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.session.get(self.url + path, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            return response.status, orjson.loads(await response.read())


@pytest.fixture
async def reviews() -> AsyncIterator[Reviews]:
    store = Store(auto_flush=False)
    server = await serve(
        Registry(store, clock=ManualClock(1_800_000_000.0)),
        "127.0.0.1",
        0,
        token=ADMIN_TOKEN,
        users={ROBOT_TOKEN: ROBOT},
    )
    session = aiohttp.ClientSession()
    try:
        yield Reviews(server.url, session)
    finally:
        await session.close()
        await server.close()
        store.close()


def token_review(token: Any, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token, **spec}}


def access_review(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def self_access_review(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec}


SELF_REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def rules_review(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": spec}


CLUSTER_ADMIN_RULES = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}
"""What kube-apiserver lists for a cluster-admin: everything (this server enforces no RBAC)."""


async def test_a_known_token_is_authenticated_with_its_user(reviews: Reviews) -> None:
    status, body = await reviews.post(TOKEN_REVIEWS, token_review(ROBOT_TOKEN))
    assert status == 201
    assert body == {
        "kind": "TokenReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"token": ROBOT_TOKEN},
        "status": {
            "authenticated": True,
            "user": {
                "username": "system:serviceaccount:monitoring:prometheus",
                "uid": "uid-7",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:monitoring", "system:authenticated"],
            },
        },
    }
    status, body = await reviews.post(TOKEN_REVIEWS, token_review(ADMIN_TOKEN), token=ROBOT_TOKEN)
    assert status == 201
    assert body["status"]["user"] == {
        "username": "kubernetes-admin",
        "groups": ["system:masters", "system:authenticated"],
    }


async def test_an_unknown_token_is_not_authenticated(reviews: Reviews) -> None:
    status, body = await reviews.post(TOKEN_REVIEWS, token_review("no-such-token"))
    assert status == 201
    assert body["status"] == {"user": {}}  # authenticated false is omitted, the empty user is not (kube's JSON)
    assert body["spec"] == {"token": "no-such-token"}


async def test_audiences_the_server_does_not_have_are_not_authenticated(reviews: Reviews) -> None:
    status, body = await reviews.post(TOKEN_REVIEWS, token_review(ROBOT_TOKEN, audiences=["vault"]))
    assert status == 201
    assert body["status"] == {"user": {}}


async def test_a_yaml_body_is_read_like_json(reviews: Reviews) -> None:
    status, body = await reviews.post(
        TOKEN_REVIEWS, yaml.safe_dump(token_review(ROBOT_TOKEN)).encode(), content_type="application/yaml"
    )
    assert status == 201
    assert body["status"]["authenticated"] is True


@pytest.mark.parametrize(
    ("review", "message"),
    [
        (token_review(""), "token is required for TokenReview in authentication"),
        ({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}, "token is required"),
        (token_review(5), "spec.token: expected a string, got int"),
        (token_review("t", audiences="api"), "spec.audiences: expected a list of strings, got str"),
        ({**token_review("t"), "spec": ["t"]}, "spec: expected an object, got list"),
        ({**token_review("t"), "apiVersion": "authentication.k8s.io/v1beta1"}, "does not match the expected API"),
        ({**token_review("t"), "kind": "SubjectAccessReview"}, "does not match the expected kind (TokenReview)"),
    ],
)
async def test_a_bad_token_review_is_a_400(reviews: Reviews, review: dict[str, Any], message: str) -> None:
    status, body = await reviews.post(TOKEN_REVIEWS, review)
    assert status == 400
    assert body["kind"] == "Status"
    assert body["reason"] == "BadRequest"
    assert message in body["message"]


async def test_reviews_need_an_authenticated_caller_and_are_create_only(reviews: Reviews) -> None:
    status, body = await reviews.post(TOKEN_REVIEWS, token_review(ROBOT_TOKEN), token=None)
    assert (status, body["reason"]) == (401, "Unauthorized")
    status, body = await reviews.post(TOKEN_REVIEWS, token_review(ROBOT_TOKEN), token="wrong")
    assert (status, body["reason"]) == (401, "Unauthorized")
    for path in (
        TOKEN_REVIEWS,
        SELF_SUBJECT_REVIEWS,
        SUBJECT_ACCESS_REVIEWS,
        SELF_SUBJECT_ACCESS_REVIEWS,
        SELF_SUBJECT_RULES_REVIEWS,
    ):
        status, body = await reviews.get(path)
        assert (status, body["reason"]) == (405, "MethodNotAllowed")
    status, body = await reviews.post(TOKEN_REVIEWS, b"token", content_type="text/plain")
    assert status == 415
    status, body = await reviews.post(TOKEN_REVIEWS, b"\x08\x01", content_type=PROTOBUF)
    assert (status, body["reason"]) == (400, "BadRequest")  # protobuf without kube's envelope


async def test_an_access_review_is_allowed_for_any_named_user(reviews: Reviews) -> None:
    review = access_review(
        user="system:serviceaccount:monitoring:prometheus",
        uid="uid-7",
        groups=["system:serviceaccounts", "system:authenticated"],
        extra={"scopes": ["a"]},
        nonResourceAttributes={"path": "/metrics", "verb": "get"},
    )
    status, body = await reviews.post(SUBJECT_ACCESS_REVIEWS, review)
    assert status == 201
    assert body == {
        **review,
        "metadata": {"creationTimestamp": None},
        "status": {"allowed": True, "reason": ALLOWED_REASON},
    }
    resource = access_review(
        groups=["ops"], resourceAttributes={"verb": "list", "group": "kueue.x-k8s.io", "resource": "workloads"}
    )
    status, body = await reviews.post(SUBJECT_ACCESS_REVIEWS, resource)
    assert (status, body["status"]["allowed"]) == (201, True)


@pytest.mark.parametrize(
    "subject", [{"user": "system:anonymous"}, {"user": "someone", "groups": ["system:unauthenticated"]}]
)
async def test_an_anonymous_subject_is_not_allowed(reviews: Reviews, subject: dict[str, Any]) -> None:
    review = access_review(**subject, nonResourceAttributes={"path": "/metrics", "verb": "get"})
    status, body = await reviews.post(SUBJECT_ACCESS_REVIEWS, review)
    assert status == 201
    assert body["status"] == {"allowed": False, "reason": ANONYMOUS_REASON}


@pytest.mark.parametrize(
    ("review", "field", "message"),
    [
        (
            access_review(user="u", resourceAttributes={"verb": "get"}, nonResourceAttributes={"path": "/x"}),
            "spec.nonResourceAttributes",
            "cannot be specified in combination with resourceAttributes",
        ),
        (
            access_review(user="u"),
            "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
        (
            access_review(nonResourceAttributes={"path": "/metrics", "verb": "get"}),
            "spec.user",
            "at least one of user or group must be specified",
        ),
        (
            {**access_review(user="u", nonResourceAttributes={"path": "/x"}), "metadata": {"name": "n"}},
            "metadata",
            "must be empty",
        ),
    ],
)
async def test_an_invalid_access_review_is_a_422_naming_the_field(
    reviews: Reviews, review: dict[str, Any], field: str, message: str
) -> None:
    status, body = await reviews.post(SUBJECT_ACCESS_REVIEWS, review)
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["details"]["kind"] == "SubjectAccessReview"
    assert body["details"]["group"] == "authorization.k8s.io"
    assert [(c["field"], message in c["message"]) for c in body["details"]["causes"]] == [(field, True)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"user": 5, "nonResourceAttributes": {}}, "spec.user: expected a string, got int"),
        ({"user": "u", "groups": ["a", 1], "nonResourceAttributes": {}}, "spec.groups[1]: expected a string"),
        ({"user": "u", "nonResourceAttributes": {"path": ["/"]}}, "spec.nonResourceAttributes.path: expected a"),
        ({"user": "u", "extra": {"k": "v"}, "nonResourceAttributes": {}}, "spec.extra.k: expected a list"),
    ],
)
async def test_a_wrongly_typed_access_review_is_a_400_naming_the_field(
    reviews: Reviews, spec: dict[str, Any], message: str
) -> None:
    status, body = await reviews.post(SUBJECT_ACCESS_REVIEWS, access_review(**spec))
    assert (status, body["reason"]) == (400, "BadRequest")
    assert message in body["message"]


@pytest.mark.parametrize(
    ("token", "user"),
    [
        (ADMIN_TOKEN, {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}),
        (ROBOT_TOKEN, ROBOT.to_json()),
    ],
)
async def test_a_self_subject_review_names_the_requester(reviews: Reviews, token: str, user: dict[str, Any]) -> None:
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, SELF_REVIEW, token=token)
    assert status == 201
    assert body == {
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": NOW},
        "status": {"userInfo": user},
    }


async def test_a_self_subject_review_keeps_nothing_of_the_body(reviews: Reviews) -> None:
    # kube-apiserver answers with a new object: neither the sent metadata nor a claimed status survives
    claimed = {**SELF_REVIEW, "metadata": {"name": "me"}, "status": {"userInfo": {"username": "root"}}}
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, claimed, token=ROBOT_TOKEN)
    assert status == 201
    assert body["metadata"] == {"creationTimestamp": NOW}
    assert body["status"]["userInfo"]["username"] == ROBOT.username
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, {}, token=ROBOT_TOKEN)  # apiVersion/kind default
    assert (status, body["status"]["userInfo"]["uid"]) == (201, "uid-7")
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, {**SELF_REVIEW, "kind": "TokenReview"})
    assert (status, body["reason"]) == (400, "BadRequest")
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, {**SELF_REVIEW, "metadata": "me"})
    assert (status, body["reason"]) == (400, "BadRequest")


@pytest.mark.parametrize("token", [ADMIN_TOKEN, ROBOT_TOKEN])
async def test_a_self_access_review_is_allowed_for_the_requester(reviews: Reviews, token: str) -> None:
    review = self_access_review(
        resourceAttributes={"verb": "create", "group": "kueue.x-k8s.io", "resource": "workloads", "namespace": "team-a"}
    )
    status, body = await reviews.post(SELF_SUBJECT_ACCESS_REVIEWS, review, token=token)
    assert status == 201
    assert body == {
        **review,
        "metadata": {"creationTimestamp": None},
        "status": {"allowed": True, "reason": ALLOWED_REASON},
    }
    non_resource = self_access_review(nonResourceAttributes={"path": "/metrics", "verb": "get"})
    status, body = await reviews.post(SELF_SUBJECT_ACCESS_REVIEWS, non_resource, token=token)
    assert (status, body["spec"], body["status"]["allowed"]) == (201, non_resource["spec"], True)
    with_null = self_access_review(resourceAttributes=None, nonResourceAttributes={"path": "/metrics", "verb": "get"})
    status, body = await reviews.post(SELF_SUBJECT_ACCESS_REVIEWS, with_null, token=token)
    assert (status, body["status"]["allowed"]) == (201, True)  # null is an absent attribute set, as in Go


@pytest.mark.parametrize(
    ("review", "field", "message"),
    [
        (
            self_access_review(resourceAttributes={"verb": "get"}, nonResourceAttributes={"path": "/x"}),
            "spec.nonResourceAttributes",
            "cannot be specified in combination with resourceAttributes",
        ),
        (
            self_access_review(),
            "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ),
        (
            {**self_access_review(nonResourceAttributes={"path": "/x"}), "metadata": {"name": "n"}},
            "metadata",
            "must be empty",
        ),
    ],
)
async def test_an_invalid_self_access_review_is_a_422_naming_the_field(
    reviews: Reviews, review: dict[str, Any], field: str, message: str
) -> None:
    status, body = await reviews.post(SELF_SUBJECT_ACCESS_REVIEWS, review)
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["details"]["kind"] == "SelfSubjectAccessReview"
    assert body["details"]["group"] == "authorization.k8s.io"
    assert [(c["field"], message in c["message"]) for c in body["details"]["causes"]] == [(field, True)]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"resourceAttributes": {"verb": 1}}, "spec.resourceAttributes.verb: expected a string, got int"),
        ({"resourceAttributes": {"fieldSelector": "a=b"}}, "spec.resourceAttributes.fieldSelector: expected an"),
        ({"nonResourceAttributes": ["/metrics"]}, "spec.nonResourceAttributes: expected an object, got list"),
    ],
)
async def test_a_wrongly_typed_self_access_review_is_a_400_naming_the_field(
    reviews: Reviews, spec: dict[str, Any], message: str
) -> None:
    status, body = await reviews.post(SELF_SUBJECT_ACCESS_REVIEWS, self_access_review(**spec))
    assert (status, body["reason"]) == (400, "BadRequest")
    assert message in body["message"]


def _protobuf_self_access_review(*spec: bytes) -> bytes:
    """A SelfSubjectAccessReview as ``kubectl auth can-i`` sends it: gogo-protobuf writes every
    non-pointer field, empty strings, the empty metadata and the empty status included."""
    status = _msg(3, _bool(1, False), _str(2, ""), _str(3, ""), _bool(4, False))
    return _envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", _meta(""), _msg(2, *spec), status)


async def test_kubectls_protobuf_self_reviews_are_answered(reviews: Reviews) -> None:
    resource = _msg(
        1,
        *(_str(number, text) for number, text in enumerate(["team-a", "create", "kueue.x-k8s.io", "", "workloads"], 1)),
        _str(6, ""),
        _str(7, ""),
    )
    status, body = await reviews.post(
        SELF_SUBJECT_ACCESS_REVIEWS, _protobuf_self_access_review(resource), content_type=PROTOBUF, token=ROBOT_TOKEN
    )
    assert status == 201
    assert body["spec"] == {
        "resourceAttributes": {
            "namespace": "team-a",
            "verb": "create",
            "group": "kueue.x-k8s.io",
            "resource": "workloads",
        }
    }
    assert body["status"] == {"allowed": True, "reason": ALLOWED_REASON}
    non_resource = _msg(2, _str(1, "/metrics"), _str(2, "get"))
    status, body = await reviews.post(
        SELF_SUBJECT_ACCESS_REVIEWS, _protobuf_self_access_review(non_resource), content_type=PROTOBUF
    )
    assert (status, body["spec"]) == (201, {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
    whoami = _envelope(
        "authentication.k8s.io/v1", "SelfSubjectReview", _meta(""), _msg(2, _msg(1, _str(1, ""), _str(2, "")))
    )
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, whoami, content_type=PROTOBUF, token=ROBOT_TOKEN)
    assert (status, body["status"]["userInfo"]) == (201, ROBOT.to_json())


async def test_a_protobuf_body_of_another_kind_or_with_undecoded_fields_is_refused(reviews: Reviews) -> None:
    pod = _envelope("v1", "Pod", _meta("p"))
    status, body = await reviews.post(SELF_SUBJECT_ACCESS_REVIEWS, pod, content_type=PROTOBUF)
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")  # not a review: never decoded here
    token_review = _envelope("authentication.k8s.io/v1", "TokenReview", _meta(""), _msg(2, _str(1, ROBOT_TOKEN)))
    status, body = await reviews.post(SELF_SUBJECT_REVIEWS, token_review, content_type=PROTOBUF)
    assert (status, body["reason"]) == (400, "BadRequest")
    assert "does not match the expected kind (SelfSubjectReview)" in body["message"]
    extra = _msg(5, _str(1, "scopes"), _msg(2, _str(1, "a")))
    access = _envelope(
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        _meta(""),
        _msg(2, _msg(2, _str(1, "/x")), _str(3, "u"), extra),
    )
    status, body = await reviews.post(SUBJECT_ACCESS_REVIEWS, access, content_type=PROTOBUF)
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")  # extra is not decoded: refused, not dropped
    assert "spec.extra" in body["message"]


@pytest.mark.parametrize("token", [ADMIN_TOKEN, ROBOT_TOKEN])
async def test_a_rules_review_lists_everything_in_any_namespace(reviews: Reviews, token: str) -> None:
    status, body = await reviews.post(SELF_SUBJECT_RULES_REVIEWS, rules_review(namespace="team-a"), token=token)
    assert status == 201
    assert body == {
        "kind": "SelfSubjectRulesReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {},  # a new object, as kube-apiserver's answer
        "status": CLUSTER_ADMIN_RULES,
    }
    protobuf = _envelope(
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
        _meta(""),
        _msg(2, _str(1, "default")),
        _msg(3, _bool(3, False), _str(4, "")),
    )
    status, body = await reviews.post(SELF_SUBJECT_RULES_REVIEWS, protobuf, content_type=PROTOBUF, token=token)
    assert (status, body["status"]) == (201, CLUSTER_ADMIN_RULES)


@pytest.mark.parametrize(
    ("review", "message"),
    [
        (rules_review(), "no namespace on request"),
        (rules_review(namespace=""), "no namespace on request"),
        (rules_review(namespace=["a"]), "spec.namespace: expected a string, got list"),
        ({**rules_review(namespace="a"), "spec": "a"}, "spec: expected an object, got str"),
    ],
)
async def test_a_rules_review_without_a_namespace_is_a_400(
    reviews: Reviews, review: dict[str, Any], message: str
) -> None:
    status, body = await reviews.post(SELF_SUBJECT_RULES_REVIEWS, review)
    assert (status, body["reason"]) == (400, "BadRequest")
    assert message in body["message"]


UNKNOWN_FIELDS = [
    (SELF_SUBJECT_RULES_REVIEWS, rules_review(namespace="a", nameSpace="b"), "spec.nameSpace"),
    (TOKEN_REVIEWS, {**token_review(ROBOT_TOKEN, ttl="1h")}, "spec.ttl"),
    (SELF_SUBJECT_REVIEWS, {**SELF_REVIEW, "spec": {"user": "root"}}, "spec"),
    (
        SUBJECT_ACCESS_REVIEWS,
        access_review(user="u", nonResourceAttributes={"path": "/metrics", "verb": "get", "method": "GET"}),
        "spec.nonResourceAttributes.method",
    ),
    (
        SELF_SUBJECT_ACCESS_REVIEWS,
        self_access_review(resourceAttributes={"verb": "list", "fieldSelector": {"rawSelector": "a=b", "raw": "a"}}),
        "spec.resourceAttributes.fieldSelector.raw",
    ),
    (
        SELF_SUBJECT_ACCESS_REVIEWS,
        {**self_access_review(nonResourceAttributes={}), "metadata": {"nam": "x"}},
        "metadata.nam",
    ),
]


@pytest.mark.parametrize(("path", "review", "field"), UNKNOWN_FIELDS)
async def test_strict_field_validation_rejects_an_unknown_field_by_name(
    reviews: Reviews, path: str, review: dict[str, Any], field: str
) -> None:
    status, body = await reviews.post(path + "?fieldValidation=Strict", review)
    assert (status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == f'strict decoding error: unknown field "{field}"'


@pytest.mark.parametrize(("path", "review", "field"), UNKNOWN_FIELDS)
@pytest.mark.parametrize("query", ["", "?fieldValidation=Warn"])
async def test_warn_field_validation_drops_an_unknown_field_with_a_warning(
    reviews: Reviews, path: str, review: dict[str, Any], field: str, query: str
) -> None:
    status, body, warnings = await reviews.post_warned(path + query, review)  # no parameter: Warn, as kube's
    assert status == 201
    assert warnings == [f'299 - "unknown field \\"{field}\\""']
    *parents, name = field.split(".")
    echoed = body
    for key in parents:
        echoed = echoed.get(key) or {}
    assert name not in echoed


async def test_ignore_field_validation_drops_unknown_fields_silently_and_a_bad_directive_is_a_400(
    reviews: Reviews,
) -> None:
    review = token_review(ROBOT_TOKEN, ttl="1h")
    status, body, warnings = await reviews.post_warned(TOKEN_REVIEWS + "?fieldValidation=Ignore", review)
    assert (status, warnings, body["spec"]) == (201, [], {"token": ROBOT_TOKEN})
    status, body = await reviews.post(TOKEN_REVIEWS + "?fieldValidation=Loose", review)
    assert (status, body["reason"]) == (400, "BadRequest")
    assert 'invalid fieldValidation directive: "Loose"' in body["message"]
    status, body, warnings = await reviews.post_warned(SELF_SUBJECT_REVIEWS + "?fieldValidation=Strict", SELF_REVIEW)
    assert (status, warnings) == (201, [])  # a known body passes Strict


async def test_both_groups_are_discoverable(reviews: Reviews) -> None:
    status, groups = await reviews.get("/apis")
    assert status == 200
    names = [g["name"] for g in groups["groups"]]
    assert "authentication.k8s.io" in names
    assert "authorization.k8s.io" in names
    status, group = await reviews.get("/apis/authorization.k8s.io")
    assert (status, group["preferredVersion"]["groupVersion"]) == (200, "authorization.k8s.io/v1")
    for group_version, kinds in KINDS.items():
        status, listing = await reviews.get(f"/apis/{group_version}")
        assert status == 200
        assert listing["resources"] == [
            {"name": plural, "singularName": plural[:-1], "namespaced": False, "kind": kind, "verbs": ["create"]}
            for plural, kind in kinds
        ]
    status, _ = await reviews.get("/apis/authentication.k8s.io/v1beta1")
    assert status == 404
    async with reviews.session.get(
        reviews.url + "/apis",
        headers={
            "Authorization": f"Bearer {ADMIN_TOKEN}",
            "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        },
    ) as response:
        aggregated = orjson.loads(await response.read())
    by_name = {item["metadata"]["name"]: item for item in aggregated["items"]}
    for group_version, kinds in KINDS.items():
        resources = by_name[group_version.split("/")[0]]["versions"][0]["resources"]
        assert [(r["resource"], r["responseKind"]["kind"], r["verbs"], r["scope"]) for r in resources] == [
            (plural, kind, ["create"], "Cluster") for plural, kind in kinds
        ]


async def test_both_groups_have_openapi_v3_documents_for_explain(reviews: Reviews) -> None:
    status, root = await reviews.get("/openapi/v3")
    assert status == 200
    for group_version, kinds in KINDS.items():
        group = group_version.split("/")[0]
        url = root["paths"][f"apis/{group_version}"]["serverRelativeURL"]
        status, document = await reviews.get(url)
        assert status == 200
        schemas = document["components"]["schemas"]
        assert sorted(s["x-kubernetes-group-version-kind"][0]["kind"] for s in schemas.values()) == sorted(
            kind for _, kind in kinds
        )
        for schema in schemas.values():
            assert {"status", "metadata"} <= set(schema["properties"])
        assert sorted(document["paths"]) == sorted(f"/apis/{group_version}/{plural}" for plural, _ in kinds)
        for path, operations in document["paths"].items():
            assert list(operations) == ["post"], path  # create only, as kube-apiserver's document
        assert all(s["x-kubernetes-group-version-kind"][0]["group"] == group for s in schemas.values())
    status, document = await reviews.get(root["paths"]["apis/authentication.k8s.io/v1"]["serverRelativeURL"])
    self_review = document["components"]["schemas"]["io.k8s.api.authentication.v1.SelfSubjectReview"]
    assert "spec" not in self_review["properties"]  # a SelfSubjectReview asks nothing: no spec to explain
    assert set(self_review["properties"]["status"]["properties"]["userInfo"]["properties"]) == {
        "username",
        "uid",
        "groups",
        "extra",
    }
