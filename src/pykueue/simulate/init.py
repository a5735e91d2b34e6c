"""``pykueue simulate init``: a starting configuration derived from a trace's node list.

Owns the objects written for a node list (openb's ``openb_node_list_*.csv``): three
WorkloadPriorityClasses (``high`` 1000, ``medium`` 500, ``low`` 100: the default QoS mapping's
targets), a ResourceFlavor ``cpu`` for cpu and memory of all nodes, one ResourceFlavor per GPU model
(node label ``pykueue.io/gpu-model``, name from the openb mapping) with the model's GPUs as quota of
the GPU resource, and ``teams`` ClusterQueues ``team-<i>`` in the cohort ``cluster`` sharing the
capacity evenly (the remainder to the first), each with a namespace and a LocalQueue of its name.
One team gives a single ClusterQueue ``shared`` without a cohort. ``capacity_scale`` multiplies
every quota (the openb trace's own tasks never use more than about 1 % of its cluster at once, so
a study of contention shrinks the capacity instead of inventing load).

Policies: preemption (``reclaimWithinCohort: Any``, ``withinClusterQueue: LowerPriority``) unless
``preemption=False``; ``fair_sharing`` adds a Kueue ``Configuration`` document turning fair sharing
on (for ``pykueue simulate`` and ``pykueue up --config``; remove it before ``kubectl apply``).

Who calls it: the CLI. Invariant: the same nodes give the same YAML, byte for byte.
"""

from __future__ import annotations

from typing import Any

import yaml

from pykueue.simulate.model import API
from pykueue.simulate.openb import Node, OpenbMapping

__all__ = ["PRIORITY_CLASSES", "init_objects", "render"]

PRIORITY_CLASSES = {"high": 1000, "medium": 500, "low": 100}


def _split(total: int, teams: int, index: int) -> int:
    share = total // teams
    return share + (total - share * teams if index == 0 else 0)


def init_objects(
    nodes: list[Node],
    *,
    teams: int = 4,
    mapping: OpenbMapping | None = None,
    preemption: bool = True,
    fair_sharing: bool = False,
    capacity_scale: float = 1.0,
) -> list[dict[str, Any]]:
    mapping = mapping or OpenbMapping()
    cpu = round(sum(n.cpu_milli for n in nodes) * capacity_scale)
    mem = round(sum(n.memory_mib for n in nodes) * capacity_scale)
    gpus: dict[str, int] = {}
    for n in nodes:
        if n.model and n.gpus > 0:
            gpus[n.model] = gpus.get(n.model, 0) + n.gpus * 1000
    gpus = {m: round(g * capacity_scale) for m, g in gpus.items()}
    models = sorted(gpus, key=lambda m: (-gpus[m], m))  # biggest pools first: the first flavor tried
    out: list[dict[str, Any]] = []
    if fair_sharing:
        out.append(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
            }
        )
    for name, value in PRIORITY_CLASSES.items():
        out.append(
            {
                "apiVersion": API,
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": name},
                "value": value,
                "description": "QoS mapped by pykueue simulate",
            }
        )
    out.append({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "cpu"}, "spec": {}})
    for model in models:
        out.append(
            {
                "apiVersion": API,
                "kind": "ResourceFlavor",
                "metadata": {"name": mapping.flavor_of(model)},
                "spec": {"nodeLabels": {mapping.gpu_model_label: model}},
            }
        )
    names = ["shared"] if teams == 1 else [f"team-{i}" for i in range(teams)]
    for i, name in enumerate(names):
        groups: list[dict[str, Any]] = [
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "cpu",
                        "resources": [
                            {"name": "cpu", "nominalQuota": f"{_split(cpu, teams, i)}m"},
                            {"name": "memory", "nominalQuota": f"{_split(mem, teams, i)}Mi"},
                        ],
                    }
                ],
            }
        ]
        if models:
            groups.append(
                {
                    "coveredResources": [mapping.gpu_resource],
                    "flavors": [
                        {
                            "name": mapping.flavor_of(m),
                            "resources": [
                                {"name": mapping.gpu_resource, "nominalQuota": str(_split(gpus[m], teams, i))}
                            ],
                        }
                        for m in models
                    ],
                }
            )
        spec: dict[str, Any] = {
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": groups,
            "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
        }
        if teams > 1:
            spec["cohortName"] = "cluster"
        if preemption or fair_sharing:
            spec["preemption"] = {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
            if fair_sharing:
                spec["preemption"]["borrowWithinCohort"] = {"policy": "LowerPriority"}
        if fair_sharing:
            spec["fairSharing"] = {"weight": "1"}
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        out.append({"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec})
        out.append(
            {
                "apiVersion": API,
                "kind": "LocalQueue",
                "metadata": {"name": name, "namespace": name},
                "spec": {"clusterQueue": name},
            }
        )
    return out


def render(objects: list[dict[str, Any]], header: str) -> str:
    body = yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False)
    return "".join(f"# {line}\n" for line in header.splitlines()) + body
