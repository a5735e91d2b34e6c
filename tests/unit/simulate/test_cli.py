"""``pykueue simulate`` from the command line: the ``-o json`` contract, comparisons, init, and errors
(one line on stderr, a non-zero exit, never a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _simulate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pykueue", "simulate", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def test_json_output_contract(objects_file: Path, ten_task_trace: Path) -> None:
    result = _simulate("run", "--objects", objects_file, "--trace", ten_task_trace, "-o", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    for key in ("workloads", "admitted", "neverAdmitted", "neverAdmittedReasons", "preemptions", "simulatedSeconds"):
        assert key in doc
    assert set(doc["clusterQueues"]["cq"]["waitSeconds"]) >= {"p50", "p90", "p99", "max"}
    assert 0 < doc["clusterQueues"]["cq"]["utilisation"]["default"] <= 1
    assert doc["neverAdmitted"] == len(doc["neverAdmittedReasons"]) == 1
    # deterministic: the same bytes again
    again = _simulate("run", "--objects", objects_file, "--trace", ten_task_trace, "-o", "json")
    assert again.stdout == result.stdout


def test_several_objects_print_a_list_and_a_side_by_side_table(
    objects_file: Path, ten_task_trace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(objects_file.read_text().replace("nominalQuota: 4", "nominalQuota: 6"))
    result = _simulate("run", "--objects", objects_file, "--objects", other, "--trace", ten_task_trace, "-o", "json")
    docs = json.loads(result.stdout)
    assert [d["configuration"] for d in docs] == ["one-queue", "other"]
    text = _simulate("run", "--objects", objects_file, "--objects", other, "--trace", ten_task_trace).stdout
    first = text.splitlines()[0].split()
    assert first == ["configuration", "one-queue", "other"]
    assert any(line.startswith("ClusterQueue cq") for line in text.splitlines())


def test_init_writes_objects_that_run(openb_nodes: Path, openb_pods: Path, tmp_path: Path) -> None:
    out = tmp_path / "objects.yaml"
    result = _simulate("init", "--nodes", openb_nodes, "--teams", "3", "-o", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text().count("kind: ClusterQueue") == 3
    run = _simulate("run", "--objects", out, "--trace", openb_pods, "--format", "openb", "-o", "json")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["workloads"] == 6
    assert sorted(doc["clusterQueues"]) == ["team-0", "team-1", "team-2"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trace", "{missing}"], "no such file"),
        (["--trace", "{trace}", "--format", "parquet"], "--format must be one of openb, jsonl, csv, kueue"),
        (["--trace", "{garbage}", "--format", "jsonl"], "line 1: not JSON"),
        (["--trace", "{trace}", "--format", "openb"], "not an openb file: missing column"),
        (["--trace", "{noext}"], "cannot tell the trace format"),
        (["--trace", "{trace}", "--objects", "{badyaml}"], "not valid YAML"),
        (["--trace", "{trace}", "-o", "yaml"], "--output must be text or json"),
        (["--trace", "{trace}", "--config", "{badyaml}"], "--config is the cluster's Configuration"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, objects_file: Path, ten_task_trace: Path, tmp_path: Path
) -> None:
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not json\n")
    noext = tmp_path / "trace.bin"
    noext.write_text("x")
    badyaml = tmp_path / "bad.yaml"
    badyaml.write_text("kind: [unclosed\n")
    paths = {
        "missing": tmp_path / "nope.jsonl",
        "trace": ten_task_trace,
        "garbage": garbage,
        "noext": noext,
        "badyaml": badyaml,
    }
    argv = [a.format(**paths) for a in args]
    if "--objects" not in argv:
        argv += ["--objects", str(objects_file)]
    result = _simulate("run", *argv)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert message in lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_objects_the_engine_rejects_are_one_line(ten_task_trace: Path, objects_file: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad-quota.yaml"
    bad.write_text(objects_file.read_text().replace("nominalQuota: 4", "nominalQuota: lots"))
    result = _simulate("run", "--objects", bad, "--trace", ten_task_trace)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "ClusterQueue 'cq'" in result.stderr
