"""Scheduling scenarios as data: the YAML format and its loader.

Owns: parsing and validating scenario files (see ``docs`` below) into frozen ``Scenario`` records.
Who calls it: ``tests/scheduler/test_scenarios.py`` and users who keep their own scenario files.
Invariant: a loaded scenario is structurally valid (known keys only, names unique per file), so a
typo in a test file fails loudly at collection instead of silently asserting nothing.

File format (one YAML document per file)::

    # any top-level key other than `scenarios` is ignored: use it to hold YAML anchors
    common:
      flavor: &rf {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: default}}
    scenarios:
    - name: unique-name                 # pytest id
      topic: flavor-assignment          # the Kueue rule it illustrates: one of SCENARIO_TOPICS
      description: what it shows, citing the rule that fixes the expected outcome
      config: {fairSharing: {preemptionStrategies: [...]}, headsPerCycle: 1}   # SchedulerConfig
      objects: [ ... Kubernetes objects, created in order ... ]
      steps:
      - cycle: true                     # or an int: run that many cycles
        want: { ... see WANT_KEYS ... }
      - finish: [ns/name, {clusterQueue: cq, count: 2}]   # Finished=True (oldest holders first)
      - evict: [ns/name, {workload: ns/name, reason: PodsReadyTimeout, requeueAfter: 60}]
                                        # {preempted: true}: every eviction in progress
      - advance: 30                     # seconds on the injected clock
      - apply: [ ...objects... ]        # create or replace
      - delete: [Kind/name, Workload/ns/name, LocalQueue/ns/name]
      - checks: {ns/name: {check-name: Ready}}  # admission-check states written by their controller
      - repeat: 3                       # run `steps` N times
        steps: [ ... ]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "EVENT_KEYS",
    "SCENARIO_TOPICS",
    "WANT_KEYS",
    "Scenario",
    "ScenarioFormatError",
    "load_scenario_dir",
    "load_scenario_file",
]

SCENARIO_KEYS = {"name", "topic", "description", "config", "objects", "steps"}
# The parts of Kueue's scheduling a scenario can illustrate; each is a heading of docs/semantics.md.
SCENARIO_TOPICS = (
    "queue-order",
    "queueing",
    "scheduling-cycle",
    "flavor-assignment",
    "partial-admission",
    "preemption",
    "admission",
    "fair-sharing",
    "admission-fair-sharing",
    "requeuing-and-backoff",
)
EVENT_KEYS = {"cycle", "finish", "evict", "advance", "apply", "delete", "checks", "repeat"}
STEP_EXTRA_KEYS = {"want", "steps"}
WANT_KEYS = {
    "admitted",  # exact {ns/name: {clusterQueue, flavors, counts, borrowing, admissionChecks}} of the step
    "admittedOrder",  # [ns/name, ...]: these admissions happened in this relative order
    "preempted",  # exact {ns/name: {reason, by, messageContains}} of the step
    "pending",  # {ns/name: {reason, messageContains}}: not admitted; last Pending record matches
    "notAdmitted",  # [ns/name]: holds no quota after the step
    "state",  # {ns/name: pending|reserved|admitted|evicting|finished} (driver's view)
    "holding",  # {cq: n}: workloads holding quota in cq (driver's view)
    "usage",  # {cq: {flavor: {resource: quantity}}} recomputed from admissions (driver's view)
    "pendingOrder",  # {cq: [ns/name, ...]}: Scheduler.pending_workloads(cq), exact order
    "active",  # {cq: {active: bool, reason: str}}: Scheduler.cluster_queue_active
    "weightedShare",  # {"ClusterQueue/name" | "Cohort/name": int}
}
KINDS = {"Namespace", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "Workload"}


class ScenarioFormatError(ValueError):
    """A scenario file does not follow the format above; the message names file and scenario."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    topic: str
    description: str
    config: dict[str, Any]
    objects: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    source: str = field(default="")


def _check_steps(where: str, steps: Any) -> None:
    if not isinstance(steps, list):
        raise ScenarioFormatError(f"{where}: steps must be a list")
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise ScenarioFormatError(f"{where}: step {i} must be a mapping")
        events = [k for k in step if k in EVENT_KEYS]
        unknown = set(step) - EVENT_KEYS - STEP_EXTRA_KEYS
        if unknown or len(events) != 1:
            raise ScenarioFormatError(
                f"{where}: step {i} needs exactly one of {sorted(EVENT_KEYS)} (unknown keys: {sorted(unknown)})"
            )
        if "want" in step:
            if "cycle" not in step:
                raise ScenarioFormatError(f"{where}: step {i}: `want` only follows a `cycle`")
            bad = set(step["want"]) - WANT_KEYS
            if bad:
                raise ScenarioFormatError(f"{where}: step {i}: unknown want keys {sorted(bad)}")
        if "repeat" in step:
            _check_steps(f"{where} step {i}", step.get("steps"))
        elif "steps" in step:
            raise ScenarioFormatError(f"{where}: step {i}: `steps` only inside `repeat`")


def _check_objects(where: str, objects: Any) -> None:
    if not isinstance(objects, list):
        raise ScenarioFormatError(f"{where}: objects must be a list")
    for obj in objects:
        if not isinstance(obj, dict) or obj.get("kind") not in KINDS or "name" not in obj.get("metadata", {}):
            raise ScenarioFormatError(
                f"{where}: every object needs kind in {sorted(KINDS)} and metadata.name, got {obj!r:.120}"
            )


def load_scenario_file(path: str | Path) -> list[Scenario]:
    """Parse one file; raise ScenarioFormatError on any structural problem."""
    path = Path(path)
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("scenarios"), list):
        raise ScenarioFormatError(f"{path}: top level must be a mapping with a `scenarios` list")
    out: list[Scenario] = []
    seen: set[str] = set()
    for raw in doc["scenarios"]:
        name = raw.get("name") if isinstance(raw, dict) else None
        where = f"{path.name}: scenario {name!r}"
        if not isinstance(name, str) or name in seen:
            raise ScenarioFormatError(f"{where}: missing or duplicate name")
        seen.add(name)
        unknown = set(raw) - SCENARIO_KEYS
        missing = {"name", "topic", "description", "steps"} - set(raw)
        if unknown or missing:
            raise ScenarioFormatError(f"{where}: unknown keys {sorted(unknown)}, missing {sorted(missing)}")
        if raw["topic"] not in SCENARIO_TOPICS:
            raise ScenarioFormatError(f"{where}: topic {raw['topic']!r} is not one of {', '.join(SCENARIO_TOPICS)}")
        objects = raw.get("objects") or []
        _check_objects(where, objects)
        _check_steps(where, raw["steps"])
        out.append(
            Scenario(
                name=name,
                topic=str(raw["topic"]),
                description=str(raw["description"]),
                config=dict(raw.get("config") or {}),
                objects=list(objects),
                steps=list(raw["steps"]),
                source=str(path),
            )
        )
    return out


def load_scenario_dir(directory: str | Path) -> list[Scenario]:
    """Every ``*.yaml`` file of a directory, sorted by file name; names unique across files."""
    out: list[Scenario] = []
    names: set[str] = set()
    for path in sorted(Path(directory).glob("*.yaml")):
        for sc in load_scenario_file(path):
            if sc.name in names:
                raise ScenarioFormatError(f"{path.name}: scenario name {sc.name!r} already used in another file")
            names.add(sc.name)
            out.append(sc)
    return out
