"""The replay's model of a real cluster's latencies (``--eviction-latency``, ``--finish-latency``).

One ClusterQueue of 4 cpu that preempts lower priorities within itself. By hand, without latencies:
``low`` (4 cpu, priority 10, 100 s) starts at 0; ``high`` (4 cpu, priority 100, 30 s) arrives at 10,
preempts ``low`` and starts at 10; ``low`` restarts at 40 (its full 100 s) and ends at 140. With an
eviction latency of 5 s, ``low`` keeps its quota until 15: ``high`` starts at 15 (ends 45), ``low`` is
preempted once (not again while it is on its way out) and restarts at 45. With a finish latency of 3 s
each run holds its quota 3 s longer: ``high`` ends at 43, ``low`` restarts at 43.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pykueue.bench.scheduler.vcluster import START_S
from pykueue.cli.main import app
from pykueue.scheduler import CycleResult, Preempt, Scheduler
from pykueue.simulate.generic import read_jsonl
from pykueue.simulate.objects import load_objects
from pykueue.simulate.replay import replay

from .conftest import write_four_cpu_case


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    tasks = (("low", 0, 100, 10), ("high", 10, 30, 100))
    return write_four_cpu_case(tmp_path, tasks, preempt_lower_priority=True)


def _times(files: tuple[Path, Path], eviction_s: float, finish_s: float) -> dict[str, tuple[int, int, int]]:
    objects, trace = files
    result = replay(load_objects([objects]), read_jsonl(trace), eviction_s=eviction_s, finish_s=finish_s)
    assert result.preemptions == 1
    return {
        key.split("/")[1]: (r.admitted_ms // 1000, r.finished_ms // 1000, r.evictions)
        for key, r in result.records.items()
    }


def test_without_latencies_the_victim_releases_at_once(files: tuple[Path, Path]) -> None:
    assert _times(files, 0, 0) == {"low": (0, 140, 1), "high": (10, 40, 0)}


def test_eviction_latency_keeps_the_victims_quota_and_the_preemptor_waits(files: tuple[Path, Path]) -> None:
    assert _times(files, 5, 0) == {"low": (0, 145, 1), "high": (15, 45, 0)}


def test_finish_latency_holds_quota_past_the_runtime(files: tuple[Path, Path]) -> None:
    assert _times(files, 0, 3) == {"low": (0, 146, 1), "high": (10, 43, 0)}


def test_cli_flags_reach_the_replay(files: tuple[Path, Path]) -> None:
    objects, trace = files
    args = ["simulate", "run", "--objects", str(objects), "--trace", str(trace), "-o", "json"]
    plain = json.loads(CliRunner().invoke(app, args).stdout)
    slow = json.loads(CliRunner().invoke(app, [*args, "--eviction-latency", "5", "--finish-latency", "3"]).stdout)
    assert plain["waitSeconds"]["max"] == 0
    assert slow["waitSeconds"]["max"] == 5  # high waits for low's eviction
    assert (plain["simulatedSeconds"], slow["simulatedSeconds"]) == (140, 151)
    bad = CliRunner().invoke(app, [*args, "--eviction-latency", "-1"])
    assert bad.exit_code == 2


def test_a_workload_on_its_way_out_is_not_evicted_twice(files: tuple[Path, Path]) -> None:
    objects, trace = files
    second = json.loads(trace.read_text().splitlines()[1]) | {"name": "high2", "submit": 12}
    trace.write_text(trace.read_text() + json.dumps(second) + "\n")
    result = replay(load_objects([objects]), read_jsonl(trace), eviction_s=5)
    # high2 arrives while low is still leaving: the engine does not target a workload already evicted
    assert result.preemptions == 1
    assert result.records["team/low"].evictions == 1
    starts = {key.split("/")[1]: r.admitted_ms for key, r in result.records.items()}
    assert starts == {"low": 0, "high": 15_000, "high2": 45_000}


def test_evictions_a_real_cluster_would_not_write_are_dropped(files: tuple[Path, Path]) -> None:
    """The engine may name as victims a workload already on its way out (evicted workloads are the first
    candidates) or one the same cycle admits; a real cluster's eviction of a workload that is Evicted
    or holds no quota writes nothing, so the replay neither evicts nor counts them."""
    objects, trace = files
    waiting = json.loads(trace.read_text().splitlines()[0]) | {"name": "waiting", "submit": 5, "priority": 1}
    trace.write_text(trace.read_text() + json.dumps(waiting) + "\n")
    conf = load_objects([objects])
    original = Scheduler.schedule

    def schedule(engine: Scheduler) -> CycleResult:
        result = original(engine)
        extra = []
        if engine.clock.now() < START_S + 100:  # waiting is pending until 145: it holds nothing
            extra.append(Preempt("team", "waiting", "team", "high", "InClusterQueue", ""))
        if any(p.name == "low" for p in result.preempted):
            extra.append(Preempt("team", "low", "team", "high", "InClusterQueue", ""))  # twice: once leaving
        return CycleResult(result.admitted, [*result.preempted, *extra], result.pending)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Scheduler, "schedule", schedule)
        result = replay(conf, read_jsonl(trace), eviction_s=5)
    assert result.preemptions == 1
    assert {k.split("/")[1]: r.evictions for k, r in result.records.items()} == {"low": 1, "high": 0, "waiting": 0}
    starts = {k.split("/")[1]: r.admitted_ms for k, r in result.records.items()}
    assert starts == {"low": 0, "high": 15_000, "waiting": 145_000}
