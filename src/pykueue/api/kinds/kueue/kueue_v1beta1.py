"""Kueue v1beta1: its schema (derived from v1beta2) and the conversion to and from the hub (v1beta2).

Owns the differences between Kueue's v1beta1 and v1beta2 APIs, in one place, both as schema edits and as object
conversions: ClusterQueue ``cohort`` / ``admissionChecks`` / ``Borrow``+``Preempt``, Workload
``priorityClassName``+``priorityClassSource`` / the ``accumulatedPastExexcutionTimeSeconds`` typo /
``domains`` topology assignments, LocalQueue ``flavorUsage``, AdmissionCheck
``retryDelayMinutes``, and Topology levels being fully immutable.

Invariant: ``to_hub(from_hub(x)) == x`` for every v1beta2 object whose v1beta2-only fields
(preemption gates, slice constraints, concurrentAdmissionPolicy) are unset; v1beta1-only fields
that v1beta2 cannot represent are dropped, as Kueue's conversion webhook does.
"""

from __future__ import annotations

from typing import Any

from pykueue.api.meta.json_types import JSONDict
from pykueue.api.meta.jsoncopy import json_copy
from pykueue.api.meta.lenient_json import dict_or_empty

__all__ = ["derive_schema", "from_hub", "to_hub"]

_WPC_SOURCE = "kueue.x-k8s.io/workloadpriorityclass"
_PC_SOURCE = "scheduling.k8s.io/priorityclass"


# ------------------------------------------------------------------------------------ schemas


def _props(schema: JSONDict, *path: str) -> JSONDict:
    node = schema
    for name in path:
        node = node["properties"][name]
    props: JSONDict = node["properties"]
    return props


def _rename(props: JSONDict, old: str, new: str) -> None:
    props[new] = props.pop(old)
    if "description" in props[new]:
        props[new]["description"] = props[new]["description"].replace(old, new)


def derive_schema(kind: str, schema: JSONDict) -> JSONDict:
    """Edit a (copied) v1beta2 schema into the v1beta1 one."""
    if kind == "ClusterQueue":
        spec = schema["properties"]["spec"]
        props = spec["properties"]
        _rename(props, "cohortName", "cohort")
        props.pop("concurrentAdmissionPolicy", None)
        props["admissionChecks"] = {
            "type": "array",
            "items": {"type": "string"},
            "x-kubernetes-list-type": "set",
            "description": "admissionChecks lists the AdmissionChecks required by this ClusterQueue. "
            "Cannot be used along with AdmissionCheckStrategy.",
        }
        for rule in spec.get("x-kubernetes-validations", []):
            rule["rule"] = rule["rule"].replace("cohortName", "cohort")
        spec.setdefault("x-kubernetes-validations", []).append(
            {
                "rule": "!(has(self.admissionChecks) && has(self.admissionChecksStrategy))",
                "message": "Either admissionChecks or admissionCheckStrategy can be set, but not both",
            }
        )
        fungibility = props["flavorFungibility"]["properties"]
        fungibility["whenCanBorrow"]["enum"] = ["Borrow", "MayStopSearch", "TryNextFlavor"]
        fungibility["whenCanPreempt"]["enum"] = ["Preempt", "MayStopSearch", "TryNextFlavor"]
        status = _props(schema, "status")
        status["pendingWorkloadsStatus"] = {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "description": "Deprecated: This field is no longer populated.",
        }
    elif kind == "Workload":
        spec = schema["properties"]["spec"]
        props = spec["properties"]
        props.pop("priorityClassRef")
        props.pop("preemptionGates", None)
        props["priorityClassName"] = {
            "type": "string",
            "description": "If specified, indicates the workload's priority. "
            '"system-node-critical" and "system-cluster-critical" are two special keywords which '
            "indicate the highest priorities. Any other name must be defined by creating a "
            "PriorityClass object with that name. If not specified, the workload priority will be "
            "default or zero if there is no default.",
        }
        props["priorityClassSource"] = {
            "type": "string",
            "enum": [_WPC_SOURCE, _PC_SOURCE, ""],
            "default": "",
            "description": "priorityClassSource determines whether the priorityClass field refers to a "
            "pod PriorityClass or kueue.x-k8s.io/workloadpriorityclass.",
        }
        spec["x-kubernetes-validations"] = [
            {
                "rule": "!has(self.priorityClassName) || has(self.priority)",
                "message": "priority should not be nil when priorityClassName is set",
            }
        ]
        topology = props["podSets"]["items"]["properties"]["topologyRequest"]["properties"]
        topology.pop("podsetSliceRequiredTopologyConstraints", None)
        status = _props(schema, "status")
        _rename(status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds")
        status.pop("preemptionGates", None)
        assignment = status["admission"]["properties"]["podSetAssignments"]["items"]["properties"]
        assignment["topologyAssignment"] = {
            "type": "object",
            "required": ["levels", "domains"],
            "description": "topologyAssignment indicates the topology assignment divided into topology "
            "domains corresponding to the lowest level of the topology.",
            "properties": {
                "levels": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "maxItems": 8,
                    "description": "levels is an ordered list of keys denoting the levels of the assigned topology.",
                },
                "domains": {
                    "type": "array",
                    "description": "domains is a list of topology assignments "
                    "split by topology domains at the lowest level of the topology.",
                    "items": {
                        "type": "object",
                        "required": ["values", "count"],
                        "properties": {
                            "values": {
                                "type": "array",
                                "items": {"type": "string"},
                                "minItems": 1,
                                "maxItems": 8,
                                "description": "values is an ordered list of "
                                "node selector values describing a topology domain.",
                            },
                            "count": {
                                "type": "integer",
                                "format": "int32",
                                "minimum": 1,
                                "description": "count indicates the number of Pods to be "
                                "scheduled in the topology domain.",
                            },
                        },
                    },
                },
            },
        }
    elif kind == "LocalQueue":
        status = _props(schema, "status")
        _rename(status, "flavorsUsage", "flavorUsage")
        status["flavors"] = {
            "type": "array",
            "maxItems": 16,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "description": "flavors lists all currently available ResourceFlavors in specified "
            "ClusterQueue. Deprecated.",
            "items": {
                "type": "object",
                "required": ["name"],
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"name": {"type": "string", "description": "name of the flavor."}},
            },
        }
    elif kind == "AdmissionCheck":
        _props(schema, "spec")["retryDelayMinutes"] = {
            "type": "integer",
            "format": "int64",
            "default": 15,
            "description": "RetryDelayMinutes specifies how long to keep the workload suspended after a "
            "failed check (after it transitioned to False). Deprecated.",
        }
    elif kind == "Topology":
        levels = _props(schema, "spec")["levels"]
        levels["x-kubernetes-validations"] = [
            r for r in levels.get("x-kubernetes-validations", []) if "oldSelf" not in r["rule"]
        ] + [{"rule": "self == oldSelf", "message": "field is immutable"}]
    return schema


# ------------------------------------------------------------------------------------ objects


def _dl(value: Any) -> list[JSONDict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _api_version(obj: JSONDict, version: str) -> JSONDict:
    out = json_copy(obj)
    out["apiVersion"] = f"kueue.x-k8s.io/{version}"
    return out


def to_hub(kind: str, obj: JSONDict) -> JSONDict:
    """v1beta1 -> v1beta2."""
    out = _api_version(obj, "v1beta2")
    spec, status = dict_or_empty(out.get("spec")), dict_or_empty(out.get("status"))
    if kind == "ClusterQueue":
        if "cohort" in spec:
            spec["cohortName"] = spec.pop("cohort")
        names = spec.pop("admissionChecks", None)
        if isinstance(names, list) and names:
            strategy = spec.setdefault("admissionChecksStrategy", {})
            rules = strategy.setdefault("admissionChecks", []) if isinstance(strategy, dict) else None
            if isinstance(rules, list):
                known = {repr(r.get("name")) for r in _dl(rules)}
                rules.extend({"name": n} for n in names if repr(n) not in known)
        fungibility = dict_or_empty(spec.get("flavorFungibility"))
        if fungibility.get("whenCanBorrow") == "Borrow":
            fungibility["whenCanBorrow"] = "MayStopSearch"
        if fungibility.get("whenCanPreempt") == "Preempt":
            fungibility["whenCanPreempt"] = "MayStopSearch"
        status.pop("pendingWorkloadsStatus", None)
    elif kind == "Workload":
        name = spec.pop("priorityClassName", None)
        source = spec.pop("priorityClassSource", None)
        if name:
            if source == _WPC_SOURCE:
                spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": name}
            else:
                spec["priorityClassRef"] = {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": name}
        if "accumulatedPastExexcutionTimeSeconds" in status:
            status["accumulatedPastExecutionTimeSeconds"] = status.pop("accumulatedPastExexcutionTimeSeconds")
        for psa in _dl(dict_or_empty(status.get("admission")).get("podSetAssignments")):
            if isinstance(psa.get("topologyAssignment"), dict):
                psa["topologyAssignment"] = _domains_to_slices(psa["topologyAssignment"])
    elif kind == "LocalQueue":
        if "flavorUsage" in status:
            status["flavorsUsage"] = status.pop("flavorUsage")
        status.pop("flavors", None)
    elif kind == "AdmissionCheck":
        spec.pop("retryDelayMinutes", None)
    return out


def from_hub(kind: str, obj: JSONDict) -> JSONDict:
    """v1beta2 -> v1beta1."""
    out = _api_version(obj, "v1beta1")
    spec, status = dict_or_empty(out.get("spec")), dict_or_empty(out.get("status"))
    if kind == "ClusterQueue":
        if "cohortName" in spec:
            spec["cohort"] = spec.pop("cohortName")
        spec.pop("concurrentAdmissionPolicy", None)
    elif kind == "Workload":
        ref = spec.pop("priorityClassRef", None)
        if isinstance(ref, dict) and ref.get("name"):
            spec["priorityClassName"] = ref["name"]
            spec["priorityClassSource"] = _WPC_SOURCE if ref.get("group") == "kueue.x-k8s.io" else _PC_SOURCE
        spec.pop("preemptionGates", None)
        for pod_set in _dl(spec.get("podSets")):
            dict_or_empty(pod_set.get("topologyRequest")).pop("podsetSliceRequiredTopologyConstraints", None)
        if "accumulatedPastExecutionTimeSeconds" in status:
            status["accumulatedPastExexcutionTimeSeconds"] = status.pop("accumulatedPastExecutionTimeSeconds")
        status.pop("preemptionGates", None)
        for psa in _dl(dict_or_empty(status.get("admission")).get("podSetAssignments")):
            if isinstance(psa.get("topologyAssignment"), dict):
                psa["topologyAssignment"] = _slices_to_domains(psa["topologyAssignment"])
    elif kind == "LocalQueue" and "flavorsUsage" in status:
        status["flavorUsage"] = status.pop("flavorsUsage")
    return out


def _strings(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _domains_to_slices(assignment: JSONDict) -> JSONDict:
    domains = _dl(assignment.get("domains"))
    levels = _strings(assignment.get("levels"))
    if not domains:
        return {"levels": levels}
    values_per_level = [
        {
            "individual": {
                "roots": [(_strings(d.get("values"))[i] if i < len(_strings(d.get("values"))) else "") for d in domains]
            }
        }
        for i in range(len(levels))
    ]
    return {
        "levels": levels,
        "slices": [
            {
                "domainCount": len(domains),
                "valuesPerLevel": values_per_level,
                "podCounts": {"individual": [d.get("count", 0) for d in domains]},
            }
        ],
    }


def _level_values(spec: Any, count: int) -> list[str]:
    if not isinstance(spec, dict):
        return [""] * count
    if "universal" in spec:
        return [str(spec["universal"])] * count
    individual = dict_or_empty(spec.get("individual"))
    prefix = individual.get("prefix", "")
    suffix = individual.get("suffix", "")
    return [f"{prefix}{root}{suffix}" for root in _strings(individual.get("roots"))]


def _slices_to_domains(assignment: JSONDict) -> JSONDict:
    levels = _strings(assignment.get("levels"))
    domains: list[JSONDict] = []
    for piece in _dl(assignment.get("slices")):
        count = min(_int(piece.get("domainCount")), 100_000)
        columns = [_level_values(v, count) for v in _strings(piece.get("valuesPerLevel"))]
        pod_counts = dict_or_empty(piece.get("podCounts"))
        counts = (
            [_int(pod_counts["universal"])] * count
            if "universal" in pod_counts
            else _strings(pod_counts.get("individual"))
        )
        for i in range(count):
            domains.append(
                {
                    "values": [column[i] for column in columns if i < len(column)],
                    "count": counts[i] if i < len(counts) else 0,
                }
            )
    return {"levels": levels, "domains": domains}
