"""The deliberate difference from Kueue (docs/scheduler-api.md): one ``schedule()`` takes heads
from every ClusterQueue while they fit, yet decides exactly what Kueue's one-head-per-CQ cycles
would, in the same order.

For random clusters (the property-test generator) a single default ``schedule()`` is compared with
``SchedulerConfig(heads_per_cycle=1)`` scheduled cycle after cycle until nothing more happens, both
fed back by the same workload-controller driver: same admissions (ClusterQueue, flavors, counts),
same order, same preemptions.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from tests.scheduler.test_properties import World, worlds

from pykueue.testing import Scenario, ScenarioDriver


def _decisions(world: World, config: dict[str, Any], cycles: int) -> tuple[list[tuple[str, str, str]], set[str]]:
    driver = ScenarioDriver(Scenario("eq", "3.3", "equivalence", config, world.objects, []))
    admitted: list[tuple[str, str, str]] = []
    preempted: set[str] = set()
    for _ in range(cycles):
        result = driver.scheduler.schedule()
        driver.apply_result(result)
        for adm in result.admitted:
            shape = repr(
                sorted(
                    (p["name"], sorted(p.get("flavors", {}).items()), p.get("count"))
                    for p in adm.admission["podSetAssignments"]
                )
            )
            admitted.append((f"{adm.namespace}/{adm.name}", adm.cluster_queue, shape))
        preempted.update(f"{p.namespace}/{p.name}" for p in result.preempted)
    return admitted, preempted


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_one_schedule_equals_repeated_single_head_cycles(world: World) -> None:
    base: dict[str, Any] = {"fairSharing": {}} if world.fair_sharing else {}
    many, many_preempted = _decisions(world, base, cycles=1)
    workloads = sum(1 for o in world.objects if o["kind"] == "Workload")
    one, one_preempted = _decisions(world, {**base, "headsPerCycle": 1}, cycles=2 * workloads + 2)
    assert many == one
    assert many_preempted == one_preempted
