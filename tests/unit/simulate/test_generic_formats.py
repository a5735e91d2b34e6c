"""The generic trace formats: JSONL with several pod sets, and the one-pod-set CSV; errors name the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pykueue.simulate.generic import read_csv, read_jsonl
from pykueue.simulate.model import SimulateError


def test_csv_rows_become_tasks(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text(
        "name,submit,runtime,requests,namespace,queue,priorityClass,count,minCount\n"
        "b,5,60,cpu=2;memory=4Gi,team,lq,high,4,2\n"
        "a,0,30.5,cpu=500m,,,,,\n"
    )
    a, b = read_csv(path)  # sorted by submit time
    assert (a.name, a.submit_s, a.runtime_s, a.namespace, a.queue, a.priority_class) == ("a", 0, 30.5, None, None, None)
    assert a.pod_sets[0].requests == (("cpu", "500m"),)
    assert a.pod_sets[0].count == 1
    assert (b.namespace, b.queue, b.priority_class) == ("team", "lq", "high")
    assert (b.pod_sets[0].count, b.pod_sets[0].min_count) == (4, 2)
    assert b.pod_sets[0].requests == (("cpu", "2"), ("memory", "4Gi"))


def test_jsonl_pod_sets(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(
        '{"name": "j", "submit": 1, "runtime": 2, "priority": 7, "podSets": ['
        '{"name": "driver", "requests": {"cpu": "1"}}, '
        '{"name": "workers", "count": 8, "requests": {"cpu": "4", "nvidia.com/gpu": "1"}, '
        '"nodeSelector": {"pool": "gpu"}}]}\n\n'
    )
    [task] = read_jsonl(path)
    assert task.priority == 7
    assert [(p.name, p.count) for p in task.pod_sets] == [("driver", 1), ("workers", 8)]
    assert task.pod_sets[1].node_selector == (("pool", "gpu"),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"name": "x", "submit": -1, "runtime": 1, "podSets": [{"requests": {"cpu": "1"}}]}', "submit must be"),
        ('{"name": "x", "submit": 0, "runtime": 1, "podSets": []}', "podSets must be a non-empty list"),
        (
            '{"name": "x", "submit": 0, "runtime": 1, "podSets": [{"requests": {"cpu": "lots"}}]}',
            "requests.cpu: 'lots' is not a valid quantity",
        ),
        (
            '{"name": "x", "submit": 0, "runtime": 1, '
            '"podSets": [{"count": 2, "minCount": 3, "requests": {"cpu": "1"}}]}',
            "minCount must not exceed count",
        ),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"name": "ok", "submit": 0, "runtime": 1, "podSets": [{"requests": {"cpu": "1"}}]}\n' + line + "\n"
    )
    with pytest.raises(SimulateError, match="line 2: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        read_jsonl(path)


def test_csv_bad_requests(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("name,submit,runtime,requests\nx,0,1,cpu\n")
    with pytest.raises(SimulateError, match="line 2: requests: 'cpu' is not resource=quantity"):
        read_csv(path)
