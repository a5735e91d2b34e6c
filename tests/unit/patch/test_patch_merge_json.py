"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) as kube-apiserver applies them."""

from __future__ import annotations

import copy
from typing import Any

import json_merge_patch
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.api.meta.errors import BadRequest, Invalid, RequestEntityTooLarge
from pykueue.registry.patch import apply_json_patch, apply_merge_patch

DEPLOY: dict[str, Any] = {
    "metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}},
    "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
}

MERGE_CASES = [
    pytest.param(
        {"spec": {"replicas": 3}}, {**DEPLOY, "spec": {**DEPLOY["spec"], "replicas": 3}}, id="scalar-replaced"
    ),
    pytest.param(
        {"metadata": {"labels": {"tier": None}}},
        {**DEPLOY, "metadata": {"name": "web", "labels": {"app": "web"}}},
        id="null-deletes-key",
    ),
    pytest.param(
        {"spec": {"template": {"spec": {"containers": [{"name": "d"}]}}}},
        {**DEPLOY, "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "d"}]}}}},
        id="lists-replaced-whole",
    ),
    pytest.param(
        {"status": {"ready": 1, "gone": None}}, {**DEPLOY, "status": {"ready": 1}}, id="new-map-added-without-nulls"
    ),
    pytest.param({}, DEPLOY, id="empty-patch-noop"),
]


@pytest.mark.parametrize(("patch", "want"), MERGE_CASES)
def test_merge_patch_cases(patch: dict[str, Any], want: dict[str, Any]) -> None:
    before = copy.deepcopy(DEPLOY)
    patch_before = copy.deepcopy(patch)
    assert apply_merge_patch(DEPLOY, patch) == want
    assert before == DEPLOY
    assert patch_before == patch


def test_merge_patch_result_shares_nothing_with_patch() -> None:
    patch = {"spec": {"list": [{"a": 1}]}}
    result = apply_merge_patch({}, patch)
    result["spec"]["list"][0]["a"] = 2
    assert patch == {"spec": {"list": [{"a": 1}]}}


def test_merge_patch_must_be_object() -> None:
    with pytest.raises(BadRequest):
        apply_merge_patch(DEPLOY, [1, 2])  # type: ignore[arg-type]


JSON_CASES = [
    pytest.param(
        [{"op": "replace", "path": "/spec/replicas", "value": 5}],
        lambda d: d["spec"].__setitem__("replicas", 5),
        id="replace",
    ),
    pytest.param(
        [{"op": "add", "path": "/metadata/labels/new", "value": "x"}],
        lambda d: d["metadata"]["labels"].__setitem__("new", "x"),
        id="add-key",
    ),
    pytest.param(
        [{"op": "add", "path": "/spec/template/spec/containers/-", "value": {"name": "d"}}],
        lambda d: d["spec"]["template"]["spec"]["containers"].append({"name": "d"}),
        id="append",
    ),
    pytest.param(
        [{"op": "remove", "path": "/metadata/labels/tier"}], lambda d: d["metadata"]["labels"].pop("tier"), id="remove"
    ),
    pytest.param(
        [{"op": "test", "path": "/spec/replicas", "value": 2}, {"op": "replace", "path": "/spec/replicas", "value": 1}],
        lambda d: d["spec"].__setitem__("replicas", 1),
        id="test-then-replace",
    ),
    pytest.param(
        [{"op": "copy", "from": "/metadata/labels/app", "path": "/metadata/labels/copy"}],
        lambda d: d["metadata"]["labels"].__setitem__("copy", "web"),
        id="copy",
    ),
    pytest.param(
        [{"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/labels/t"}],
        lambda d: d["metadata"]["labels"].__setitem__("t", d["metadata"]["labels"].pop("tier")),
        id="move",
    ),
]


@pytest.mark.parametrize(("ops", "edit"), JSON_CASES)
def test_json_patch_cases(ops: list[Any], edit: Any) -> None:
    want = copy.deepcopy(DEPLOY)
    edit(want)
    before = copy.deepcopy(DEPLOY)
    assert apply_json_patch(DEPLOY, ops) == want
    assert before == DEPLOY


def test_failing_test_op_is_422_with_kube_message_and_nothing_applied() -> None:
    before = copy.deepcopy(DEPLOY)
    ops = [
        {"op": "replace", "path": "/spec/replicas", "value": 9},
        {"op": "test", "path": "/metadata/labels/app", "value": "other"},
    ]
    with pytest.raises(Invalid) as info:
        apply_json_patch(DEPLOY, ops)
    assert info.value.code == 422
    assert info.value.message == "the server rejected our request due to an error in our request"
    assert "testing value /metadata/labels/app failed" in str(info.value.details)
    assert before == DEPLOY


@pytest.mark.parametrize(
    "ops",
    [
        pytest.param([{"op": "remove", "path": "/spec/nope"}], id="remove-missing"),
        pytest.param([{"op": "replace", "path": "/nope/deeper", "value": 1}], id="replace-missing"),
        pytest.param([{"op": "add", "path": "/a/b/c", "value": 1}], id="add-missing-parent"),
    ],
)
def test_ops_that_do_not_apply_are_422(ops: list[Any]) -> None:
    with pytest.raises(Invalid) as info:
        apply_json_patch(DEPLOY, ops)
    assert "does not apply" in str(info.value.details)


@pytest.mark.parametrize(
    "ops",
    [
        pytest.param({"op": "add", "path": "/a", "value": 1}, id="object-not-list"),
        pytest.param(["add"], id="op-not-object"),
        pytest.param([{"op": "frobnicate", "path": "/a"}], id="unknown-op"),
        pytest.param([{"path": "/a", "value": 1}], id="missing-op"),
        pytest.param([{"op": "add", "value": 1}], id="missing-path"),
        pytest.param([{"op": "add", "path": "a", "value": 1}], id="relative-path"),
        pytest.param([{"op": "replace", "path": "/a"}], id="missing-value"),
        pytest.param([{"op": "move", "path": "/a"}], id="missing-from"),
    ],
)
def test_malformed_json_patch_is_400(ops: Any) -> None:
    with pytest.raises(BadRequest):
        apply_json_patch(DEPLOY, ops)


def test_more_than_ten_thousand_operations_is_too_large() -> None:
    with pytest.raises(RequestEntityTooLarge, match="maximum operations in a JSON patch is 10000, got 10001"):
        apply_json_patch(DEPLOY, [{"op": "test", "path": "/spec/replicas", "value": 2}] * 10001)


def test_replacing_root_with_non_object_is_rejected() -> None:
    with pytest.raises(Invalid):
        apply_json_patch(DEPLOY, [{"op": "replace", "path": "", "value": [1]}])


# ---- properties ---------------------------------------------------------------------------------

_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)),
    max_leaves=8,
)
_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_docs = st.dictionaries(st.sampled_from("abcde"), _json, max_size=3)


@_SETTINGS
@given(_docs, _docs)
def test_merge_patch_of_diff_turns_a_into_b(a: dict[str, Any], b: dict[str, Any]) -> None:
    diff = json_merge_patch.create_patch(copy.deepcopy(a), copy.deepcopy(b))
    a_before, diff_before = copy.deepcopy(a), copy.deepcopy(diff)
    assert apply_merge_patch(a, diff) == b
    assert a == a_before
    assert diff == diff_before


@_SETTINGS
@given(_docs, _docs)
def test_json_patch_replace_root_gives_target(a: dict[str, Any], b: dict[str, Any]) -> None:
    a_before = copy.deepcopy(a)
    assert apply_json_patch(a, [{"op": "replace", "path": "", "value": b}]) == b
    assert a == a_before
