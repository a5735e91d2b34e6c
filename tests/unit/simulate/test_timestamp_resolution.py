"""``--timestamp-resolution``: a real-time run's coarse creation timestamps, and the ties they make.

Kubernetes stamps ``creationTimestamp`` in whole seconds. A real-time run at a time scale of S
therefore stamps S trace seconds: two workloads of one priority created within one such second
tie in queue order (priority, then timestamp), and their uids, random in a real API server, decide.

One ClusterQueue of 4 cpu, no preemption. ``run`` (4 cpu, 100 s) starts at 0; ``a`` and ``b`` (4 cpu,
one priority, 10 s each) queue at 20 and 30. By hand: stamped at their instants, ``a`` is older and
starts at 100 (wait 80), ``b`` at 110 (wait 80). Stamped in 250 s steps they share a step (unless a
step starts in (20, 30]) and the smaller uid starts at 100: ``b`` waits 70 when it goes first, ``a`` 90.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pykueue.api.meta.clock import format_time
from pykueue.bench.scheduler.vcluster import START_S, Observer, VirtualCluster
from pykueue.cli.main import app
from pykueue.scheduler import SchedulerConfig
from pykueue.simulate.generic import read_jsonl
from pykueue.simulate.objects import load_objects
from pykueue.simulate.replay import Replay, replay

from .conftest import write_four_cpu_case

TASKS = (("run", 0, 100, 10), ("a", 20, 10, 5), ("b", 30, 10, 5))
"""(name, submit s, runtime s, priority)."""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write_four_cpu_case(tmp_path, TASKS, preempt_lower_priority=False)


def _run(files: tuple[Path, Path], stamp_s: float, seed: int) -> Replay:
    objects, trace = files
    return replay(load_objects([objects]), read_jsonl(trace), stamp_s=stamp_s, seed=seed)


def _waits(result: Replay) -> dict[str, float]:
    return {
        key.split("/")[1]: (r.admitted_ms - r.submit_ms) / 1000
        for key, r in result.records.items()
        if r.admitted_ms is not None
    }


def test_instant_stamps_keep_creation_order(files: tuple[Path, Path]) -> None:
    for seed in range(5):
        assert _waits(_run(files, 0, seed)) == {"run": 0, "a": 80, "b": 80}


def test_coarse_stamps_let_the_uid_decide_a_tie(files: tuple[Path, Path]) -> None:
    firsts = set()
    for seed in range(20):
        result = _run(files, 250, seed)
        waits = _waits(result)
        first = "b" if waits == {"run": 0, "a": 90, "b": 70} else "a"
        if first == "a":
            assert waits == {"run": 0, "a": 80, "b": 80}
        uid = {name: result.objects[f"team/{name}"]["metadata"]["uid"] for name in ("a", "b")}
        if first == "b":  # only a tie lets the younger one go first, and then its uid is the smaller
            assert uid["b"] < uid["a"]
        firsts.add(first)
    assert firsts == {"a", "b"}


def test_the_same_seed_replays_the_same_uids_and_waits(files: tuple[Path, Path]) -> None:
    one, two = _run(files, 250, 7), _run(files, 250, 7)
    assert _waits(one) == _waits(two)
    assert [o["metadata"]["uid"] for o in one.objects.values()] == [o["metadata"]["uid"] for o in two.objects.values()]


@pytest.mark.parametrize(
    ("phase_ms", "created_ms", "stamped_s"),
    [(0, 260_000, 250), (0, 249_999, 0), (100_000, 260_000, 100), (100_000, 50_000, -150), (100_000, 350_000, 350)],
)
def test_virtual_cluster_stamps_in_steps_from_its_phase(phase_ms: int, created_ms: int, stamped_s: int) -> None:
    cluster = VirtualCluster(SchedulerConfig(), Observer(), meter_cpu=False, stamp_ms=250_000, stamp_phase_ms=phase_ms)
    workload: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "team"},
        "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {"spec": {}}}]},
    }
    key = cluster.submit(created_ms, workload, 1_000)
    cluster.run(lambda: False)
    assert cluster.objs[key]["metadata"]["creationTimestamp"] == format_time(START_S + stamped_s)


def test_cli_timestamp_resolution_makes_samples_and_is_reported(files: tuple[Path, Path]) -> None:
    objects, trace = files
    args = ["simulate", "run", "--objects", str(objects), "--trace", str(trace), "-o", "json"]
    out = CliRunner().invoke(app, [*args, "--timestamp-resolution", "250", "--samples", "20"])
    assert out.exit_code == 0, out.output
    band = json.loads(out.stdout)["samples"]
    assert band["timestampResolutionSeconds"] == 250
    assert band["jitterSeconds"] == 0
    waits = band["priorityClassMeanWaitSeconds"]["priority-5"]
    assert (waits["min"], waits["max"]) == (80, 80)  # the class's mean is 80 whichever goes first
    per_queue = band["clusterQueueMeanWaitSeconds"]["cq"]
    assert per_queue["mean"] == pytest.approx((0 + 80 + 80) / 3)


def test_cli_refuses_timestamp_resolution_in_real_time(files: tuple[Path, Path], tmp_path: Path) -> None:
    objects, trace = files
    out = CliRunner().invoke(
        app,
        [
            "simulate",
            "run",
            "--realtime",
            "--kubeconfig",
            str(tmp_path / "none"),
            "--objects",
            str(objects),
            "--trace",
            str(trace),
            "--timestamp-resolution",
            "250",
        ],
    )
    assert out.exit_code != 0
    assert "--timestamp-resolution" in out.output
