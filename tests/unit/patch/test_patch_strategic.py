"""Strategic merge patch: cases from the Kubernetes docs and apimachinery's documented behaviour."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.api.meta.errors import BadRequest
from pykueue.registry.patch import apply_merge_patch, apply_strategic_merge_patch

KEYS = {
    "spec.template.spec.containers": "name",
    "spec.template.spec.containers.env": "name",
    "spec.template.spec.containers.ports": "containerPort",
    "spec.template.spec.volumes": "name",
    "spec.containers": "name",
    "status.conditions": "type",
}


def deployment(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "patch-demo", "labels": {"app": "nginx"}},
        "spec": {"replicas": 2, **spec, "template": {"spec": {"containers": containers}}},
    }


def pod_spec(patch: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": patch}}}


NGINX = {"name": "patch-demo-ctr", "image": "nginx"}
REDIS = {"name": "patch-demo-ctr-2", "image": "redis"}
TOLERATION = {"effect": "NoSchedule", "key": "dedicated", "value": "test-team"}

CASES: list[Any] = [
    # kubernetes.io "Update API Objects in Place Using kubectl patch": the new container is merged
    # by name and (Kubernetes' ordering rule) comes before the live-only one.
    pytest.param(
        deployment([NGINX]),
        pod_spec({"containers": [REDIS]}),
        deployment([REDIS, NGINX]),
        id="docs-add-container-merged-by-name",
    ),
    # ... while tolerations have no merge strategy: the patch replaces the list.
    pytest.param(
        deployment(
            [NGINX],
        )
        | {"spec": {"replicas": 2, "template": {"spec": {"containers": [NGINX], "tolerations": [TOLERATION]}}}},
        pod_spec({"tolerations": [{"effect": "NoSchedule", "key": "disktype", "value": "ssd"}]}),
        {
            **deployment([NGINX]),
            "spec": {
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [NGINX],
                        "tolerations": [{"effect": "NoSchedule", "key": "disktype", "value": "ssd"}],
                    }
                },
            },
        },
        id="docs-tolerations-replaced",
    ),
    pytest.param(
        deployment([NGINX, REDIS]),
        pod_spec({"containers": [{"name": "patch-demo-ctr", "image": "nginx:1.27"}]}),
        deployment([{"name": "patch-demo-ctr", "image": "nginx:1.27"}, REDIS]),
        id="same-key-merged-in-place",
    ),
    pytest.param(
        deployment([NGINX, REDIS]),
        pod_spec({"containers": [{"name": "patch-demo-ctr", "$patch": "delete"}]}),
        deployment([REDIS]),
        id="list-item-patch-delete",
    ),
    pytest.param(
        deployment([NGINX, REDIS]),
        pod_spec({"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}),
        deployment([{"name": "only", "image": "x"}]),
        id="list-patch-replace",
    ),
    pytest.param(
        deployment([NGINX]),
        {"metadata": {"labels": {"$patch": "replace", "new": "1"}}},
        deployment([NGINX]) | {"metadata": {"name": "patch-demo", "labels": {"new": "1"}}},
        id="map-patch-replace",
    ),
    pytest.param(
        deployment([NGINX]),
        {"metadata": {"labels": {"$patch": "delete"}}},
        deployment([NGINX]) | {"metadata": {"name": "patch-demo", "labels": {}}},
        id="map-patch-delete-empties-map",
    ),
    pytest.param(
        deployment([NGINX]),
        {"metadata": {"labels": {"app": None, "x": "y"}}},
        deployment([NGINX]) | {"metadata": {"name": "patch-demo", "labels": {"x": "y"}}},
        id="null-deletes-key",
    ),
    pytest.param(
        deployment([NGINX]),
        {"spec": {"template": {"spec": {"containers": []}}}},
        deployment([NGINX]),
        id="empty-merging-list-is-noop",
    ),
    pytest.param(
        deployment([NGINX]),
        {"spec": {"template": {"spec": {"containers": None}}}},
        {**deployment([NGINX]), "spec": {"replicas": 2, "template": {"spec": {}}}},
        id="null-deletes-merging-list",
    ),
    # kubernetes.io docs: "Use strategic merge patch to update a Deployment using the retainKeys strategy".
    pytest.param(
        deployment([NGINX], strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}),
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        deployment([NGINX], strategy={"type": "Recreate"}),
        id="docs-retainKeys",
    ),
    pytest.param(
        deployment([{"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]),
        pod_spec({"containers": [{"name": "c", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]}),
        deployment(
            [
                {
                    "name": "c",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}],
                }
            ]
        ),
        id="nested-env-merged-by-name",
    ),
    pytest.param(
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["c", "a"]}},
        {"metadata": {"finalizers": ["c", "a", "b"]}},
        id="finalizers-set-union-by-default",
    ),
    pytest.param(
        {"metadata": {"finalizers": ["a", "b", "c"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zz"]}},
        {"metadata": {"finalizers": ["a", "c"]}},
        id="deleteFromPrimitiveList",
    ),
    pytest.param(
        {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}},
        {"metadata": {"ownerReferences": [{"uid": "1", "controller": True}]}},
        {"metadata": {"ownerReferences": [{"uid": "1", "name": "a", "controller": True}]}},
        id="ownerReferences-merge-by-uid-by-default",
    ),
    pytest.param(
        deployment([{"name": "a"}, {"name": "b"}, {"name": "c"}]),
        pod_spec({"$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}]}),
        deployment([{"name": "c"}, {"name": "b"}, {"name": "a"}]),
        id="setElementOrder-reorders",
    ),
    pytest.param(
        deployment([{"name": "a"}, {"name": "b"}]),
        pod_spec(
            {
                "$setElementOrder/containers": [{"name": "a"}, {"name": "new"}, {"name": "b"}],
                "containers": [{"name": "new", "image": "n"}],
            }
        ),
        deployment([{"name": "a"}, {"name": "new", "image": "n"}, {"name": "b"}]),
        id="setElementOrder-places-new-item",
    ),
    pytest.param(
        {"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}},
        {"spec": {"containers": [{"name": "a", "args": ["z"]}]}},
        {"spec": {"containers": [{"name": "a", "args": ["z"]}]}},
        id="args-list-atomic",
    ),
    pytest.param(
        {"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "Other"}]}},
        {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Up"}]}},
        {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Up"}, {"type": "Other"}]}},
        id="conditions-merged-by-type",
    ),
    pytest.param(
        {},
        pod_spec({"containers": [{"name": "x", "$patch": "delete"}, {"name": "y"}]}),
        pod_spec({"containers": [{"name": "y"}]}),
        id="directives-stripped-from-new-list",
    ),
    pytest.param({}, {"spec": {"a": {"b": None, "c": 1}}}, {"spec": {"a": {"c": 1}}}, id="nulls-dropped-from-new-map"),
]


@pytest.mark.parametrize(("current", "patch", "want"), CASES)
def test_strategic_merge_patch(current: dict[str, Any], patch: dict[str, Any], want: dict[str, Any]) -> None:
    current_before, patch_before = copy.deepcopy(current), copy.deepcopy(patch)
    assert apply_strategic_merge_patch(current, patch, KEYS) == want
    assert current == current_before, "current was mutated"
    assert patch == patch_before, "patch was mutated"


def test_kubectl_apply_three_way_patch() -> None:
    """The patch ``kubectl apply`` builds when a container is dropped and another changed: live
    fields the server defaulted (imagePullPolicy) and labels added by others survive."""
    live = deployment(
        [
            {"name": "a", "image": "nginx:1", "imagePullPolicy": "IfNotPresent"},
            {"name": "b", "image": "redis", "imagePullPolicy": "Always"},
        ]
    )
    live["metadata"]["labels"]["added-by-kubectl-label"] = "x"
    live["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": "{...old}"}
    patch = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{...new}"}},
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}],
                    "containers": [{"image": "nginx:2", "name": "a"}, {"$patch": "delete", "name": "b"}],
                }
            }
        },
    }
    got = apply_strategic_merge_patch(live, patch, KEYS)
    assert got["spec"]["template"]["spec"]["containers"] == [
        {"name": "a", "image": "nginx:2", "imagePullPolicy": "IfNotPresent"}
    ]
    assert got["metadata"]["labels"] == {"app": "nginx", "added-by-kubectl-label": "x"}
    assert got["metadata"]["annotations"] == {"kubectl.kubernetes.io/last-applied-configuration": "{...new}"}


def test_kubectl_apply_three_way_patch_removes_field_dropped_from_config() -> None:
    live = deployment([NGINX], minReadySeconds=5)
    patch = {"spec": {"minReadySeconds": None}}
    assert "minReadySeconds" not in apply_strategic_merge_patch(live, patch, KEYS)["spec"]


def test_kubectl_edit_two_way_patch_with_env_order() -> None:
    live = deployment([{"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}])
    patch = pod_spec(
        {
            "containers": [{"name": "c", "$setElementOrder/env": [{"name": "B"}, {"name": "A"}]}],
            "$setElementOrder/containers": [{"name": "c"}],
        }
    )
    got = apply_strategic_merge_patch(live, patch, KEYS)
    assert got["spec"]["template"]["spec"]["containers"][0]["env"] == [
        {"name": "B", "value": "2"},
        {"name": "A", "value": "1"},
    ]


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param(pod_spec({"containers": [{"image": "no-name"}]}), id="missing-merge-key"),
        pytest.param(pod_spec({"containers": [{"$patch": "delete"}]}), id="delete-without-merge-key"),
        pytest.param({"metadata": {"$patch": "frobnicate"}}, id="unknown-map-directive"),
        pytest.param(pod_spec({"containers": [{"name": "a", "$patch": "merge"}]}), id="list-merge-directive"),
        pytest.param(
            {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}, id="retainKeys-missing-patched-key"
        ),
        pytest.param({"spec": {"$retainKeys": "type"}}, id="retainKeys-not-list"),
        pytest.param({"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}}, id="deletion-list-not-list"),
        pytest.param(
            pod_spec(
                {
                    "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                    "containers": [{"name": "b"}, {"name": "a"}],
                }
            ),
            id="setElementOrder-mismatch",
        ),
        pytest.param(["not", "a", "map"], id="patch-not-object"),
    ],
)
def test_malformed_strategic_patch_is_400(patch: Any) -> None:
    live = deployment([{"name": "a"}, {"name": "b"}])
    before = copy.deepcopy(live)
    with pytest.raises(BadRequest):
        apply_strategic_merge_patch(live, patch, KEYS)
    assert live == before


_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)),
    max_leaves=8,
)
_docs = st.dictionaries(st.sampled_from("abcde"), _json, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_docs, _docs)
def test_without_merge_keys_or_directives_it_is_a_merge_patch(a: dict[str, Any], p: dict[str, Any]) -> None:
    a_before, p_before = copy.deepcopy(a), copy.deepcopy(p)
    assert apply_strategic_merge_patch(a, p, {}) == apply_merge_patch(a, p)
    assert (a, p) == (a_before, p_before)


_items = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from("abcdef"), "v": st.integers(0, 3)}),
    max_size=5,
    unique_by=lambda d: d["name"],
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_items, _items)
def test_merging_list_keeps_every_key_once_with_patch_values(live: list[Any], patch: list[Any]) -> None:
    got = apply_strategic_merge_patch({"spec": {"containers": live}}, {"spec": {"containers": patch}}, KEYS)["spec"][
        "containers"
    ]
    want = {d["name"]: d["v"] for d in live} | {d["name"]: d["v"] for d in patch}
    assert {d["name"]: d["v"] for d in got} == want
    assert len(got) == len(want)
    assert [d["name"] for d in got if d["name"] in {p["name"] for p in patch}] == [p["name"] for p in patch]
