"""``--format kueue``: Kueue's generator config replays through the same loop and objects as
``bench scheduler --virtual-time``, so both see the same admissions, preemptions and makespan."""

from __future__ import annotations

from pathlib import Path

from pykueue.bench.scheduler import simulate
from pykueue.simulate.kueue_trace import load_plan, plan_configuration, plan_tasks
from pykueue.simulate.metrics import summarize
from pykueue.simulate.replay import replay

SMOKE = Path(__file__).resolve().parents[3] / "src" / "pykueue" / "bench" / "configs" / "smoke" / "generator.yaml"


def test_generator_config_replays_like_the_benchmark() -> None:
    plan = load_plan(SMOKE)
    bench = simulate(plan)
    result = replay(plan_configuration(plan, "smoke"), plan_tasks(plan))
    assert (result.admissions, result.preemptions) == (bench.admissions, bench.preemptions)
    assert result.simulated_ms == bench.wall_ms
    doc = summarize(result)
    assert doc["workloads"] == len(plan.workloads)
    assert doc["neverAdmitted"] == 0
    assert sorted(doc["classes"]) == sorted({w.class_name for w in plan.workloads})
    # per class, the benchmark's count of evictions is the replay's count of preemptions
    evictions = {name: c["totalEvictions"] for name, c in bench.recorder.workload_classes().items()}
    assert {name: c["preempted"] for name, c in doc["classes"].items()} == evictions
