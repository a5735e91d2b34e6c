"""Table-driven scheduling scenarios: objects in, admissions / pending reasons / preemptions out.

Every file ``scenarios/*.yaml`` holds scenarios for one part of Kueue's scheduling (the file name says
which; the ``topic`` of each scenario is a heading of ``docs/semantics.md``); each scenario is one pytest
case whose id is its ``name``. The expected outcome of every step is derived from Kueue's rules (the
``description`` names the rule), never recorded from a run.

Format (parsed by ``pykueue.testing.scenario_format``; unknown keys are errors)::

    scenarios:
    - name: borrow-within-cohort            # unique across all files; the pytest id
      topic: flavor-assignment              # one of SCENARIO_TOPICS
      description: why the outcome follows from Kueue's rules
      config: {fairSharing: {}, headsPerCycle: 1}   # SchedulerConfig fields, camelCase
      objects:                              # created in order, exactly as users write them:
        - {apiVersion: v1, kind: Namespace, metadata: {name: ns}}     # Namespace, ResourceFlavor,
        - ...                               # Cohort, ClusterQueue, LocalQueue, Workload
      steps:
      - cycle: true                         # one Scheduler.schedule() (an int runs that many)
        want:
          admitted: {ns/a: {clusterQueue: cq, flavors: {main: {cpu: default}}, counts: {main: 3},
                            borrowing: false, admissionChecks: []}}   # exact set admitted in the step
          admittedOrder: [ns/a, ns/b]       # relative order of these admissions
          preempted: {ns/v: {reason: InClusterQueue, by: ns/a, messageContains: "..."}}  # exact set
          pending: {ns/b: {reason: WaitingForQuota, messageContains: "2 more needed"}}
          notAdmitted: [ns/c]               # holds no quota after the step
          state: {ns/a: admitted}           # pending | reserved | admitted | evicting | finished
          holding: {cq: 2}                  # workloads holding quota per CQ
          usage: {cq: {default: {cpu: "3"}}} # quota held per CQ / flavor / resource
          pendingOrder: {cq: [ns/b, ns/c]}  # Scheduler.pending_workloads order
          active: {cq: {active: false, reason: FlavorNotFound}}
          weightedShare: {ClusterQueue/cq: 250}
      - finish: [ns/a, {clusterQueue: cq, count: 2}]   # Finished=True (oldest holders of cq first)
      - evict: [ns/v, {workload: ns/w, reason: PodsReadyTimeout, requeueAfter: 60}]  # eviction done
                                            # {preempted: true}: all evictions in progress
      - advance: 30                         # seconds on the injected ManualClock
      - apply: [objects]                    # create or replace
      - delete: [ClusterQueue/cq, LocalQueue/ns/lq, Workload/ns/a]
      - checks: {ns/a: {prov: Ready}}       # admission-check states
      - repeat: 4                           # nested steps, N times
        steps: [...]

The driver plays the workload controller: admissions, preemptions (victims become "evicting"
and keep their quota until an ``evict`` step) and pending reasons are written back into the
workload status and fed to the engine, exactly like the real controller. Workloads without a
``creationTimestamp`` are created one second apart in list order; uids sort in creation order.
The driver's views (``state``, ``holding``, ``usage``) come from the statuses it wrote, not from
the engine's own accounting.

Top-level keys other than ``scenarios`` are ignored, so files define shared objects once as YAML
anchors (``common: {rf: &rf {...}}``) and reuse them (``objects: [*rf, ...]``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.testing import Scenario, load_scenario_dir, run_scenario
from pykueue.testing.scenario_format import SCENARIO_TOPICS

SCENARIO_DIR = Path(__file__).parent / "scenarios"
SCENARIOS = load_scenario_dir(SCENARIO_DIR)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_scenario(scenario: Scenario) -> None:
    failures = run_scenario(scenario)
    assert not failures, (
        f"{scenario.name} ({scenario.topic}, {Path(scenario.source).name}): "
        f"{scenario.description}\n  " + "\n  ".join(failures)
    )


def test_every_scheduling_topic_is_covered() -> None:
    assert {s.topic for s in SCENARIOS} == set(SCENARIO_TOPICS)
    assert len(SCENARIOS) >= 80
