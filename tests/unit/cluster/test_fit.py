"""The binder's fit predicates and kube-scheduler's message, as a table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pykueue.api.meta.json_types import JSONDict
from pykueue.cluster.fit import fit_reasons, unschedulable_message
from pykueue.cluster.podutil import pod_requests


def node(
    name: str = "n",
    *,
    cpu: str = "4",
    labels: dict[str, str] | None = None,
    taints: list[JSONDict] | None = None,
    ready: bool = True,
    unschedulable: bool = False,
) -> JSONDict:
    spec: JSONDict = {"taints": taints or []}
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def pod(cpu: str = "1", **spec: Any) -> JSONDict:
    return {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
    }


@dataclass
class Case:
    name: str
    pod: JSONDict
    node: JSONDict
    used: dict[str, int] = field(default_factory=dict)
    want: list[str] = field(default_factory=list)


CASES = [
    Case("fits on an empty node", pod("3"), node()),
    Case("not enough cpu left", pod("3"), node(), used={"cpu": 2000}, want=["Insufficient cpu"]),
    Case("exactly the rest fits", pod("2"), node(), used={"cpu": 2000}),
    Case("pod count is a resource", pod("1"), node(), used={"pods": 10}, want=["Too many pods"]),
    Case("nodeSelector matches", pod(nodeSelector={"gpu": "a100"}), node(labels={"gpu": "a100"})),
    Case(
        "nodeSelector mismatch",
        pod(nodeSelector={"gpu": "a100"}),
        node(labels={"gpu": "t4"}),
        want=["node(s) didn't match Pod's node affinity/selector"],
    ),
    Case(
        "affinity In",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
                        ]
                    }
                }
            }
        ),
        node(labels={"zone": "b"}),
    ),
    Case(
        "affinity NotIn",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["b"]}]}
                        ]
                    }
                }
            }
        ),
        node(labels={"zone": "b"}),
        want=["node(s) didn't match Pod's node affinity/selector"],
    ),
    Case(
        "affinity Exists fails without the label",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]
                    }
                }
            }
        ),
        node(),
        want=["node(s) didn't match Pod's node affinity/selector"],
    ),
    Case(
        "affinity DoesNotExist",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "DoesNotExist"}]}]
                    }
                }
            }
        ),
        node(),
    ),
    Case(
        "terms are ORed",
        pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": "x", "operator": "Exists"}]},
                            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                        ]
                    }
                }
            }
        ),
        node(labels={"zone": "a"}),
    ),
    Case(
        "untolerated NoSchedule taint",
        pod(),
        node(taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
        want=["node(s) had untolerated taint {gpu: yes}"],
    ),
    Case(
        "tolerated by Equal",
        pod(tolerations=[{"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}]),
        node(taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
    ),
    Case(
        "tolerated by Exists on the key",
        pod(tolerations=[{"key": "gpu", "operator": "Exists"}]),
        node(taints=[{"key": "gpu", "value": "yes", "effect": "NoExecute"}]),
    ),
    Case(
        "wrong effect does not tolerate",
        pod(tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}]),
        node(taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
        want=["node(s) had untolerated taint {gpu: yes}"],
    ),
    Case("PreferNoSchedule never blocks", pod(), node(taints=[{"key": "k", "effect": "PreferNoSchedule"}])),
    Case("cordoned node", pod(), node(unschedulable=True), want=["node(s) were unschedulable"]),
    Case(
        "not ready node",
        pod(),
        node(ready=False),
        want=["node(s) had untolerated taint {node.kubernetes.io/not-ready: }"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fit(case: Case) -> None:
    assert fit_reasons(case.pod, case.node, pod_requests(case.pod), case.used) == case.want


def test_requests_take_max_of_init_containers_and_add_overhead() -> None:
    p = {
        "spec": {
            "containers": [
                {"resources": {"requests": {"cpu": "1"}}},
                {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}},
            ],
            "initContainers": [{"resources": {"requests": {"cpu": "2"}}}],
            "overhead": {"cpu": "100m"},
        }
    }
    assert pod_requests(p) == {"cpu": 2100, "memory": 2**30, "pods": 1}


def test_message_reads_like_kube_scheduler() -> None:
    assert unschedulable_message(1, [["Insufficient cpu"]]) == "0/1 nodes are available: 1 Insufficient cpu."
    assert unschedulable_message(
        3,
        [
            ["Insufficient cpu"],
            ["Insufficient cpu", "Insufficient memory"],
            ["node(s) didn't match Pod's node affinity/selector"],
        ],
    ) == (
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node "
        "affinity/selector, 2 Insufficient cpu."
    )
    assert unschedulable_message(0, []) == "no nodes available to schedule pods"
