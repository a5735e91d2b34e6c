"""``pykueue simulate run --realtime``: the same configuration and trace played against a real
``pykueue up`` (the fidelity check). The cluster's scheduler decides; the driver creates workloads at
their scaled submit times, finishes them after their scaled runtimes, and reports the same summary."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.harness import Pykueue
from tests.unit.simulate.conftest import OBJECTS, TEN_TASKS, cpu_task, write_four_cpu_case, write_trace


def _simulate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pykueue", "simulate", *map(str, args)], capture_output=True, text=True, timeout=300
    )


def test_realtime_run_admits_in_the_replayed_order(pykueue: Pykueue, tmp_path: Path) -> None:
    objects = tmp_path / "one-queue.yaml"
    objects.write_text(OBJECTS)
    # the hand-computed trace without t08 (which never fits), so the run ends when all have finished
    trace = write_trace(
        tmp_path / "nine.jsonl",
        (
            cpu_task(name, submit, runtime, cpu, priorityClass="batch")
            for name, cpu, submit, runtime in TEN_TASKS
            if name != "t08"
        ),
    )
    virtual = _simulate("run", "--objects", objects, "--trace", trace, "--report", tmp_path / "virtual")
    assert virtual.returncode == 0, virtual.stderr
    real = _simulate(
        "run",
        "--realtime",
        "--kubeconfig",
        pykueue.kubeconfig,
        "--time-scale",
        "4",
        "--objects",
        objects,
        "--trace",
        trace,
        "-o",
        "json",
        "--report",
        tmp_path / "real",
    )
    assert real.returncode == 0, real.stderr
    doc = json.loads(real.stdout)
    assert (doc["workloads"], doc["admitted"], doc["finished"], doc["neverAdmitted"]) == (9, 9, 9, 0)
    assert 0 < doc["clusterQueues"]["cq"]["utilisation"]["default"] <= 1
    # what the cluster added, for the replay's --finish-latency: two write-to-watch trips per workload
    measured = doc["measuredLatencies"]
    assert (measured["timeScale"], measured["finishSamples"]) == (4, 9)
    assert 0 < measured["finishRealSeconds"] < 5
    assert abs(measured["finishTraceSeconds"] - measured["finishRealSeconds"] * 4) <= 0.001  # both rounded
    assert 0 <= measured["createLagRealSecondsMedian"] <= measured["createLagRealSecondsMax"]
    assert "evictionSamples" not in measured  # nothing was preempted
    # how late the scheduler acted on each creation (admitted or pending), for the replay's --jitter
    assert measured["reactionSamples"] == 9
    assert 0 < measured["reactionRealSeconds"] < 5
    assert measured["reactionTraceSeconds"] <= measured["reactionTraceSecondsP90"]

    def order(report: Path) -> list[str]:
        rows = list(csv.DictReader((report / "one-queue" / "workloads.csv").read_text().splitlines()))
        return [r["workload"] for r in sorted(rows, key=lambda r: (float(r["admittedSeconds"]), r["workload"]))]

    # the cluster admitted what the replay admitted, t01/t02 first and t09/t10 last. The order in between
    # depends on when finishes land in real time (on a busy machine t05 can fit before t03 is admitted,
    # BestEffortFIFO), so it is checked in the virtual replay only, where it is deterministic.
    real_order, virtual_order = order(tmp_path / "real"), order(tmp_path / "virtual")
    assert sorted(real_order) == sorted(virtual_order)
    assert set(real_order[:2]) == {"team/t01", "team/t02"}
    assert virtual_order[2] == "team/t03"
    assert set(real_order[-2:]) == {"team/t09", "team/t10"}
    # objects were created on the cluster
    assert pykueue.kubectl("get", "clusterqueue", "cq", "-o", "name").stdout.strip() == "clusterqueue.kueue.x-k8s.io/cq"


def test_realtime_run_measures_the_eviction_latency(pykueue: Pykueue, tmp_path: Path) -> None:
    objects, trace = write_four_cpu_case(
        tmp_path, (("low", 0, 20, 10), ("high", 4, 4, 100)), preempt_lower_priority=True
    )
    real = _simulate(
        "run", "--realtime", "--kubeconfig", pykueue.kubeconfig, "--time-scale", "4",
        "--objects", objects, "--trace", trace, "-o", "json",
    )  # fmt: skip
    assert real.returncode == 0, real.stderr
    doc = json.loads(real.stdout)
    assert (doc["preemptions"], doc["finished"]) == (1, 2)
    measured = doc["measuredLatencies"]
    # low was seen Evicted while it still held its quota, then seen released by the workload controller
    assert measured["evictionSamples"] == 1
    assert 0 <= measured["evictionRealSeconds"] < 5
    assert abs(measured["evictionTraceSeconds"] - measured["evictionRealSeconds"] * 4) <= 0.001  # both rounded
