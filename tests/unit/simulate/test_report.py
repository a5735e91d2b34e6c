"""The report directory: CSV/JSON files, PNG figures, and one self-contained HTML page; determinism."""

from __future__ import annotations

import base64
import csv
import json
import re
from pathlib import Path

from pykueue.simulate.generic import read_jsonl
from pykueue.simulate.metrics import summarize
from pykueue.simulate.objects import load_objects
from pykueue.simulate.replay import replay
from pykueue.simulate.report import dump_json, text_table, write_report

PNG = b"\x89PNG\r\n\x1a\n"


def _run(objects: list[Path], trace: Path, out: Path) -> tuple[list[dict], Path]:
    tasks = read_jsonl(trace)
    replays = [replay(load_objects([p]), tasks) for p in objects]
    docs = [summarize(r) for r in replays]
    return docs, write_report(out, replays, docs)


def test_report_files_and_html_contents(objects_file: Path, ten_task_trace: Path, tmp_path: Path) -> None:
    docs, page = _run([objects_file], ten_task_trace, tmp_path / "report")
    out = tmp_path / "report"
    assert page == out / "index.html"
    assert json.loads((out / "summary.json").read_text()) == docs[0]
    rows = list(csv.DictReader((out / "one-queue" / "workloads.csv").read_text().splitlines()))
    assert len(rows) == 10
    t05 = next(r for r in rows if r["workload"] == "team/t05")
    assert (t05["submitSeconds"], t05["admittedSeconds"], t05["waitSeconds"]) == ("7.0", "25.0", "18.0")
    t08 = next(r for r in rows if r["workload"] == "team/t08")
    assert t08["admittedSeconds"] == ""
    assert t08["pendingReason"] == "ExceedsMaxQuota"
    queues = list(csv.DictReader((out / "one-queue" / "queues.csv").read_text().splitlines()))
    assert {(q["group"], q["name"]) for q in queues} >= {("clusterQueues", "cq"), ("localQueues", "team/lq")}
    for figure in ("wait", "utilisation", "queue", "share"):
        assert (out / "one-queue" / f"{figure}.png").read_bytes().startswith(PNG)

    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>")
    # self-contained: every image is embedded, nothing is fetched
    images = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([^"]+)">', html)
    assert [alt for alt, _ in images] == [
        "one-queue wait",
        "one-queue utilisation",
        "one-queue queue",
        "one-queue share",
    ]
    assert all(base64.b64decode(data).startswith(PNG) for _, data in images)
    assert not re.search(r'(src|href)="(?!data:)', html)
    assert "<script" not in html
    # the tables carry the numbers and the never-admitted reason
    assert "<td>cq</td><td>10</td><td>9</td><td>1</td><td>0</td><td>5.0</td><td>18.0</td>" in html
    assert "ExceedsMaxQuota" in html
    assert "team/t08" in html


def test_comparison_report_has_a_column_and_a_section_per_configuration(
    objects_file: Path, ten_task_trace: Path, tmp_path: Path
) -> None:
    bigger = tmp_path / "bigger.yaml"
    bigger.write_text(objects_file.read_text().replace("nominalQuota: 4", "nominalQuota: 8"))
    docs, page = _run([objects_file, bigger], ten_task_trace, tmp_path / "report")
    assert [d["configuration"] for d in docs] == ["one-queue", "bigger"]
    assert docs[1]["neverAdmitted"] == 0
    assert docs[1]["waitSeconds"]["max"] < docs[0]["waitSeconds"]["max"]
    assert isinstance(json.loads((tmp_path / "report" / "summary.json").read_text()), list)
    html = page.read_text()
    assert 'id="one-queue"' in html
    assert 'id="bigger"' in html
    assert 'alt="wait per configuration"' in html
    header = text_table(docs).splitlines()[0].split()
    assert header == ["configuration", "one-queue", "bigger"]


def test_same_output_twice(objects_file: Path, ten_task_trace: Path, tmp_path: Path) -> None:
    docs1, page1 = _run([objects_file], ten_task_trace, tmp_path / "a")
    docs2, page2 = _run([objects_file], ten_task_trace, tmp_path / "b")
    assert dump_json(docs1) == dump_json(docs2)
    assert page1.read_bytes() == page2.read_bytes()
    for name in ("workloads.csv", "utilisation.csv", "wait.png", "share.png"):
        assert (tmp_path / "a" / "one-queue" / name).read_bytes() == (tmp_path / "b" / "one-queue" / name).read_bytes()
