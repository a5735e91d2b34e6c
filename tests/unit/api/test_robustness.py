"""Property tests: bad input never raises, valid generated objects validate, defaulting is idempotent."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pykueue.api.catalogue import build_catalogue, unknown_fields
from pykueue.testing.builders.raw_specs import cluster_queue, info, workload

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.text(max_size=8) | st.sampled_from(["1Gi", "-1", "main"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "status",
                    "name",
                    "podSets",
                    "resourceGroups",
                    "flavors",
                    "resources",
                    "count",
                    "template",
                    "containers",
                    "conditions",
                    "admission",
                    "nominalQuota",
                    "levels",
                    "x",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@pytest.mark.parametrize("kind", list(build_catalogue()), ids=lambda k: k.resource_key)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=json_values, old=json_values)
def test_garbage_never_raises(kind: Any, body: Any, old: Any) -> None:
    obj = {
        "apiVersion": f"{kind.group}/{kind.storage_version}" if kind.group else kind.storage_version,
        "kind": kind.kind,
        "metadata": {"name": "x", "namespace": "default"},
    }
    if isinstance(body, dict):
        obj.update(body)
    else:
        obj["spec"] = body
    previous = {**obj, "spec": old} if isinstance(old, dict) else None
    defaulted = kind.default(obj)
    errors = kind.validate(defaulted, previous)
    assert all(e.field is not None and e.message for e in errors)
    unknown_fields(kind, kind.storage_version, obj)
    for version in kind.versions:
        kind.convert(obj, version)


names = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)


@st.composite
def valid_cluster_queues(draw: st.DrawFn) -> dict[str, Any]:
    resources = draw(
        st.lists(st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "pods"]), min_size=1, max_size=4, unique=True)
    )
    flavors = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    cohort = draw(st.one_of(st.none(), names))
    quotas = st.integers(0, 10**9).map(str) | st.sampled_from(["500m", "8Gi", "1.5", "0"])
    groups = [
        {
            "coveredResources": resources,
            "flavors": [
                {
                    "name": f,
                    "resources": [
                        {
                            "name": r,
                            "nominalQuota": draw(quotas),
                            **({"borrowingLimit": draw(quotas)} if cohort and draw(st.booleans()) else {}),
                        }
                        for r in resources
                    ],
                }
                for f in flavors
            ],
        }
    ]
    cq = cluster_queue(cohort=cohort, resourceGroups=groups)
    cq["spec"]["queueingStrategy"] = draw(st.sampled_from(["StrictFIFO", "BestEffortFIFO"]))
    reclaim = draw(st.sampled_from(["Never", "LowerPriority", "Any"]))
    borrow = "Never" if reclaim == "Never" else draw(st.sampled_from(["Never", "LowerPriority"]))
    cq["spec"]["preemption"] = {
        "reclaimWithinCohort": reclaim,
        "borrowWithinCohort": {"policy": borrow},
        "withinClusterQueue": draw(st.sampled_from(["Never", "LowerPriority", "LowerOrNewerEqualPriority"])),
    }
    return cq


@settings(max_examples=60, deadline=None)
@given(valid_cluster_queues())
def test_generated_valid_cluster_queues_pass_and_defaults_are_idempotent(cq: dict[str, Any]) -> None:
    cq_info = info("ClusterQueue")
    once = cq_info.default(cq)
    assert cq_info.default(once) == once
    assert cq_info.validate(once, None) == []
    assert cq_info.validate(once, copy.deepcopy(once)) == []
    assert unknown_fields(cq_info, "v1beta2", once) == []


@settings(max_examples=40, deadline=None)
@given(counts=st.lists(st.integers(1, 50), min_size=1, max_size=18))
def test_generated_valid_workloads_pass(counts: list[int]) -> None:
    wl_info = info("Workload")
    pod_sets = [
        {
            "name": f"ps{i}",
            "count": c,
            "template": {
                "spec": {"containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}]}
            },
        }
        for i, c in enumerate(counts)
    ]
    obj = wl_info.default(workload(pod_sets=pod_sets))
    assert wl_info.validate(obj, None) == []


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out.extend(_paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.extend(_paths(child, (*prefix, index)))
    return out


def _replace(obj: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(obj)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


def _valid_objects() -> list[tuple[str, str, dict[str, Any]]]:
    from pykueue.testing.builders.raw_specs import job, reserved

    wl = reserved(
        workload(
            priority=1, priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "p"}
        ),
        admitted=True,
    )
    wl["status"]["reclaimablePods"] = [{"name": "main", "count": 1}]
    wl["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = {
        "levels": ["rack"],
        "slices": [{"domainCount": 1, "valuesPerLevel": [{"universal": "r"}], "podCounts": {"universal": 3}}],
    }
    cq = cluster_queue(
        cohort="team",
        admissionChecksStrategy={"admissionChecks": [{"name": "a", "onFlavors": ["default"]}]},
        namespaceSelector={"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]},
    )
    rf = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "rf"},
        "spec": {
            "nodeLabels": {"a": "b"},
            "nodeTaints": [{"key": "k", "effect": "NoSchedule"}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "topologyName": "t",
        },
    }
    jb = job(selector={"matchLabels": {"a": "b"}}, manualSelector=True)
    jb["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    return [
        ("kueue.x-k8s.io", "Workload", wl),
        ("kueue.x-k8s.io", "ClusterQueue", cq),
        ("kueue.x-k8s.io", "ResourceFlavor", rf),
        ("batch", "Job", jb),
    ]


VALID = _valid_objects()


@pytest.mark.parametrize(("group", "kind", "obj"), VALID, ids=[v[1] for v in VALID])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutating_any_field_of_a_valid_object_never_raises(
    group: str, kind: str, obj: dict[str, Any], data: st.DataObject
) -> None:
    kind_info = info(kind, group)
    paths = _paths(obj)[1:]
    path = data.draw(st.sampled_from(paths))
    broken = _replace(obj, path, data.draw(json_values))
    use_old = data.draw(st.booleans())
    defaulted = kind_info.default(broken)
    kind_info.validate(defaulted, obj if use_old else None)
    kind_info.validate(kind_info.default(obj), defaulted)
    unknown_fields(kind_info, kind_info.storage_version, broken)
    for version in kind_info.versions:
        kind_info.convert(broken, version)
