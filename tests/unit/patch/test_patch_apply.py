"""Server-side apply: merge, ownership, removal of dropped fields, conflicts and force."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.api.meta.errors import BadRequest, Conflict
from pykueue.registry.patch import server_side_apply, update_managed_fields

KEYS = {
    "spec.podSets": "name",
    "spec.template.spec.containers": "name",
    "spec.template.spec.containers.ports": "containerPort,protocol",
    "status.conditions": "type",
}
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"


def deploy(replicas: int = 2, containers: list[dict[str, Any]] | None = None, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", **metadata},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": containers or [{"name": "nginx", "image": "nginx:1"}]}},
        },
    }


def apply(
    current: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str = "kubectl",
    force: bool = False,
    now: str = T1,
    subresource: str = "",
) -> dict[str, Any]:
    return server_side_apply(
        current, config, manager=manager, force=force, merge_keys=KEYS, now=now, subresource=subresource
    )


def update(
    old: dict[str, Any] | None, new: dict[str, Any], manager: str, now: str = T0, subresource: str = ""
) -> dict[str, Any]:
    return update_managed_fields(
        old, new, manager=manager, operation="Update", now=now, subresource=subresource, merge_keys=KEYS
    )


def owners(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", [])}


def without_meta_fields(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].pop("managedFields", None)
    return out


def test_create_by_apply_records_exactly_the_applied_fields() -> None:
    obj = apply(None, deploy(labels={"app": "web"}))
    assert without_meta_fields(obj) == deploy(labels={"app": "web"})
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:template": {
                        "f:spec": {"f:containers": {'k:{"name":"nginx"}': {".": {}, "f:image": {}, "f:name": {}}}}
                    },
                },
            },
        }
    ]


def test_apply_same_config_twice_changes_nothing_but_time() -> None:
    first = apply(None, deploy())
    second = apply(first, deploy(), now=T2)
    assert without_meta_fields(second) == without_meta_fields(first)
    assert owners(second)["kubectl"]["fieldsV1"] == owners(first)["kubectl"]["fieldsV1"]


def test_field_dropped_from_config_is_removed() -> None:
    live = apply(None, deploy(labels={"app": "web", "old": "x"}))
    got = apply(live, deploy(labels={"app": "web"}))
    assert got["metadata"]["labels"] == {"app": "web"}
    assert "f:old" not in owners(got)["kubectl"]["fieldsV1"]["f:metadata"]["f:labels"]


def test_field_dropped_from_config_stays_when_another_manager_owns_it() -> None:
    live = apply(None, deploy(labels={"app": "web", "shared": "x"}))
    live = apply(
        live,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"shared": "x"}}},
        manager="other",
    )
    got = apply(live, deploy(labels={"app": "web"}))
    assert got["metadata"]["labels"] == {"app": "web", "shared": "x"}
    assert owners(got)["other"]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:shared": {}}}}


def test_list_item_dropped_from_config_is_removed_unless_someone_owns_part_of_it() -> None:
    two = [{"name": "nginx", "image": "nginx:1"}, {"name": "side", "image": "busybox"}]
    live = apply(None, deploy(containers=two))
    dropped = apply(live, deploy())
    assert dropped["spec"]["template"]["spec"]["containers"] == [{"name": "nginx", "image": "nginx:1"}]
    # a controller sets a field inside the sidecar: the item survives with the key and that field
    changed = copy.deepcopy(live)
    changed["spec"]["template"]["spec"]["containers"][1]["resources"] = {"limits": {"cpu": "1"}}
    live = update(live, changed, "controller", now=T1)
    kept = apply(live, deploy())
    assert kept["spec"]["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:1"},
        {"name": "side", "resources": {"limits": {"cpu": "1"}}},
    ]


def test_conflict_with_updater_has_kubernetes_message() -> None:
    live = update(None, deploy(), "kubectl-client-side-apply")
    with pytest.raises(Conflict) as info:
        apply(live, deploy(replicas=3))
    assert info.value.code == 409
    assert info.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas'
    )
    assert info.value.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
                "field": ".spec.replicas",
            }
        ]
    }


def test_conflict_paths_name_list_items_and_group_by_manager() -> None:
    live = apply(None, deploy(labels={"a": "1"}), manager="alice")
    live = update(live, {**live, "spec": {**live["spec"], "paused": True}}, "bob", now=T1)
    config = deploy(replicas=5, containers=[{"name": "nginx", "image": "nginx:2"}], labels={"a": "1"})
    config["spec"]["paused"] = False
    with pytest.raises(Conflict) as info:
        apply(live, config, manager="carol")
    assert info.value.message == (
        'Apply failed with 3 conflicts: conflicts with "alice":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="nginx"].image\n'
        'conflicts with "bob" using apps/v1:\n'
        "- .spec.paused"
    )


def test_same_value_shares_ownership_without_conflict() -> None:
    live = update(None, deploy(), "creator")
    got = apply(live, deploy())
    assert got["spec"]["replicas"] == 2
    assert "f:replicas" in owners(got)["creator"]["fieldsV1"]["f:spec"]
    assert "f:replicas" in owners(got)["kubectl"]["fieldsV1"]["f:spec"]


def test_force_takes_ownership() -> None:
    live = update(None, deploy(), "hpa")
    got = apply(live, deploy(replicas=7), force=True)
    assert got["spec"]["replicas"] == 7
    assert "f:replicas" not in owners(got)["hpa"]["fieldsV1"]["f:spec"]
    assert "f:replicas" in owners(got)["kubectl"]["fieldsV1"]["f:spec"]


def test_list_owned_whole_by_an_updater_conflicts_when_apply_changes_an_item() -> None:
    """An Update writer that tracked containers as one atomic list (no merge keys) still owns the
    list: an apply changing an item inside it conflicts on the list, and force takes it."""
    live = update_managed_fields(None, deploy(), manager="creator", operation="Update", now=T0)
    assert "f:containers" in str(live["metadata"]["managedFields"])
    config = deploy(containers=[{"name": "nginx", "image": "nginx:2"}])
    with pytest.raises(Conflict, match=r"\.spec\.template\.spec\.containers$"):
        apply(live, config)
    forced = apply(live, config, force=True)
    assert "f:containers" not in str(owners(forced)["creator"]["fieldsV1"])
    assert forced["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"


def test_empty_map_owned_by_another_does_not_conflict_when_filled() -> None:
    base = deploy()
    base["spec"]["template"]["metadata"] = {}
    live = update(None, base, "creator")
    config = deploy()
    config["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    assert apply(live, config)["spec"]["template"]["metadata"] == {"labels": {"a": "b"}}


def test_merge_keys_written_with_brackets_are_understood() -> None:
    keys = {"spec.template.spec.containers": "name", "spec.template.spec.containers[].env": "name"}
    live = server_side_apply(
        None,
        deploy(containers=[{"name": "c", "env": [{"name": "A", "value": "1"}]}]),
        manager="a",
        force=False,
        merge_keys=keys,
        now=T0,
    )
    container = owners(live)["a"]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert 'k:{"name":"A"}' in container["f:env"]


def test_conflict_between_appliers_names_the_applier_plainly() -> None:
    live = apply(None, deploy(), manager="team-a")
    with pytest.raises(Conflict, match=r'conflict with "team-a": \.spec\.replicas$'):
        apply(live, deploy(replicas=1), manager="team-b")


def test_keyed_list_merge_keeps_live_items_in_place() -> None:
    live = apply(
        None,
        {
            "apiVersion": "v1",
            "kind": "W",
            "metadata": {"name": "w"},
            "spec": {"podSets": [{"name": "a", "count": 1}, {"name": "b", "count": 1}, {"name": "c", "count": 1}]},
        },
        manager="m1",
    )
    got = apply(
        live,
        {
            "apiVersion": "v1",
            "kind": "W",
            "metadata": {"name": "w"},
            "spec": {"podSets": [{"name": "d", "count": 4}, {"name": "b", "count": 1}]},
        },
    )
    assert [p["name"] for p in got["spec"]["podSets"]] == ["a", "d", "b", "c"]


def test_multi_key_list_and_sets() -> None:
    ports = [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"}]
    config = deploy(containers=[{"name": "nginx", "image": "nginx:1", "ports": ports}], finalizers=["example.com/a"])
    got = apply(None, config)
    fields = owners(got)["kubectl"]["fieldsV1"]
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert set(container["f:ports"]) == {
        'k:{"containerPort":80,"protocol":"TCP"}',
        'k:{"containerPort":80,"protocol":"UDP"}',
    }
    assert fields["f:metadata"]["f:finalizers"] == {'v:"example.com/a"': {}}
    other = apply(
        got,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "finalizers": ["example.com/b"]}},
        manager="other",
    )
    assert other["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]


def test_status_subresource_apply_owns_only_status() -> None:
    live = apply(None, deploy())
    config = {**deploy(replicas=99), "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    got = apply(live, config, manager="ctrl", subresource="status")
    assert got["spec"]["replicas"] == 2
    assert got["status"] == {"conditions": [{"type": "Ready", "status": "True"}]}
    entry = owners(got)["ctrl"]
    assert entry["subresource"] == "status"
    assert list(entry["fieldsV1"]) == ["f:status"]
    changed = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]},
    }
    with pytest.raises(Conflict, match='conflict with "ctrl" with subresource "status"'):
        apply(got, changed, manager="other", subresource="status")


def test_first_apply_to_untracked_object_conflicts_with_before_first_apply() -> None:
    live = deploy()
    with pytest.raises(Conflict, match=r'conflict with "before-first-apply" using apps/v1: \.spec\.replicas'):
        apply(live, deploy(replicas=4))
    got = apply(live, deploy(replicas=2, labels={"a": "b"}))
    assert set(owners(got)) == {"before-first-apply", "kubectl"}


def test_kubectl_server_side_apply_refreshes_client_side_annotation() -> None:
    annotation = "kubectl.kubernetes.io/last-applied-configuration"
    live = update(None, deploy(annotations={annotation: '{"old":true}\n'}), "kubectl-client-side-apply")
    got = apply(live, deploy(), force=True)
    assert json.loads(got["metadata"]["annotations"][annotation]) == deploy()
    other = apply(live, deploy(), manager="helm", force=True)
    assert other["metadata"]["annotations"][annotation] == '{"old":true}\n'


def test_main_resource_apply_ignores_status() -> None:
    got = apply(None, {**deploy(), "status": {"replicas": 3}})
    assert "status" not in got
    assert "f:status" not in owners(got)["kubectl"]["fieldsV1"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            deploy(managedFields=[{"manager": "x"}]), "metadata.managedFields must be nil", id="managedFields"
        ),
        pytest.param(deploy(containers=[{"image": "x"}]), "omits key field 'name'", id="missing-key"),
        pytest.param(deploy(containers=[{"name": "a"}, {"name": "a"}]), "duplicate entries", id="duplicate-key"),
    ],
)
def test_bad_configurations_are_400(config: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        apply(None, config)


def test_apply_does_not_mutate_inputs() -> None:
    live = apply(None, deploy(labels={"a": "1"}))
    config = deploy(replicas=3, labels={"b": "2"})
    live_before, config_before = copy.deepcopy(live), copy.deepcopy(config)
    got = apply(live, config)
    got["spec"]["template"]["spec"]["containers"][0]["image"] = "mutated"
    assert live == live_before
    assert config == config_before


# ---- properties ---------------------------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c", "d"])
_values = st.one_of(st.integers(0, 3), st.sampled_from(["x", "y"]), st.booleans())


def _name_of(item: Any) -> Any:
    return item["name"]


_leafmaps = st.dictionaries(st.sampled_from(["p", "q", "r"]), _values, max_size=3)
_configs = st.fixed_dictionaries(
    {
        "apiVersion": st.just("kueue.x-k8s.io/v1beta2"),
        "kind": st.just("Workload"),
        "metadata": st.fixed_dictionaries({"name": st.just("w")}, optional={"labels": _leafmaps}),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "queueName": st.sampled_from(["q1", "q2"]),
                "podSets": st.lists(
                    st.fixed_dictionaries({"name": _names}, optional={"count": st.integers(1, 3), "extra": _leafmaps}),
                    max_size=3,
                    unique_by=_name_of,
                ),
                "tags": st.lists(_values, max_size=3),
                "nested": _leafmaps,
            },
        ),
    }
)
_SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_configs, _configs)
def test_applying_the_same_config_twice_is_idempotent(first: dict[str, Any], second: dict[str, Any]) -> None:
    live = apply(None, first, manager="one", now=T0)
    once = apply(live, second, now=T1, force=True)
    twice = apply(once, second, now=T1, force=True)
    assert twice == once


@_SETTINGS
@given(_configs, _configs)
def test_applied_fields_end_up_in_the_object(first: dict[str, Any], second: dict[str, Any]) -> None:
    live = apply(None, first, manager="one", now=T0)
    live_before, second_before = copy.deepcopy(live), copy.deepcopy(second)
    got = apply(live, second, force=True)
    assert (live, second) == (live_before, second_before)
    assert got["spec"].get("queueName") == second["spec"].get("queueName", live["spec"].get("queueName"))
    got_sets = {p["name"]: p for p in got["spec"].get("podSets", [])}
    for pod_set in second["spec"].get("podSets", []):
        got_set = got_sets[pod_set["name"]]
        assert got_set.get("count") == pod_set.get("count", got_set.get("count"))
        assert got_set.get("extra", {}).items() >= pod_set.get("extra", {}).items()  # maps merge


_order_names = st.lists(st.sampled_from("abcdefg"), unique=True, max_size=6)


@_SETTINGS
@given(_order_names, _order_names)
def test_keyed_list_merge_keeps_both_relative_orders(live_names: list[str], config_names: list[str]) -> None:
    def workload(names: list[str]) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "W",
            "metadata": {"name": "w"},
            "spec": {"podSets": [{"name": n} for n in names]},
        }

    live = apply(None, workload(live_names), manager="m1", now=T0)
    got = [p["name"] for p in apply(live, workload(config_names))["spec"].get("podSets", [])]
    assert sorted(got) == sorted(set(live_names) | set(config_names))
    assert [n for n in got if n in config_names] == config_names
    assert [n for n in got if n not in config_names] == [n for n in live_names if n not in config_names]
