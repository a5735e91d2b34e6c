"""The replay's numbers against values computed by hand on a 10-task trace (conftest.TEN_TASKS).

One ClusterQueue, 4 cpu, BestEffortFIFO, no cohort. By hand:

    t01 2cpu @0  10s -> admitted 0,  done 10      t06 1cpu @30 10s -> 30 (t05 ends at 30), done 40
    t02 2cpu @0  20s -> 0,  done 20               t07 3cpu @30 10s -> 30, done 40
    t03 2cpu @5  10s -> 10 (t01 ends), done 20    t08 5cpu @31     -> never: more than the quota
    t04 4cpu @6   5s -> 20 (t02+t03 end), done 25 t09 2cpu @35  5s -> 40, done 45
    t05 1cpu @7   5s -> 25 (FIFO: t04 first), 30 t10 2cpu @35  5s -> 40, done 45

Waits of the 9 admitted: 0,0,5,14,18,0,0,5,5 -> sorted 0,0,0,0,5,5,5,14,18: nearest-rank p50 = 5th = 5,
p90 = 9th = 18, p99 = 18, max 18, mean 47/9. Used cpu-seconds: 20+40+20+20+5+10+30+10+10 = 165 over
4 cpu x 45 s -> utilisation 165/180.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.simulate.generic import read_jsonl
from pykueue.simulate.metrics import summarize
from pykueue.simulate.objects import load_objects
from pykueue.simulate.replay import replay


@pytest.fixture
def doc(objects_file: Path, ten_task_trace: Path) -> dict:
    return summarize(replay(load_objects([objects_file]), read_jsonl(ten_task_trace)))


def test_admission_times_match_the_hand_computation(objects_file: Path, ten_task_trace: Path) -> None:
    result = replay(load_objects([objects_file]), read_jsonl(ten_task_trace))
    admitted = {
        k.split("/")[1]: (r.admitted_ms // 1000 if r.admitted_ms is not None else None)
        for k, r in result.records.items()
    }
    assert admitted == {
        "t01": 0,
        "t02": 0,
        "t03": 10,
        "t04": 20,
        "t05": 25,
        "t06": 30,
        "t07": 30,
        "t08": None,
        "t09": 40,
        "t10": 40,
    }


def test_counts_and_never_admitted_reason(doc: dict) -> None:
    assert (doc["workloads"], doc["admitted"], doc["neverAdmitted"], doc["preemptions"]) == (10, 9, 1, 0)
    assert doc["finished"] == 9
    assert list(doc["neverAdmittedReasons"]) == ["team/t08"]
    reason = doc["neverAdmittedReasons"]["team/t08"]
    assert reason.startswith("ExceedsMaxQuota: ")
    assert "current podset request (5) > maximum capacity (4)" in reason
    assert doc["neverAdmittedByReason"] == {"ExceedsMaxQuota": 1}


def test_wait_percentiles(doc: dict) -> None:
    expected = {"p50": 5.0, "p90": 18.0, "p99": 18.0, "max": 18.0, "mean": round(47 / 9, 4)}
    assert doc["waitSeconds"] == expected
    assert doc["clusterQueues"]["cq"]["waitSeconds"] == expected
    assert doc["localQueues"]["team/lq"]["waitSeconds"] == expected
    assert doc["priorityClasses"]["batch"]["waitSeconds"] == expected


def test_utilisation_and_span(doc: dict) -> None:
    assert doc["simulatedSeconds"] == 45.0
    cq = doc["clusterQueues"]["cq"]
    assert cq["utilisation"] == {"default": round(165 / 180, 4)}
    assert doc["flavors"]["default"]["utilisation"] == round(165 / 180, 4)
    # the LocalQueue and the priority class held all of it: the same fraction of the cluster's quota
    assert doc["localQueues"]["team/lq"]["utilisation"] == {"default": round(165 / 180, 4)}
    assert doc["priorityClasses"]["batch"]["utilisation"] == {"default": round(165 / 180, 4)}
    # a single queue without a cohort: its share of its own quota, averaged; fair share 1
    assert cq["share"] == {"mean": round(165 / 180, 4), "fair": 1.0}
