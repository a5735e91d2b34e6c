"""Kueue's scheduler-benchmark generator format, read into a typed, expanded plan.

Owns: parsing ``generator.yaml`` (``cohorts[] -> queuesSets[] -> workloadsSets[] -> workloads[]``)
into frozen dataclasses, validating every field with its path, and expanding the sets into the
concrete objects Kueue's generator would create: cohort ``<className>-<i>``, ClusterQueue
``<className>-<queueSetIdx>-<i>-<cohort>`` (namespace and LocalQueue of the same name) and Workload
``<className>-<setIdx>-<si>-<templateIdx>`` created ``creationIntervalMs`` after the previous one
of its workload set (the generator sleeps *before* each create, so the first one is at one
interval).

Who calls it: the virtual-time simulator, the real-time driver, the bound, the CLI.
Invariant: a ``GeneratorConfig`` is always valid; bad input raises :class:`ConfigError` listing
every problem with its field path (``cohorts[0].queuesSets[0].count: must be a positive integer``)
and nothing half-read escapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pykueue.api.meta.quantity import QuantityError, to_amount

__all__ = [
    "CQPlan",
    "CohortSet",
    "ConfigError",
    "GeneratorConfig",
    "Plan",
    "QueuesSet",
    "WorkloadPlan",
    "WorkloadTemplate",
    "WorkloadsSet",
    "expand",
    "load_config",
    "parse_config",
]

PREEMPTION_POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any")
_UNSUPPORTED = {
    "tasConstraint",
    "tasLevel",
    "sliceSize",
    "devices",
    "topology",
    "dra",
    "deviceNominalQuota",
    "deviceBorrowingLimit",
}


class ConfigError(ValueError):
    """A generator config is invalid; ``problems`` lists ``path: message`` lines."""

    def __init__(self, source: str, problems: list[str], what: str = "generator config") -> None:
        self.problems = problems
        super().__init__(f"{source}: invalid {what}:\n  " + "\n  ".join(problems))


@dataclass(frozen=True, slots=True)
class WorkloadTemplate:
    class_name: str
    runtime_ms: int
    priority: int
    request: str
    """Per-pod cpu quantity as written (``1``, ``500m``)."""
    request_milli: int
    pod_count: int = 1


@dataclass(frozen=True, slots=True)
class WorkloadsSet:
    count: int
    creation_interval_ms: int
    workloads: tuple[WorkloadTemplate, ...]


@dataclass(frozen=True, slots=True)
class QueuesSet:
    class_name: str
    count: int
    nominal_quota: str
    nominal_milli: int
    borrowing_limit: str | None
    borrowing_milli: int | None
    reclaim_within_cohort: str
    within_cluster_queue: str
    workloads_sets: tuple[WorkloadsSet, ...]


@dataclass(frozen=True, slots=True)
class CohortSet:
    class_name: str
    count: int
    queues_sets: tuple[QueuesSet, ...]


@dataclass(frozen=True, slots=True)
class GeneratorConfig:
    cohorts: tuple[CohortSet, ...]
    resource_flavor: str = "rf"

    def scaled(self, factor: float) -> GeneratorConfig:
        """The same shape with every workload set's ``count`` multiplied (at least 1)."""
        if factor <= 0:
            raise ValueError("scale must be positive")
        return GeneratorConfig(
            tuple(
                CohortSet(
                    c.class_name,
                    c.count,
                    tuple(
                        QueuesSet(
                            q.class_name,
                            q.count,
                            q.nominal_quota,
                            q.nominal_milli,
                            q.borrowing_limit,
                            q.borrowing_milli,
                            q.reclaim_within_cohort,
                            q.within_cluster_queue,
                            tuple(
                                WorkloadsSet(max(1, round(w.count * factor)), w.creation_interval_ms, w.workloads)
                                for w in q.workloads_sets
                            ),
                        )
                        for q in c.queues_sets
                    ),
                )
                for c in self.cohorts
            ),
            self.resource_flavor,
        )


@dataclass(frozen=True, slots=True)
class CQPlan:
    name: str
    cohort: str
    class_name: str
    nominal_quota: str
    nominal_milli: int
    borrowing_limit: str | None
    borrowing_milli: int | None
    reclaim_within_cohort: str
    within_cluster_queue: str


@dataclass(frozen=True, slots=True)
class WorkloadPlan:
    namespace: str
    """Also the ClusterQueue's and the LocalQueue's name."""
    name: str
    class_name: str
    created_ms: int
    """Offset from the start of generation."""
    runtime_ms: int
    priority: int
    request: str
    request_milli: int
    pod_count: int
    stream: int
    """Index of the (CQ, workload set) stream: streams are generated concurrently, each in order."""

    @property
    def cpu_milli(self) -> int:
        return self.request_milli * self.pod_count


@dataclass(frozen=True, slots=True)
class Plan:
    resource_flavor: str
    cohorts: tuple[str, ...]
    cluster_queues: tuple[CQPlan, ...]
    workloads: tuple[WorkloadPlan, ...]
    """Sorted by (created_ms, stream)."""


# ---------------------------------------------------------------------------------------------- parsing


class _Reader:
    """Collects problems instead of stopping at the first, so a user fixes a config in one pass."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def mapping(self, value: Any, path: str, known: set[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.problems.append(f"{path}: must be a mapping")
            return {}
        for key in value:
            if key in _UNSUPPORTED:
                self.problems.append(f"{path}.{key}: TAS/DRA configs are not supported by pykueue bench scheduler")
            elif key not in known:
                self.problems.append(f"{path}.{key}: unknown field (expected one of {', '.join(sorted(known))})")
        return value

    def items(self, data: dict[str, Any], key: str, path: str) -> list[Any]:
        value = data.get(key)
        if not isinstance(value, list) or not value:
            self.problems.append(f"{path}.{key}: must be a non-empty list")
            return []
        return value

    def name(self, data: dict[str, Any], path: str) -> str:
        value = data.get("className")
        if (
            not isinstance(value, str)
            or not value
            or len(value) > 40
            or not value.replace("-", "").isalnum()
            or value != value.lower()
            or value.startswith("-")
            or value.endswith("-")
        ):
            self.problems.append(f"{path}.className: must be a lowercase DNS label of at most 40 characters")
            return "invalid"
        return value

    def integer(self, data: dict[str, Any], key: str, path: str, *, minimum: int, default: int | None = None) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            self.problems.append(f"{path}.{key}: must be {what}")
            return minimum
        return value

    def quantity(
        self, data: dict[str, Any], key: str, path: str, *, required: bool, positive: bool = False
    ) -> tuple[str | None, int | None]:
        value = data.get(key)
        if value is None or value == "":
            if required:
                self.problems.append(f"{path}.{key}: required (a cpu quantity like 20 or 500m)")
            return None, None
        try:
            if isinstance(value, float) and not value.is_integer():
                raise QuantityError("write fractions as milli-cpu (500m)")
            text = str(int(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
            if not isinstance(text, str):
                raise QuantityError("not a quantity")
            amount = to_amount("cpu", text)
        except QuantityError as exc:
            self.problems.append(f"{path}.{key}: {value!r} is not a cpu quantity ({exc})")
            return None, None
        if amount < 0 or (positive and amount == 0):
            self.problems.append(f"{path}.{key}: must be {'positive' if positive else 'non-negative'}")
            return None, None
        return text, amount

    def policy(self, data: dict[str, Any], key: str, path: str) -> str:
        value = data.get(key, "Never")
        if value not in PREEMPTION_POLICIES:
            self.problems.append(f"{path}.{key}: must be one of {', '.join(PREEMPTION_POLICIES)}")
            return "Never"
        return str(value)


def _template(r: _Reader, raw: Any, path: str) -> WorkloadTemplate:
    d = r.mapping(raw, path, {"className", "runtimeMs", "priority", "request", "podCount"})
    request, milli = r.quantity(d, "request", path, required=True, positive=True)
    priority = d.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or abs(priority) > 1_000_000_000:
        r.problems.append(f"{path}.priority: must be an integer of at most 1e9 in magnitude")
        priority = 0
    return WorkloadTemplate(
        r.name(d, path),
        r.integer(d, "runtimeMs", path, minimum=0),
        priority,
        request or "0",
        milli or 0,
        r.integer(d, "podCount", path, minimum=1, default=1),
    )


def _workloads_set(r: _Reader, raw: Any, path: str) -> WorkloadsSet:
    d = r.mapping(raw, path, {"count", "creationIntervalMs", "workloads"})
    templates = tuple(_template(r, t, f"{path}.workloads[{i}]") for i, t in enumerate(r.items(d, "workloads", path)))
    return WorkloadsSet(
        r.integer(d, "count", path, minimum=1),
        r.integer(d, "creationIntervalMs", path, minimum=0, default=0),
        templates,
    )


def _queues_set(r: _Reader, raw: Any, path: str) -> QueuesSet:
    d = r.mapping(
        raw,
        path,
        {
            "className",
            "count",
            "nominalQuota",
            "borrowingLimit",
            "reclaimWithinCohort",
            "withinClusterQueue",
            "workloadsSets",
        },
    )
    nominal, nominal_milli = r.quantity(d, "nominalQuota", path, required=True)
    borrowing, borrowing_milli = r.quantity(d, "borrowingLimit", path, required=False)
    sets = tuple(
        _workloads_set(r, w, f"{path}.workloadsSets[{i}]") for i, w in enumerate(r.items(d, "workloadsSets", path))
    )
    return QueuesSet(
        r.name(d, path),
        r.integer(d, "count", path, minimum=1),
        nominal or "0",
        nominal_milli or 0,
        borrowing,
        borrowing_milli,
        r.policy(d, "reclaimWithinCohort", path),
        r.policy(d, "withinClusterQueue", path),
        sets,
    )


def parse_config(data: Any, source: str = "<config>") -> GeneratorConfig:
    """Validate already-loaded YAML (a mapping with ``cohorts``, or Kueue's older bare list)."""
    r = _Reader()
    if isinstance(data, list):
        data = {"cohorts": data}
    top = r.mapping(data, "config", {"cohorts", "resourceFlavor"})
    flavor = "rf"
    if "resourceFlavor" in top:
        rf = top["resourceFlavor"]
        name = rf.get("name") if isinstance(rf, dict) else None
        if not isinstance(name, str) or not name:
            r.problems.append("config.resourceFlavor.name: must be a non-empty string")
        else:
            flavor = name
    cohorts: list[CohortSet] = []
    for i, raw in enumerate(r.items(top, "cohorts", "config") if top else []):
        path = f"cohorts[{i}]"
        d = r.mapping(raw, path, {"className", "count", "queuesSets"})
        qsets = tuple(
            _queues_set(r, q, f"{path}.queuesSets[{j}]") for j, q in enumerate(r.items(d, "queuesSets", path))
        )
        cohorts.append(CohortSet(r.name(d, path), r.integer(d, "count", path, minimum=1), qsets))
    config = GeneratorConfig(tuple(cohorts), flavor)
    if not r.problems:
        r.problems.extend(_check_names(config))
    if r.problems:
        raise ConfigError(source, r.problems)
    return config


def _check_names(config: GeneratorConfig) -> list[str]:
    problems = []
    seen: set[str] = set()
    for i, c in enumerate(config.cohorts):
        for j in range(c.count):
            cohort = f"{c.class_name}-{j}"
            if cohort in seen:
                problems.append(f"cohorts[{i}].className: cohort name {cohort} is generated twice")
            seen.add(cohort)
            for k, q in enumerate(c.queues_sets):
                if len(f"{q.class_name}-{k}-{q.count - 1}-{cohort}") > 63:
                    problems.append(
                        f"cohorts[{i}].queuesSets[{k}].className: ClusterQueue names "
                        f"{q.class_name}-{k}-<i>-{cohort} exceed 63 characters"
                    )
    return problems


def load_config(path: str | Path, *, scale: float = 1.0) -> GeneratorConfig:
    """Read and validate a generator YAML file; ``scale`` multiplies every workload set's count."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ConfigError(str(p), [f"cannot read: {exc.strerror or exc}"]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(str(p), [f"not valid YAML: {exc}"]) from None
    config = parse_config(data, str(p))
    return config if scale == 1.0 else config.scaled(scale)


# --------------------------------------------------------------------------------------------- expansion


def expand(config: GeneratorConfig) -> Plan:
    """Every object Kueue's generator would create, with each workload's creation offset."""
    cohorts: list[str] = []
    cqs: list[CQPlan] = []
    workloads: list[WorkloadPlan] = []
    stream = 0
    for cset in config.cohorts:
        for ci in range(cset.count):
            cohort = f"{cset.class_name}-{ci}"
            cohorts.append(cohort)
            for qi, qset in enumerate(cset.queues_sets):
                for i in range(qset.count):
                    name = f"{qset.class_name}-{qi}-{i}-{cohort}"
                    cqs.append(
                        CQPlan(
                            name,
                            cohort,
                            qset.class_name,
                            qset.nominal_quota,
                            qset.nominal_milli,
                            qset.borrowing_limit,
                            qset.borrowing_milli,
                            qset.reclaim_within_cohort,
                            qset.within_cluster_queue,
                        )
                    )
                    for si, wset in enumerate(qset.workloads_sets):
                        at = 0
                        for k in range(wset.count):
                            for ti, t in enumerate(wset.workloads):
                                at += wset.creation_interval_ms
                                workloads.append(
                                    WorkloadPlan(
                                        name,
                                        f"{t.class_name}-{si}-{k}-{ti}",
                                        t.class_name,
                                        at,
                                        t.runtime_ms,
                                        t.priority,
                                        t.request,
                                        t.request_milli,
                                        t.pod_count,
                                        stream,
                                    )
                                )
                        stream += 1
    workloads.sort(key=lambda w: (w.created_ms, w.stream))
    return Plan(config.resource_flavor, tuple(cohorts), tuple(cqs), tuple(workloads))
